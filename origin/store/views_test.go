package store_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/listgate/listgate/origin/store"
	"github.com/listgate/listgate/origin/store/storetest"
	"github.com/listgate/listgate/pkg/apikey"
	"github.com/listgate/listgate/pkg/model"
)

// mustListingRef inserts a listing and returns its ref.
func mustListingRef(tb testing.TB, db *store.DB, siteID, uniqueID, status string) int64 {
	tb.Helper()
	var ref int64
	if err := db.Pool.QueryRow(context.Background(), `INSERT INTO listings (site_id, agency_id, unique_id, type, status, headline)
		VALUES ($1, 'AG', $2, 'residential', $3, 'Headline ' || $2) RETURNING ref`, siteID, uniqueID, status).Scan(&ref); err != nil {
		tb.Fatal(err)
	}
	return ref
}

func mustLeadAt(tb testing.TB, db *store.DB, siteID string, ref int64, at time.Time, status string) {
	tb.Helper()
	if _, err := db.Pool.Exec(context.Background(), `INSERT INTO leads (site_id, listing_ref, type, priority, status, name, email, created_at)
		VALUES ($1, $2, 'inquiry', 'warm', $3, 'N', 'n@example.com', $4)`, siteID, ref, status, at); err != nil {
		tb.Fatal(err)
	}
}

func batchID(n int) string { return fmt.Sprintf("00000000-0000-4000-8000-%012d", n) }

func date(s string) time.Time {
	d, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return d
}

func TestApplyViewBatch(t *testing.T) {
	ctx := context.Background()
	db := storetest.NewDB(t)
	a, b := mustSite(t, db, model.Starter), mustSite(t, db, model.Starter)
	la := mustListingRef(t, db, a.ID, "A1", "current")
	lb := mustListingRef(t, db, b.ID, "B1", "current")
	gone := mustListingRef(t, db, a.ID, "A2", "deleted")
	day := date("2026-11-20")

	batch := store.ViewBatch{ID: batchID(1), EdgeID: "edge-1", Counts: []store.ViewCount{
		{SiteID: a.ID, ListingRef: la, Day: day, Views: 5, Visitors: 3},
		{SiteID: a.ID, ListingRef: la, Day: day, Views: 2, Visitors: 1},       // same row twice: adds up
		{SiteID: a.ID, ListingRef: gone, Day: day, Views: 4, Visitors: 4},     // a deleted listing keeps counting
		{SiteID: a.ID, ListingRef: lb, Day: day, Views: 50, Visitors: 50},     // another site's listing: skipped
		{SiteID: a.ID, ListingRef: 999999, Day: day, Views: 50, Visitors: 50}, // no such listing: skipped
	}}
	applied, err := db.ApplyViewBatch(ctx, batch)
	if err != nil || !applied {
		t.Fatalf("first apply: %v, %v", applied, err)
	}
	// The same batch again (a retried report), also concurrently: no change.
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Go(func() {
			applied, err := db.ApplyViewBatch(ctx, batch)
			if err == nil && applied {
				err = fmt.Errorf("batch applied twice")
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	// A second batch adds up.
	if _, err := db.ApplyViewBatch(ctx, store.ViewBatch{ID: batchID(2), EdgeID: "edge-1", Counts: []store.ViewCount{
		{SiteID: a.ID, ListingRef: la, Day: day, Views: 1, Visitors: 1}}}); err != nil {
		t.Fatal(err)
	}
	want := map[int64][2]int64{la: {8, 5}, gone: {4, 4}}
	rows, _ := db.Pool.Query(ctx, `SELECT listing_ref, views, visitors FROM listing_views ORDER BY 1`)
	got := map[int64][2]int64{}
	for rows.Next() {
		var ref, v, u int64
		if err := rows.Scan(&ref, &v, &u); err != nil {
			t.Fatal(err)
		}
		got[ref] = [2]int64{v, u}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("listing_views = %v, want %v", got, want)
	}

	// The listing's row goes, its views stay (no cascade from listings).
	if _, err := db.Pool.Exec(ctx, `DELETE FROM listings WHERE site_id = $1 AND ref = $2`, a.ID, gone); err != nil {
		t.Fatal(err)
	}
	var n int64
	if err := db.Pool.QueryRow(ctx, `SELECT views FROM listing_views WHERE site_id = $1 AND listing_ref = $2`, a.ID, gone).Scan(&n); err != nil || n != 4 {
		t.Errorf("views of a removed listing: %d, %v", n, err)
	}

	// Old batch ids are swept with the next batch.
	if _, err := db.Pool.Exec(ctx, `UPDATE view_batches SET applied_at = now() - interval '8 days' WHERE batch_id = $1`, batchID(1)); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ApplyViewBatch(ctx, store.ViewBatch{ID: batchID(3), EdgeID: "edge-1"}); err != nil {
		t.Fatal(err)
	}
	if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM view_batches`).Scan(&n); err != nil || n != 2 {
		t.Errorf("%d batch ids kept, want 2 (%v)", n, err)
	}
	if _, err := db.ApplyViewBatch(ctx, store.ViewBatch{ID: "nope", EdgeID: "e"}); err == nil {
		t.Error("a batch id that is no UUID was taken")
	}
}

func TestListingViewsAndTop(t *testing.T) {
	ctx := context.Background()
	db := storetest.NewDB(t)
	a, b := mustSite(t, db, model.Starter), mustSite(t, db, model.Starter)
	l1 := mustListingRef(t, db, a.ID, "L1", "current")
	l2 := mustListingRef(t, db, a.ID, "L2", "current")
	l3 := mustListingRef(t, db, a.ID, "L3", "sold")
	l4 := mustListingRef(t, db, a.ID, "L4", "current")
	other := mustListingRef(t, db, b.ID, "O1", "current")
	if _, err := db.ApplyViewBatch(ctx, store.ViewBatch{ID: batchID(10), EdgeID: "e", Counts: []store.ViewCount{
		{SiteID: a.ID, ListingRef: l1, Day: date("2026-11-19"), Views: 10, Visitors: 4},
		{SiteID: a.ID, ListingRef: l1, Day: date("2026-11-21"), Views: 20, Visitors: 10},
		{SiteID: a.ID, ListingRef: l2, Day: date("2026-11-21"), Views: 30, Visitors: 2},
		{SiteID: a.ID, ListingRef: l1, Day: date("2026-11-25"), Views: 99, Visitors: 99}, // after the period
		{SiteID: b.ID, ListingRef: other, Day: date("2026-11-21"), Views: 1000, Visitors: 1000},
		{SiteID: a.ID, ListingRef: l4, Day: date("2026-11-20"), Views: 500, Visitors: 1}, // its row goes below
	}}); err != nil {
		t.Fatal(err)
	}
	syd, _ := time.LoadLocation("Australia/Sydney")
	// 2026-11-21 00:30 in Sydney is 2026-11-20 13:30 UTC: the 21st's lead.
	mustLeadAt(t, db, a.ID, l1, time.Date(2026, 11, 21, 0, 30, 0, 0, syd), "new")
	mustLeadAt(t, db, a.ID, l1, time.Date(2026, 11, 21, 23, 59, 0, 0, syd), "contacted")
	mustLeadAt(t, db, a.ID, l1, time.Date(2026, 11, 21, 12, 0, 0, 0, syd), "spam") // not counted
	mustLeadAt(t, db, a.ID, l1, time.Date(2026, 11, 22, 0, 0, 0, 0, syd), "new")   // the next day, outside
	mustLeadAt(t, db, a.ID, l3, time.Date(2026, 11, 20, 9, 0, 0, 0, syd), "new")   // leads, no views
	mustLeadAt(t, db, b.ID, other, time.Date(2026, 11, 21, 9, 0, 0, 0, syd), "new")

	p := store.ViewPeriod{From: date("2026-11-19"), To: date("2026-11-21"), Zone: "Australia/Sydney"}
	days, err := db.ListingViews(ctx, a.ID, l1, p)
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprint(days)
	want := fmt.Sprint([]model.ViewDay{
		{Date: "2026-11-19", ViewFigures: model.ViewFigures{Views: 10, UniqueVisitors: 4}},
		{Date: "2026-11-20"},
		{Date: "2026-11-21", ViewFigures: model.ViewFigures{Views: 20, UniqueVisitors: 10, Leads: 2}},
	})
	if len(days) != 3 || days[2].LeadsPer100Views == nil || *days[2].LeadsPer100Views != 10 || days[1].LeadsPer100Views != nil {
		t.Errorf("days = %s", got)
	}
	for i := range days {
		days[i].LeadsPer100Views = nil
	}
	if got := fmt.Sprint(days); got != want {
		t.Errorf("days = %s\nwant %s", got, want)
	}

	if _, err := db.Pool.Exec(ctx, `DELETE FROM listings WHERE site_id = $1 AND ref = $2`, a.ID, l4); err != nil {
		t.Fatal(err)
	}
	top, err := db.TopListings(ctx, a.ID, p, store.SortViews, 10)
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, r := range top {
		order = append(order, fmt.Sprintf("%s:%d/%d/%d", r.ListingID, r.Views, r.UniqueVisitors, r.Leads))
	}
	if got, want := fmt.Sprint(order), "[L1:30/14/2 L2:30/2/0 L3:0/0/1]"; got != want {
		t.Errorf("top by views = %s, want %s", got, want)
	}
	top, _ = db.TopListings(ctx, a.ID, p, store.SortLeads, 1)
	if len(top) != 1 || top[0].ListingRef != l1 {
		t.Errorf("top by leads, limit 1 = %+v", top)
	}
	top, _ = db.TopListings(ctx, a.ID, p, store.SortVisitors, 10)
	if len(top) != 3 || top[0].ListingRef != l1 || top[1].ListingRef != l2 {
		t.Errorf("top by visitors = %+v", top)
	}
	// A listing whose row is gone leaves its place to the next one, also
	// when it is the whole top.
	if top, _ = db.TopListings(ctx, a.ID, p, store.SortViews, 1); len(top) != 1 || top[0].ListingRef != l1 {
		t.Errorf("top 1 by views = %+v", top)
	}
	if _, err := db.Pool.Exec(ctx, `DELETE FROM listings WHERE site_id = $1 AND ref = $2`, a.ID, l2); err != nil {
		t.Fatal(err)
	}
	top, _ = db.TopListings(ctx, a.ID, p, store.SortViews, 2)
	if len(top) != 2 || top[0].ListingRef != l1 || top[1].ListingRef != l3 {
		t.Errorf("top 2 by views without L2's row = %+v", top)
	}
	if top, _ = db.TopListings(ctx, a.ID, p, store.SortVisitors, 1); len(top) != 1 || top[0].ListingRef != l1 {
		t.Errorf("top 1 by visitors without L2's row = %+v", top)
	}
	if _, err := db.TopListings(ctx, a.ID, p, "views; DROP TABLE leads", 10); err == nil {
		t.Error("an unknown sort was taken")
	}
}

func TestBeaconID(t *testing.T) {
	ctx := context.Background()
	db := storetest.NewDB(t)
	a, b := mustSite(t, db, model.Starter), mustSite(t, db, model.Starter)
	k1, id1, err := db.BeaconID(ctx, a.ID, store.SourceCLI, false)
	if err != nil {
		t.Fatal(err)
	}
	if k1.Scopes != apikey.ViewsWrite || !apikey.ValidBytes([]byte(id1)) {
		t.Fatalf("beacon key %+v, id valid %v", k1, apikey.ValidBytes([]byte(id1)))
	}
	if _, again, err := db.BeaconID(ctx, a.ID, store.SourcePairing, false); err != nil || again != id1 {
		t.Errorf("second call: %q, %v; want the same id", again, err)
	}
	if _, idB, _ := db.BeaconID(ctx, b.ID, store.SourceCLI, false); idB == id1 {
		t.Error("two sites share a beacon id")
	}
	k2, id2, err := db.BeaconID(ctx, a.ID, store.SourceCLI, true)
	if err != nil || id2 == id1 || k2.ID == k1.ID {
		t.Fatalf("rotate: %q, %v", id2, err)
	}
	old, err := db.KeyByHash(ctx, apikey.Hash(id1))
	if err != nil || old.RevokedAt == nil {
		t.Errorf("rotated id not revoked: %+v, %v", old, err)
	}
	if _, _, err := db.BeaconID(ctx, "00000000-0000-4000-8000-000000000000", store.SourceCLI, false); err == nil {
		t.Error("beacon id for an unknown site")
	}
	// views:write is granted alone, by the store and by the schema.
	if _, _, err := db.CreateKey(ctx, store.NewKey{SiteID: a.ID, Name: "x", Scopes: apikey.ViewsWrite | apikey.ListingsRead, Source: store.SourceCLI}); err == nil {
		t.Error("a views:write key that reads listings was created")
	}
	if _, err := db.Pool.Exec(ctx, `UPDATE api_keys SET scopes = ARRAY['views:write', 'listings:read'] WHERE id = $1`, k2.ID); err == nil {
		t.Error("the schema let a beacon key read listings")
	}
	if _, err := db.Pool.Exec(ctx, `INSERT INTO api_keys (site_id, key_hash, hint, name, scopes, source, beacon_id)
		VALUES ($1, '\x`+fmt.Sprintf("%064d", 7)+`', 'h', 'n', ARRAY['listings:read'], 'cli', 'lgk_x')`, a.ID); err == nil {
		t.Error("a reading key was given a beacon id")
	}
}
