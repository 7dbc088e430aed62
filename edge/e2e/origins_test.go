package e2e

import (
	"bufio"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
)

// metric reads one sample of a process's /metrics (0 when absent): an
// edge's on its admin listener, the origin's on its port.
func metric(tb testing.TB, p *proc, sample string) float64 {
	tb.Helper()
	resp, err := client.Get(p.metricsURL())
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	total := 0.0
	name, labels, _ := strings.Cut(sample, "{")
	for sc.Scan() {
		line := sc.Text()
		i := strings.LastIndexByte(line, ' ')
		if i < 0 || !strings.HasPrefix(line, name+"{") && line[:i] != name {
			continue
		}
		if labels != "" && !strings.Contains(line[:i], strings.TrimSuffix(labels, "}")) {
			continue
		}
		v, _ := strconv.ParseFloat(line[i+1:], 64)
		total += v
	}
	return total
}

// awaitMetric waits until sample on p equals want (bounded).
func awaitMetric(tb testing.TB, p *proc, sample string, want float64) {
	tb.Helper()
	for deadline := time.Now().Add(10 * time.Second); metric(tb, p, sample) != want; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			tb.Fatalf("%s on %s: %v after 10 s, want %v", sample, p.name, metric(tb, p, sample), want)
		}
	}
}

// An edge with two origins balances across them, and a deploy of one
// (SIGTERM, start again on its address) costs no request — writes without
// an Idempotency-Key included: the edge ejects it when it refuses
// connections and takes it back once its /readyz answers.
func TestTwoOrigins(t *testing.T) {
	s := newSystem(t)
	a, b := s.origin, s.startOrigin()
	edge := s.startEdge(edgeOpts{origins: a.url() + "," + b.url()})
	site := s.site("enterprise")
	key := s.key(site, "listings:read,leads:write")
	s.importFeed(site, feed("2024-02-01-10:00:00", "First headline"))
	const served = `listgate_origin_http_requests_total{route="/v1/`
	n := 0
	requests := func(round string) {
		t.Helper()
		for i := 0; i < 10; i++ {
			n++
			lead := fmt.Sprintf(`{"name":"Sam","email":"sam-%d@example.com","message":"Is it still available?"}`, n)
			r := do(t, "POST", edge.url()+"/v1/leads", []byte(lead), map[string]string{"Authorization": "Bearer " + key.Key,
				"Content-Type": "application/json"})
			if r.status != 201 {
				t.Errorf("%s: lead %d: %d %s", round, n, r.status, r.body)
			}
			// A cache miss each: a page size not asked before.
			r = do(t, "GET", fmt.Sprintf("%s/v1/sites/%s/listings?per_page=%d", edge.url(), site, n), nil, bearer(key.Key))
			if r.status != 200 {
				t.Errorf("%s: read %d: %d %s", round, n, r.status, r.body)
			}
		}
	}
	requests("both up")
	if metric(t, a, served) < 5 || metric(t, b, served) < 5 {
		t.Fatalf("not balanced: %v and %v requests", metric(t, a, served), metric(t, b, served))
	}
	up := `listgate_edge_origin_up{origin="` + b.url() + `"}`
	addr := b.addr
	b.stop()
	requests("one origin stopped")
	if metric(t, edge, up) != 0 {
		t.Errorf("the stopped origin was not ejected")
	}
	b = s.startOriginAt(addr)
	awaitMetric(t, edge, up, 1)
	requests("back")
	if metric(t, b, served) == 0 {
		t.Error("the restarted origin got no request")
	}
	if strings.Contains(edge.Logs(), "origin unreachable") {
		t.Errorf("a request failed:\n%s", edge.Logs())
	}
}

// An edge starts when one of its origins is down, and takes it once it
// answers; it does not when none can be reached.
func TestEdgeStartsWithOneOriginDown(t *testing.T) {
	s := newSystem(t)
	down := "http://127.0.0.1:1"
	edge := s.startEdge(edgeOpts{origins: down + "," + s.origin.url()})
	if !strings.Contains(edge.Logs(), "origin unreachable at start-up") {
		t.Errorf("no warning about the origin down:\n%s", edge.Logs())
	}
	site := s.site("enterprise")
	key := s.key(site, "agents:read")
	for i := 0; i < 4; i++ {
		if r := do(t, "GET", edge.url()+"/v1/sites/"+site+"/agents", nil, bearer(key.Key)); r.status != 200 {
			t.Errorf("read %d: %d %s", i, r.status, r.body)
		}
	}
}
