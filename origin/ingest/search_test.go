package ingest_test

import (
	"context"
	"strings"
	"testing"

	"github.com/listgate/listgate/origin/ingest"
	"github.com/listgate/listgate/pkg/reaxml/reaxmlgen"
)

// searchExpr is the text-search vector a listing's text makes (what the
// search column held as a generated column).
const searchExpr = `setweight(to_tsvector('simple', coalesce(search_address, '')), 'A') ||
	setweight(to_tsvector('simple', coalesce(headline, '')), 'B') ||
	setweight(to_tsvector('english', coalesce(headline, '')), 'B') ||
	setweight(to_tsvector('english', coalesce(category, '')), 'C') ||
	setweight(to_tsvector('english', coalesce(description, '')), 'D')`

// The search vector always matches the listing's text — after first
// imports, update feeds, the edge cases and direct writes of each text
// column — yet an update that leaves the text alone does not compute it
// again (the trigger function is not called: pg_stat_user_functions).
func TestSearchVectorFollowsTextOnly(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	var first, update strings.Builder
	if err := reaxmlgen.Generate(&first, reaxmlgen.Options{Seed: 21, Listings: 200}); err != nil {
		t.Fatal(err)
	}
	if err := reaxmlgen.Generate(&update, reaxmlgen.Options{Seed: 21, Listings: 200, Revision: 1, Changed: 0.3}); err != nil {
		t.Fatal(err)
	}
	for _, feed := range []string{first.String(), update.String(), edgeCases} {
		if _, err := f.im.Import(ctx, f.site, strings.NewReader(feed), ingest.Options{}); err != nil {
			t.Fatal(err)
		}
	}
	stale := func(when string) {
		t.Helper()
		var n int
		f.scalar(t, &n, `SELECT count(*) FROM listings WHERE site_id = $1 AND search IS DISTINCT FROM (`+searchExpr+`)`)
		if n != 0 {
			t.Fatalf("%s: %d listings' search vectors do not match their text", when, n)
		}
	}
	stale("after the imports")

	conn, err := f.db.Pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	exec := func(sql string, args ...any) {
		t.Helper()
		if _, err := conn.Exec(ctx, sql, args...); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	calls := func() int64 {
		t.Helper()
		exec(`SELECT pg_stat_force_next_flush()`)
		var n int64
		if err := conn.QueryRow(ctx, `SELECT coalesce((SELECT calls FROM pg_stat_user_functions WHERE funcname = 'listings_search'), 0)`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		exec(`SELECT pg_stat_clear_snapshot()`)
		return n
	}
	exec(`SET track_functions = 'pl'`)
	for _, col := range []string{"headline", "description", "category", "search_address"} {
		before := calls()
		exec(`UPDATE listings SET `+col+` = coalesce(`+col+`, '') || ' zanzibar' WHERE site_id = $1 AND ref = (SELECT min(ref) FROM listings WHERE site_id = $1)`, f.site)
		if got := calls() - before; got != 1 {
			t.Errorf("changing %s computed the vector %d times, want 1", col, got)
		}
		stale("after changing " + col)
	}
	var rows int64
	f.scalar(t, &rows, `SELECT count(*) FROM listings WHERE site_id = $1`)
	before := calls()
	exec(`UPDATE listings SET price = coalesce(price, 0) + 1, status = status, headline = headline WHERE site_id = $1`, f.site)
	if got := calls() - before; got != 0 {
		t.Errorf("an update of %d listings' prices computed the vector %d times, want none", rows, got)
	}
	exec(`UPDATE listings SET search = NULL WHERE site_id = $1`, f.site)
	stale("after a write of the vector itself")
}
