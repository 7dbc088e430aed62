package e2e

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
)

// The edge counts each site's requests per minute and reports them to the
// origin; a draining edge reports what it has left.
func TestUsageReachesTheOrigin(t *testing.T) {
	s := newSystem(t)
	edge := s.startEdge(edgeOpts{})
	site := s.site("enterprise")
	k := s.key(site, "listings:read")
	for i := 0; i < 5; i++ {
		if r := do(t, "GET", edge.url()+"/v1/sites/"+site+"/listings", nil, bearer(k.Key)); r.status != 200 {
			t.Fatalf("%d %s", r.status, r.body)
		}
	}
	do(t, "GET", edge.url()+"/v1/sites/"+site+"/listings", nil, bearer(validUnknown(t))) // not counted: no key
	edge.stop()
	conn, err := pgx.Connect(context.Background(), s.dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var n int64
	if err := conn.QueryRow(context.Background(), `SELECT coalesce(sum(requests), 0) FROM usage_minutes WHERE site_id = $1`, site).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 5 {
		t.Errorf("origin has %d requests for the site, want 5", n)
	}
}
