package e2e

import (
	"strings"
	"testing"
)

// A deploy restarts the origin (SIGTERM, start again at the same address):
// the edge's pooled connections to the old process are closed, and the
// next requests, writes without an Idempotency-Key among them, are served
// by the new one: none fails.
func TestOriginRestartCostsNoRequest(t *testing.T) {
	s := newSystem(t)
	edge := s.startEdge(edgeOpts{})
	site := s.site("enterprise")
	key := s.key(site, "listings:read,leads:write")
	s.importFeed(site, feed("2024-02-01-10:00:00", "First headline"))
	requests := func(round string) {
		t.Helper()
		lead := `{"name":"Sam","email":"sam-` + round + `@example.com","message":"Is it still available?"}`
		for name, r := range map[string]response{
			"pairing start": do(t, "POST", edge.url()+"/v1/pairing/device", []byte("client_name=WordPress"),
				map[string]string{"Content-Type": "application/x-www-form-urlencoded"}),
			"lead":          do(t, "POST", edge.url()+"/v1/leads", []byte(lead), map[string]string{"Authorization": "Bearer " + key.Key, "Content-Type": "application/json"}),
			"uncached read": do(t, "GET", edge.url()+"/v1/sites/"+site+"/listings?sort=price&per_page="+map[string]string{"before": "5", "after": "6"}[round], nil, bearer(key.Key)),
		} {
			if r.status >= 500 {
				t.Errorf("%s, %s the restart: %d %s", name, round, r.status, r.body)
			}
		}
	}
	requests("before")
	addr := s.origin.addr
	s.origin.stop()
	s.origin = start(t, "origin", bins.Origin, []string{"LISTGATE_DATABASE_URL=" + s.dbURL,
		"LISTGATE_INTERNAL_TOKEN=" + token, "LISTGATE_ORIGIN_ADDR=" + addr}, "serve")
	requests("after")
	if strings.Contains(edge.Logs(), "origin unreachable") {
		t.Errorf("the edge failed a request on the restart:\n%s", edge.Logs())
	}
}
