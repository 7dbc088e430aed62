package listings

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/listgate/listgate/pkg/model"
	"github.com/listgate/listgate/pkg/reaxml/reaxmlgen"
)

// GET /fields and /stats/summary read the site's counts of listings
// (listing_facets, kept by triggers on listings), not its listings. They
// answer what counting the listings answers, through first imports, update
// feeds, changes and removals made by hand, writers at once, and beside
// another site; a site deleted takes its counts with it.
func TestFacetsMatchTheListings(t *testing.T) {
	e := newEnv(t)
	other := newEnvOn(t, e.db)
	ctx := context.Background()
	check := func(when string) {
		t.Helper()
		for _, s := range []*testEnv{e, other} {
			e.checkFacets(t, when, s)
		}
	}
	check("empty")
	feed := func(o reaxmlgen.Options) string {
		var b strings.Builder
		if err := reaxmlgen.Generate(&b, o); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	e.mustImport(t, feed(reaxmlgen.Options{Seed: 31, Listings: 400}))
	other.mustImport(t, feed(reaxmlgen.Options{Seed: 32, Listings: 150}))
	check("first imports")
	// An import moves the counts its connections added into the site's.
	var own int
	if err := e.db.Pool.QueryRow(ctx, `SELECT count(*) FROM listing_facets WHERE site_id = $1 AND shard <> 0`, e.site).Scan(&own); err != nil || own != 0 {
		t.Errorf("after an import, %d rows of its connections' own (%v)", own, err)
	}
	e.mustImport(t, feed(reaxmlgen.Options{Seed: 31, Listings: 400, Revision: 1, Changed: 0.4}))
	check("an update feed")
	// By hand: statuses, prices shown and hidden, values cleared, a
	// listing removed, a featured flag (no counted value changes).
	for _, sql := range []string{
		`UPDATE listings SET status = 'sold' WHERE site_id = $1 AND ref % 7 = 0 AND status = 'current'`,
		`UPDATE listings SET price_shown = NOT price_shown WHERE site_id = $1 AND ref % 5 = 0`,
		`UPDATE listings SET suburb = NULL, bedrooms = NULL WHERE site_id = $1 AND ref % 11 = 0`,
		`UPDATE listings SET price = price + 1000 WHERE site_id = $1 AND ref % 3 = 0`,
		`UPDATE listings SET featured = true WHERE site_id = $1 AND ref % 4 = 0`,
		`DELETE FROM listings l WHERE site_id = $1 AND ref % 13 = 0 AND NOT EXISTS (SELECT 1 FROM leads WHERE listing_ref = l.ref)`,
	} {
		if _, err := e.db.Pool.Exec(ctx, sql, e.site); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	check("changes by hand")
	// Writers at once, each in transactions of several statements on
	// listings of its own, as an import's two writers are: they change the
	// same counts (statuses, suburbs) in different orders, and neither
	// waits for the other nor deadlocks; the counts add up.
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 10 {
				err := pgx.BeginFunc(ctx, e.db.Pool, func(tx pgx.Tx) error {
					if _, err := tx.Exec(ctx, `UPDATE listings SET status = CASE status WHEN 'current' THEN 'leased' ELSE 'current' END
						WHERE site_id = $1 AND ref % 4 = $2 AND ref % 10 = $3`, e.site, w, i); err != nil {
						return err
					}
					_, err := tx.Exec(ctx, `UPDATE listings SET suburb = 'Writer ' || $2::int || (ref % 3)
						WHERE site_id = $1 AND ref % 4 = $2 AND ref % 9 = $3`, e.site, w, i%9)
					return err
				})
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("a writer: %v", err)
	}
	check("writers at once")
	// Two transactions that each change two counts the other changes, in
	// the opposite order (suburb A then B, B then A): with the counts in
	// rows both add to, the second would wait for the first and the first
	// for the second, a deadlock.
	var refs []int64
	rows, _ := e.db.Pool.Query(ctx, `SELECT ref FROM listings WHERE site_id = $1 AND status = 'current' ORDER BY ref LIMIT 4`, e.site)
	refs, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil || len(refs) != 4 {
		t.Fatalf("listings: %v %v", refs, err)
	}
	tx1, err := e.db.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx1.Rollback(ctx)
	tx2, err := e.db.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx2.Rollback(ctx)
	suburb := func(tx pgx.Tx, ref int64, to string) error {
		_, err := tx.Exec(ctx, `UPDATE listings SET suburb = $3 WHERE site_id = $1 AND ref = $2`, e.site, ref, to)
		return err
	}
	if err := suburb(tx1, refs[0], "Suburb A"); err != nil {
		t.Fatal(err)
	}
	if err := suburb(tx2, refs[1], "Suburb B"); err != nil {
		t.Fatal(err)
	}
	third := make(chan error, 1)
	go func() {
		err := suburb(tx1, refs[2], "Suburb B")
		if err != nil {
			tx1.Rollback(ctx) // a deadlock's victim lets the other go on
		}
		third <- err
	}()
	if err := suburb(tx2, refs[3], "Suburb A"); err != nil {
		t.Fatalf("the second transaction: %v", err)
	}
	if err := tx2.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-third; err != nil {
		t.Fatalf("the first transaction: %v", err)
	}
	if err := tx1.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	check("two transactions in opposite orders")
	if _, err := e.db.Pool.Exec(ctx, `SELECT listing_facets_compact($1)`, e.site); err != nil {
		t.Fatal(err)
	}
	check("compacted")
	var zero int
	if err := e.db.Pool.QueryRow(ctx, `SELECT count(*) FROM listing_facets WHERE site_id = $1 AND shard = 0 AND n = 0`, e.site).Scan(&zero); err != nil || zero != 0 {
		t.Errorf("after compaction, %d counts of 0 kept (%v)", zero, err)
	}
	if _, err := e.db.Pool.Exec(ctx, `DELETE FROM sites WHERE id = $1`, other.site); err != nil {
		t.Fatalf("deleting a site with listings: %v", err)
	}
	var left int
	if err := e.db.Pool.QueryRow(ctx, `SELECT count(*) FROM listing_facets WHERE site_id = $1`, other.site).Scan(&left); err != nil || left != 0 {
		t.Errorf("a deleted site's counts: %d rows left (%v)", left, err)
	}
	e.checkFacets(t, "another site deleted", e)
	if _, err := e.db.Pool.Exec(ctx, `TRUNCATE listings CASCADE`); err != nil {
		t.Fatal(err)
	}
	e.checkFacets(t, "listings truncated", e)
}

// checkFacets compares s's fields and summary with what counting its
// listings gives: the queries the routes ran before listing_facets.
func (e *testEnv) checkFacets(t *testing.T, when string, s *testEnv) {
	t.Helper()
	ctx := context.Background()
	// Fields: status counts, the values of current listings, the ranges.
	want := map[string]map[string]int{"status": {}}
	rows, _ := e.db.Pool.Query(ctx, `SELECT status, count(*) FROM listings WHERE site_id = $1 AND status <> 'deleted' GROUP BY status`, s.site)
	if err := collectCounts(rows, want, "status"); err != nil {
		t.Fatal(err)
	}
	rows, _ = e.db.Pool.Query(ctx, `SELECT CASE WHEN GROUPING(type) = 0 THEN 'type' WHEN GROUPING(category) = 0 THEN 'category'
			WHEN GROUPING(suburb) = 0 THEN 'suburb' WHEN GROUPING(state) = 0 THEN 'state' ELSE 'postcode' END,
			coalesce(type, category, suburb, state, postcode), count(*)
		FROM listings WHERE site_id = $1 AND status = 'current'
		GROUP BY GROUPING SETS ((type), (category), (suburb), (state), (postcode))`, s.site)
	var field string
	var value *string
	var n int
	if _, err := pgx.ForEachRow(rows, []any{&field, &value, &n}, func() error {
		if value != nil && *value != "" {
			if want[field] == nil {
				want[field] = map[string]int{}
			}
			want[field][*value] += n
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	ranges := map[string][2]*float64{}
	var r [8]*float64
	if err := e.db.Pool.QueryRow(ctx, `SELECT min(price) FILTER (WHERE price_shown), max(price) FILTER (WHERE price_shown),
			min(bedrooms), max(bedrooms), min(bathrooms), max(bathrooms), min(car_spaces), max(car_spaces)
		FROM listings WHERE site_id = $1 AND status = 'current'`, s.site).Scan(&r[0], &r[1], &r[2], &r[3], &r[4], &r[5], &r[6], &r[7]); err != nil {
		t.Fatal(err)
	}
	for i, name := range []string{"price", "bedrooms", "bathrooms", "car_spaces"} {
		ranges[name] = [2]*float64{r[2*i], r[2*i+1]}
	}
	var fields model.Collection[model.Field]
	s.get(t, "/v1/sites/{site}/fields?per_page=100", &fields)
	for _, f := range fields.Data {
		if w, ok := ranges[f.Name]; ok {
			if fmt.Sprint(orNil(f.Min), orNil(f.Max)) != fmt.Sprint(orNil(w[0]), orNil(w[1])) {
				t.Errorf("%s: %s range %v–%v, want %v–%v", when, f.Name, orNil(f.Min), orNil(f.Max), orNil(w[0]), orNil(w[1]))
			}
		}
		if _, counted := want[f.Name]; !counted && f.Name != "type" && f.Name != "category" && f.Name != "suburb" &&
			f.Name != "state" && f.Name != "postcode" {
			continue
		}
		got := map[string]int{}
		for _, v := range f.Values {
			if v.Count != nil && *v.Count > 0 {
				got[v.Value] = *v.Count
			}
		}
		w := want[f.Name]
		if w == nil {
			w = map[string]int{}
		}
		if !reflect.DeepEqual(got, w) {
			t.Errorf("%s: %s counts\n got %v\nwant %v", when, f.Name, got, w)
		}
	}
	// Summary: listings by status and by type, and the sale prices.
	wantStats := model.ListingStats{ByStatus: map[string]int{}, ByType: map[string]int{}}
	rows, _ = e.db.Pool.Query(ctx, `SELECT status, type, count(*) FROM listings WHERE site_id = $1 AND status <> 'deleted'
		GROUP BY status, type`, s.site)
	var status, typ string
	if _, err := pgx.ForEachRow(rows, []any{&status, &typ, &n}, func() error {
		wantStats.Total += n
		wantStats.ByStatus[status] += n
		wantStats.ByType[typ] += n
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	p := &wantStats.Price
	if err := e.db.Pool.QueryRow(ctx, `SELECT count(price), min(price), max(price), percentile_cont(0.5) WITHIN GROUP (ORDER BY price)
		FROM listings WHERE site_id = $1 AND status = 'current' AND type = ANY($2) AND price_shown AND price IS NOT NULL`,
		s.site, saleTypes).Scan(&p.Count, &p.Min, &p.Max, &p.Median); err != nil {
		t.Fatal(err)
	}
	var summary model.StatsSummary
	s.get(t, "/v1/sites/{site}/stats/summary", &summary)
	got := summary.Listings
	for k, v := range got.ByStatus {
		if v == 0 {
			delete(got.ByStatus, k)
		}
	}
	for k, v := range got.ByType {
		if v == 0 {
			delete(got.ByType, k)
		}
	}
	if got.Total != wantStats.Total || !reflect.DeepEqual(got.ByStatus, wantStats.ByStatus) || !reflect.DeepEqual(got.ByType, wantStats.ByType) {
		t.Errorf("%s: summary counts\n got %d %v %v\nwant %d %v %v", when, got.Total, got.ByStatus, got.ByType,
			wantStats.Total, wantStats.ByStatus, wantStats.ByType)
	}
	if gp, wp := got.Price, wantStats.Price; gp.Count != wp.Count || fmt.Sprint(orNil(gp.Min), orNil(gp.Max), orNil(gp.Median)) !=
		fmt.Sprint(orNil(wp.Min), orNil(wp.Max), orNil(wp.Median)) {
		t.Errorf("%s: sale prices %d %v %v %v, want %d %v %v %v", when, gp.Count, orNil(gp.Min), orNil(gp.Max), orNil(gp.Median),
			wp.Count, orNil(wp.Min), orNil(wp.Max), orNil(wp.Median))
	}
}

func orNil(f *float64) any {
	if f == nil {
		return nil
	}
	return *f
}
