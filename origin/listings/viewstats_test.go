package listings

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/listgate/listgate/origin/store"
	"github.com/listgate/listgate/pkg/model"
)

func mustRef(tb testing.TB, e *testEnv, site, uniqueID, status string) int64 {
	tb.Helper()
	var ref int64
	if err := e.db.Pool.QueryRow(context.Background(), `INSERT INTO listings (site_id, agency_id, unique_id, type, status, headline)
		VALUES ($1, 'AG', $2, 'residential', $3, 'House ' || $2) RETURNING ref`, site, uniqueID, status).Scan(&ref); err != nil {
		tb.Fatal(err)
	}
	return ref
}

func TestListingPerformance(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	other, err := e.db.CreateSite(ctx, "Other Realty", model.Starter, "")
	if err != nil {
		t.Fatal(err)
	}
	l1 := mustRef(t, e, e.site, "P1", "current")
	l2 := mustRef(t, e, e.site, "P2", "deleted")
	o1 := mustRef(t, e, other.ID, "P1", "current")
	day := func(s string) time.Time { d, _ := time.Parse(time.DateOnly, s); return d }
	if _, err := e.db.ApplyViewBatch(ctx, store.ViewBatch{ID: "00000000-0000-4000-8000-000000000001", EdgeID: "t", Counts: []store.ViewCount{
		{SiteID: e.site, ListingRef: l1, Day: day("2026-11-02"), Views: 40, Visitors: 30},
		{SiteID: e.site, ListingRef: l1, Day: day("2026-11-03"), Views: 10, Visitors: 5},
		{SiteID: e.site, ListingRef: l2, Day: day("2026-11-03"), Views: 70, Visitors: 7},
		{SiteID: other.ID, ListingRef: o1, Day: day("2026-11-03"), Views: 500, Visitors: 500},
	}}); err != nil {
		t.Fatal(err)
	}
	syd, _ := time.LoadLocation("Australia/Sydney")
	if _, err := e.db.Pool.Exec(ctx, `INSERT INTO leads (site_id, listing_ref, type, priority, name, email, created_at)
		VALUES ($1, $2, 'inquiry', 'warm', 'N', 'n@example.com', $3)`, e.site, l1, time.Date(2026, 11, 3, 8, 0, 0, 0, syd)); err != nil {
		t.Fatal(err)
	}

	var p model.ListingPerformance
	e.get(t, fmt.Sprintf("/v1/sites/{site}/stats/listings/%d?from=2026-11-01&to=2026-11-03", l1), &p)
	if p.ListingID != "P1" || p.Status != "current" || p.Timezone != "Australia/Sydney" || len(p.Days) != 3 ||
		p.Days[0].Views != 0 || p.Days[1].Views != 40 || p.Days[2].Leads != 1 ||
		p.Totals.Views != 50 || p.Totals.UniqueVisitors != 35 || p.Totals.Leads != 1 || *p.Totals.LeadsPer100Views != 2 {
		t.Errorf("performance = %+v", p)
	}
	// By listing_id too, and a deleted listing keeps its history.
	e.get(t, "/v1/sites/{site}/stats/listings/AG:P2?from=2026-11-03&to=2026-11-03", &p)
	if p.Status != "deleted" || p.Totals.Views != 70 || p.Totals.LeadsPer100Views == nil || *p.Totals.LeadsPer100Views != 0 {
		t.Errorf("deleted listing = %+v", p)
	}

	var top model.TopListings
	e.get(t, "/v1/sites/{site}/stats/listings?from=2026-11-01&to=2026-11-30&limit=5", &top)
	if len(top.Data) != 2 || top.Data[0].ListingRef != l2 || top.Data[1].Views != 50 || top.Meta.Sort != "-views" || top.Meta.Limit != 5 {
		t.Errorf("top = %+v", top)
	}
	e.get(t, "/v1/sites/{site}/stats/listings?from=2026-11-01&to=2026-11-30&sort=-leads", &top)
	if len(top.Data) != 2 || top.Data[0].ListingRef != l1 {
		t.Errorf("top by leads = %+v", top)
	}

	for name, tc := range map[string]struct {
		r     req
		code  int
		field string
	}{
		"another site's listing": {req{path: fmt.Sprintf("/v1/sites/{site}/stats/listings/%d", o1)}, 404, ""},
		"from after to":          {req{path: "/v1/sites/{site}/stats/listings?from=2026-11-05&to=2026-11-01"}, 422, "from"},
		"too long":               {req{path: "/v1/sites/{site}/stats/listings?from=2024-01-01&to=2026-11-01"}, 422, "from"},
		"bad date":               {req{path: "/v1/sites/{site}/stats/listings?to=2026-13-01"}, 422, "to"},
		"bad sort":               {req{path: "/v1/sites/{site}/stats/listings?sort=views"}, 422, "sort"},
		"limit":                  {req{path: "/v1/sites/{site}/stats/listings?limit=101"}, 422, "limit"},
		"unknown parameter":      {req{path: fmt.Sprintf("/v1/sites/{site}/stats/listings/%d?days=3", l1)}, 422, "days"},
		"scope":                  {req{path: "/v1/sites/{site}/stats/listings", scopes: "listings:read"}, 403, ""},
		"beacon key":             {req{path: "/v1/sites/{site}/stats/listings", scopes: "views:write"}, 403, ""},
		"other site":             {req{path: "/v1/sites/{site}/stats/listings", site: other.ID}, 403, ""},
	} {
		t.Run(name, func(t *testing.T) {
			code, eb := e.getError(t, tc.r)
			if code != tc.code || (tc.field != "" && eb.Error.Details[tc.field] == "") {
				t.Errorf("= %d %+v, want %d on %q", code, eb, tc.code, tc.field)
			}
		})
	}
}
