package e2e

import (
	"io"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/VictoriaMetrics/metricsql"
	dto "github.com/prometheus/client_model/go"
	"go.yaml.in/yaml/v3"

	"github.com/listgate/listgate/pkg/devdb/devdbtest"
	"github.com/listgate/listgate/pkg/promtext/promtexttest"
)

// families scrapes url (a /metrics) and checks it with Prometheus' parser
// and the naming rules (promtexttest.Families).
func families(tb testing.TB, url string) map[string]*dto.MetricFamily {
	tb.Helper()
	resp, err := client.Get(url)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		tb.Fatalf("GET %s: %d %v", url, resp.StatusCode, err)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/plain; version=0.0.4; charset=utf-8" {
		tb.Errorf("GET %s: Content-Type %q", url, ct)
	}
	mfs, err := promtexttest.Families(strings.NewReader(string(body)))
	if err != nil {
		tb.Fatalf("GET %s: %v", url, err)
	}
	return mfs
}

// Both programs' whole /metrics, after some traffic, passes Prometheus'
// text parser with a TYPE and a HELP on every family, each family once,
// Listgate's own in the listgate_edge_/listgate_origin_ namespaces (counters
// ending in _total); the edge serves it on its admin listener alone, its
// public port answers 404 there and for the profiles; docs/operations.md
// lists every family with its type, and every series the alert rules use
// exists.
func TestMetricsExposition(t *testing.T) {
	redis := devdbtest.NewRedis(t)
	s := newSystem(t)
	edge := s.startEdge(edgeOpts{redisURL: redis.URL})
	site := s.site("starter")
	k := s.key(site, "listings:read,stats:read")
	for range 2 { // a miss, then a hit
		if r := do(t, "GET", edge.url()+"/v1/sites/"+site+"/listings", nil, bearer(k.Key)); r.status != 200 {
			t.Fatalf("read: %d %s", r.status, r.body)
		}
	}
	do(t, "GET", edge.url()+"/v1/sites/"+site+"/listings", nil, bearer("lgk_nope"))

	for _, path := range []string{"/metrics", "/debug/pprof/", "/debug/pprof/heap", "/debug/pprof/cmdline"} {
		if r := do(t, "GET", edge.url()+path, nil, nil); r.status != 404 || r.code() != "NOT_FOUND" {
			t.Errorf("public port GET %s: %d %s", path, r.status, r.body)
		}
	}
	if edge.AdminURL() == "" {
		t.Fatal("the edge logged no admin_addr")
	}
	for _, path := range []string{"/debug/pprof/", "/debug/pprof/cmdline"} {
		resp, err := client.Get(edge.AdminURL() + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("admin GET %s: %d", path, resp.StatusCode)
		}
	}

	edgeFams := families(t, edge.metricsURL())
	originFams := families(t, s.origin.metricsURL())
	for prog, fams := range map[string]map[string]*dto.MetricFamily{"edge": edgeFams, "origin": originFams} {
		for name := range fams {
			if strings.HasPrefix(name, "listgate_") && !strings.HasPrefix(name, "listgate_"+prog+"_") {
				t.Errorf("the %s exposes %s", prog, name)
			}
		}
	}
	for _, want := range []string{"listgate_edge_requests_total", "listgate_edge_request_duration_seconds",
		"listgate_edge_ratelimit_decisions_total", "listgate_edge_ratelimit_fallback_active",
		"listgate_edge_ratelimit_redis_duration_seconds", "listgate_edge_key_cache_lookups_total",
		"listgate_edge_response_cache_lookups_total", "listgate_edge_eventstream_connected", "listgate_edge_origin_up",
		"go_goroutines", "process_resident_memory_bytes"} {
		if edgeFams[want] == nil {
			t.Errorf("the edge lacks %s", want)
		}
	}
	for _, want := range []string{"listgate_origin_http_requests_total", "listgate_origin_http_request_duration_seconds",
		"listgate_origin_db_pool_acquired_connections", "listgate_origin_event_streams", "listgate_origin_leads_total",
		"listgate_origin_deliveries_total", "listgate_origin_deliveries_due", "listgate_origin_delivery_oldest_due_seconds",
		"go_goroutines"} {
		if originFams[want] == nil {
			t.Errorf("the origin lacks %s", want)
		}
	}
	if c := edgeFams["listgate_edge_response_cache_lookups_total"]; c != nil {
		for _, m := range c.Metric {
			if m.GetLabel()[0].GetValue() == "hit" && m.GetCounter().GetValue() < 1 {
				t.Errorf("no response cache hit counted: %v", c)
			}
		}
	}

	all := map[string]*dto.MetricFamily{}
	for _, fams := range []map[string]*dto.MetricFamily{edgeFams, originFams} {
		for name, mf := range fams {
			all[name] = mf
		}
	}
	checkDocumented(t, all)
	checkAlertRules(t, promtexttest.SeriesNames(all))
}

// docRow is a row of docs/operations.md's metric tables:
// | `name` | type | labels | meaning |.
var docRow = regexp.MustCompile("(?m)^\\| `(listgate_[a-z_]+)` \\| (counter|gauge|histogram) \\|")

// checkDocumented holds docs/operations.md to the families exposed: each
// listgate_ family is there with its type, and nothing else is.
func checkDocumented(tb testing.TB, fams map[string]*dto.MetricFamily) {
	tb.Helper()
	doc, err := os.ReadFile("../../docs/operations.md")
	if err != nil {
		tb.Fatal(err)
	}
	documented := map[string]string{}
	for _, m := range docRow.FindAllStringSubmatch(string(doc), -1) {
		documented[m[1]] = m[2]
	}
	var missing []string
	for name, mf := range fams {
		if !strings.HasPrefix(name, "listgate_") {
			continue
		}
		typ, ok := documented[name]
		if !ok {
			missing = append(missing, name)
		} else if typ != strings.ToLower(mf.GetType().String()) {
			tb.Errorf("docs/operations.md says %s is a %s; it is a %s", name, typ, strings.ToLower(mf.GetType().String()))
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		tb.Errorf("docs/operations.md does not list %s", strings.Join(missing, ", "))
	}
	for name := range documented {
		if fams[name] == nil {
			tb.Errorf("docs/operations.md lists %s, which neither program exposes", name)
		}
	}
}

// alertRules is the shape of a Prometheus rules file.
type alertRules struct {
	Groups []struct {
		Name  string
		Rules []struct {
			Alert       string
			Expr        string
			For         string
			Labels      map[string]string
			Annotations map[string]string
		}
	}
}

// checkAlertRules reads configs/prometheus-alerts.yml: every rule is an
// alert with a severity, a summary and a description, its expression
// parses, and every series it selects is one the programs expose.
func checkAlertRules(tb testing.TB, series map[string]bool) {
	tb.Helper()
	raw, err := os.ReadFile("../../configs/prometheus-alerts.yml")
	if err != nil {
		tb.Fatal(err)
	}
	var rules alertRules
	dec := yaml.NewDecoder(strings.NewReader(string(raw)))
	dec.KnownFields(true)
	if err := dec.Decode(&rules); err != nil {
		tb.Fatalf("configs/prometheus-alerts.yml: %v", err)
	}
	n := 0
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			n++
			if r.Alert == "" || r.Labels["severity"] == "" || r.Annotations["summary"] == "" || r.Annotations["description"] == "" {
				tb.Errorf("group %s: rule %q lacks alert, severity, summary or description", g.Name, r.Alert)
			}
			expr, err := metricsql.Parse(r.Expr)
			if err != nil {
				tb.Errorf("alert %s: %v", r.Alert, err)
				continue
			}
			selected := 0
			metricsql.VisitAll(expr, func(e metricsql.Expr) {
				me, ok := e.(*metricsql.MetricExpr)
				if !ok {
					return
				}
				for _, lfs := range me.LabelFilterss {
					for _, lf := range lfs {
						if lf.Label == "__name__" {
							selected++
							if !series[lf.Value] {
								tb.Errorf("alert %s selects %s, which neither program exposes", r.Alert, lf.Value)
							}
						}
					}
				}
			})
			if selected == 0 {
				tb.Errorf("alert %s selects no series", r.Alert)
			}
		}
	}
	if n == 0 {
		tb.Error("configs/prometheus-alerts.yml has no rules")
	}
}
