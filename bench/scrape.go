package main

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/listgate/listgate/pkg/internalapi"
)

// Routes as the origin's request counter labels them (the ServeMux
// pattern; listgate_origin_http_requests_total{route=…}).
const (
	routeIntrospect = internalapi.PathIntrospect
	routeListings   = "/v1/sites/{site}/listings"
)

// metricsSnapshot is a Prometheus text exposition, sample line → value.
type metricsSnapshot map[string]float64

// scrapeMetrics reads a process's /metrics: baseURL is an edge's admin listener
// (AdminURL) or an origin's own URL (it answers loopback).
func scrapeMetrics(ctx context.Context, baseURL string) (metricsSnapshot, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", baseURL+"/metrics", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return nil, fmt.Errorf("GET %s/metrics: %d", baseURL, resp.StatusCode)
	}
	m := metricsSnapshot{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err == nil {
			m[line[:i]] = v
		}
	}
	return m, sc.Err()
}

// sum adds every sample of metric whose labels contain all of labels
// (each `name="value"`).
func (m metricsSnapshot) sum(metric string, labels ...string) float64 {
	total := 0.0
	for k, v := range m {
		name, rest, _ := strings.Cut(k, "{")
		if name != metric {
			continue
		}
		match := true
		for _, l := range labels {
			if !strings.Contains(rest, l) {
				match = false
				break
			}
		}
		if match {
			total += v
		}
	}
	return total
}

// originRequests is how many requests the origin counted on a route.
func (m metricsSnapshot) originRequests(route string) float64 {
	return m.sum("listgate_origin_http_requests_total", fmt.Sprintf("route=%q", route))
}

// createKey makes a key for the bench system's demo site with the origin's
// CLI (`origin keys create`) and returns its id and secret.
func createKey(ctx context.Context, sys *benchSystem, name, scopes string) (id, key string, err error) {
	var k struct{ ID, Key string }
	err = cli(ctx, sys.originBin, sys.pg.DatabaseURL("bench"), &k,
		"keys", "create", "--site", sys.siteID, "--name", name, "--scopes", scopes, "--json")
	if err == nil && k.Key == "" {
		err = fmt.Errorf("origin keys create printed no key")
	}
	return k.ID, k.Key, err
}

// originIdentity is what an edge sends the origin with a request of the
// demo site's read key (wrk -H lines): the internal token and the key's
// identity.
func originIdentity(sys *benchSystem) []string {
	return []string{internalapi.HeaderInternalToken + ": " + benchToken, internalapi.HeaderSite + ": " + sys.siteID,
		internalapi.HeaderKeyID + ": bench", internalapi.HeaderScopes + ": listings:read"}
}
