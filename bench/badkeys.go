package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	json "github.com/goccy/go-json"

	"github.com/listgate/listgate/pkg/apikey"
	"github.com/listgate/listgate/pkg/config"
)

func init() {
	scenarios["bad-keys"] = benchBadKeys
	plans["bad-keys"] = func(q bool) time.Duration {
		d := 5 * time.Second
		if q {
			d = 2 * time.Second
		}
		return systemSetup + 3*d
	}
}

// keysScript sends each request with the next of a list of credentials
// (header name and value), round robin. The requests are built once.
const keysScript = `
local creds = { %s }
local reqs = nil
local i = 0
function request()
  if reqs == nil then
    reqs = {}
    for j, c in ipairs(creds) do
      reqs[j] = wrk.format("GET", "%s", { [c[1]] = c[2] })
    end
  end
  i = i + 1
  return reqs[(i %% #reqs) + 1]
end
`

// benchBadKeys measures how fast the edge refuses bad keys, with wrk, and
// how many introspections the origin receives meanwhile (its /metrics):
// malformed keys are refused offline (checksum), so none; a well-formed
// unknown key is asked about once and then refused from the negative cache
// until that entry expires, so about one per distinct key per negative-TTL
// window. Far more than that fails the scenario: the cache is not working,
// and a flood of made-up keys would reach Postgres.
func benchBadKeys(args []string) error {
	fs := flag.NewFlagSet("bad-keys", flag.ContinueOnError)
	dur := fs.Duration("duration", def(5*time.Second, 2*time.Second), "duration of each wrk run")
	conns := fs.Int("connections", 64, "wrk connections")
	many := fs.Int("keys", def(1000, 100), "distinct unknown keys in the many-keys run")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ctx := context.Background()
	sys, err := startSystem(ctx)
	if err != nil {
		return err
	}
	defer sys.close()
	path := "/v1/sites/" + sys.siteID + "/listings"
	negTTL := config.DefaultEdge().NegativeKeyTTL

	// Malformed: each fails the offline check for a different reason.
	good := mustUnknownKey()
	last := good[len(good)-1:]
	flipped := "A"
	if last == "A" {
		flipped = "B"
	}
	malformed := [][2]string{
		{"Authorization", "Bearer lgk_not-a-key"},                                         // too short
		{"Authorization", "Bearer " + good[:len(good)-1] + flipped},                       // checksum wrong
		{"Authorization", "Bearer ghp_" + good[len(apikey.Prefix):]},                      // prefix wrong
		{"X-API-Key", apikey.Prefix + strings.Repeat("-", apikey.Len-len(apikey.Prefix))}, // not base62
	}
	unknownMany := make([][2]string, *many)
	for i := range unknownMany {
		unknownMany[i] = [2]string{"Authorization", "Bearer " + mustUnknownKey()}
	}
	runs := []struct {
		name  string
		creds [][2]string
		// introspections expected at most: none for malformed keys; for
		// unknown ones, one per key per negative-cache window begun.
		bound float64
	}{
		{"401-malformed", malformed, 0},
		{"401-unknown-1-key", [][2]string{{"Authorization", "Bearer " + mustUnknownKey()}}, 0},
		{fmt.Sprintf("401-unknown-%d-keys", *many), unknownMany, 0},
	}
	// A key is asked about when first seen and again each time its
	// negative entry expires: ceil(d / TTL) times, one more for slack.
	windows := math.Ceil(dur.Seconds()/negTTL.Seconds()) + 1
	for i := 1; i < len(runs); i++ {
		runs[i].bound = float64(len(runs[i].creds)) * windows
	}

	// Each kind of key is a 401 UNAUTHORIZED (probe with keys outside the
	// runs, so the runs start with nothing cached).
	for _, c := range append(malformed[:len(malformed):len(malformed)], [2]string{"Authorization", "Bearer " + mustUnknownKey()}) {
		if err := expect401(sys.edge.URL()+path, c); err != nil {
			return err
		}
	}

	fmt.Printf("bad-keys: wrk -t2 -c%d -d%v; negative cache TTL %v\n", *conns, *dur, negTTL)
	t := reportTable{Title: fmt.Sprintf("Rejections, `wrk -t2 -c%d -d%v` (keys round robin); the edge caches an unknown key as unknown for %v:", *conns, *dur, negTTL),
		Header: []string{"run", "distinct keys", "rejections/s", "p50", "p99", "requests", "introspections at the origin", "per key", "allowed at most"}}
	results := map[string]any{}
	var bars []chartBar
	for _, r := range runs {
		script := filepath.Join(sys.dir, r.name+".lua")
		var creds []string
		for _, c := range r.creds {
			creds = append(creds, fmt.Sprintf("{%q, %q}", c[0], c[1]))
		}
		if err := os.WriteFile(script, []byte(fmt.Sprintf(keysScript, strings.Join(creds, ", "), path)), 0o644); err != nil {
			return err
		}
		before, err := scrapeMetrics(ctx, sys.origin.URL())
		if err != nil {
			return err
		}
		edgeBefore, err := scrapeMetrics(ctx, sys.edge.AdminURL())
		if err != nil {
			return err
		}
		res, err := runWrkScript(ctx, r.name, sys.edge.URL(), *dur, *conns, nil, script)
		if err != nil {
			return err
		}
		after, err := scrapeMetrics(ctx, sys.origin.URL())
		if err != nil {
			return err
		}
		edgeAfter, err := scrapeMetrics(ctx, sys.edge.AdminURL())
		if err != nil {
			return err
		}
		intro := after.originRequests(routeIntrospect) - before.originRequests(routeIntrospect)
		offline := edgeAfter.sum("listgate_edge_key_offline_rejections_total") - edgeBefore.sum("listgate_edge_key_offline_rejections_total")
		fmt.Printf("bad-keys: %s, %.0f introspections at the origin, %.0f refused offline\n", res, intro, offline)
		results[r.name] = map[string]any{"wrk": res, "distinct_keys": len(r.creds), "introspections": intro,
			"offline_rejections": offline, "introspections_allowed": r.bound}
		t.Rows = append(t.Rows, []string{r.name, fmt.Sprint(len(r.creds)), fmtRate(res.RPS), fmtMs(res.Latency["p50"]),
			fmtMs(res.Latency["p99"]), fmtRate(float64(res.Requests)), fmt.Sprintf("%.0f", intro),
			fmt.Sprintf("%.2f", intro/float64(len(r.creds))), fmt.Sprintf("%.0f", r.bound)})
		bars = append(bars, chartBar{r.name, res.RPS})
		switch {
		case res.Non2xx != res.Requests:
			return fmt.Errorf("%s: %d of %d answers were not rejections", r.name, res.Requests-res.Non2xx, res.Requests)
		case intro > r.bound:
			return fmt.Errorf("%s: %.0f introspections for %d distinct keys in %v (at most %.0f expected): the negative cache is not holding",
				r.name, intro, len(r.creds), *dur, r.bound)
		}
		summarize("bad-keys", "%s: %s rejections/s, %.0f introspections for %d distinct keys (%.2f per key)",
			r.name, fmtRate(res.RPS), intro, len(r.creds), intro/float64(len(r.creds)))
	}
	addTable("bad-keys", t)
	addBars("bad-keys", barChart{Name: "throughput", Title: fmt.Sprintf("Bad keys refused by the edge, wrk -c%d", *conns),
		Unit: "requests/s", Ref: -1, Bars: bars})
	return writeResults("bad-keys", map[string]any{"connections": *conns, "duration_s": dur.Seconds(),
		"negative_key_ttl_s": negTTL.Seconds(), "runs": results})
}

// expect401 sends one request with the credential and wants the API's 401.
func expect401(url string, cred [2]string) error {
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set(cred[0], cred[1])
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var env struct{ Error struct{ Code string } }
	json.NewDecoder(resp.Body).Decode(&env)
	if resp.StatusCode != 401 || env.Error.Code != "UNAUTHORIZED" {
		return fmt.Errorf("%s %.12s…: %d %s, want 401 UNAUTHORIZED", cred[0], cred[1], resp.StatusCode, env.Error.Code)
	}
	return nil
}
