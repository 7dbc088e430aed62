package listings

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/listgate/listgate/pkg/model"
	"github.com/listgate/listgate/pkg/reaxml/reaxmlgen"
)

func generated(tb testing.TB, n int) string {
	tb.Helper()
	var b strings.Builder
	if err := reaxmlgen.Generate(&b, reaxmlgen.Options{Seed: 11, Listings: n}); err != nil {
		tb.Fatal(err)
	}
	return b.String()
}

func (e *testEnv) count(tb testing.TB, where string, args ...any) int {
	tb.Helper()
	var n int
	if err := e.db.Pool.QueryRow(context.Background(), `SELECT count(*) FROM listings WHERE site_id = $1 AND `+where,
		append([]any{e.site}, args...)...).Scan(&n); err != nil {
		tb.Fatal(err)
	}
	return n
}

func TestAuthorizationOrder(t *testing.T) {
	e := newEnv(t)
	other := "6f1c2a8e-0000-4000-8000-000000000000"
	for name, tc := range map[string]struct {
		r      req
		status int
		code   string
		msg    string
	}{
		"no identity":       {req{path: "/v1/sites/{site}/listings", anon: true}, 401, "UNAUTHORIZED", ""},
		"other site":        {req{path: "/v1/sites/" + other + "/listings"}, 403, "FORBIDDEN", "site"},
		"other site, scope": {req{path: "/v1/sites/" + other + "/agents", scopes: "leads:write"}, 403, "FORBIDDEN", "site"},
		"listings scope":    {req{path: "/v1/sites/{site}/listings", scopes: "leads:write"}, 403, "FORBIDDEN", "missing scope listings:read"},
		"agents scope":      {req{path: "/v1/sites/{site}/agents", scopes: "listings:read"}, 403, "FORBIDDEN", "missing scope agents:read"},
		"stats scope":       {req{path: "/v1/sites/{site}/stats/summary", scopes: "listings:read"}, 403, "FORBIDDEN", "missing scope stats:read"},
		"media scope":       {req{path: "/v1/sites/{site}/media", scopes: "agents:read"}, 403, "FORBIDDEN", "missing scope listings:read"},
		"not json":          {req{path: "/v1/sites/{site}/listings", header: map[string]string{"Accept": "text/html"}}, 406, "NOT_ACCEPTABLE", ""},
		"json refused":      {req{path: "/v1/sites/{site}/listings", header: map[string]string{"Accept": "application/json;q=0, text/html"}}, 406, "NOT_ACCEPTABLE", ""},
	} {
		t.Run(name, func(t *testing.T) {
			status, eb := e.getError(t, tc.r)
			if status != tc.status || eb.Error.Code != tc.code || !strings.Contains(eb.Error.Message, tc.msg) {
				t.Errorf("%d %s %q; want %d %s containing %q", status, eb.Error.Code, eb.Error.Message, tc.status, tc.code, tc.msg)
			}
		})
	}
	var page listingPage
	resp, _ := e.do(t, req{path: "/v1/sites/" + e.site + "/listings", header: map[string]string{"Accept": "application/json, text/plain;q=0.5"}})
	if resp.StatusCode != 200 {
		t.Errorf("Accept with JSON: %d", resp.StatusCode)
	}
	e.get(t, "/v1/sites/{site}/listings", &page)
	if page.Data == nil || page.Meta.Total != 0 || page.Meta.PerPage != 20 || page.Meta.Page != 1 {
		t.Errorf("empty site page %+v", page)
	}
}

func TestPaginationAndFilters(t *testing.T) {
	e := newEnv(t)
	e.mustImport(t, generated(t, 400))
	current := e.count(t, "status = 'current'")
	if current < 100 {
		t.Fatalf("only %d current listings generated", current)
	}
	var p listingPage
	e.get(t, "/v1/sites/{site}/listings?per_page=7&page=3", &p)
	if len(p.Data) != 7 || p.Meta.Total != current || p.Meta.TotalPages != (current+6)/7 || p.Meta.Page != 3 {
		t.Fatalf("meta %+v, %d items; %d current listings", p.Meta, len(p.Data), current)
	}
	// Pages don't overlap and follow -modified.
	seen := map[int64]bool{}
	for pg := 1; pg <= 3; pg++ {
		var q listingPage
		e.get(t, fmt.Sprintf("/v1/sites/{site}/listings?per_page=50&page=%d", pg), &q)
		for i, l := range q.Data {
			if seen[l.ListingRef] {
				t.Fatalf("listing %d on two pages", l.ListingRef)
			}
			seen[l.ListingRef] = true
			if i > 0 && l.ModifiedAt.After(q.Data[i-1].ModifiedAt) {
				t.Fatalf("page %d not sorted by -modified", pg)
			}
			if l.Status != "current" {
				t.Fatalf("default status filter let %s through", l.Status)
			}
		}
	}
	var past listingPage
	e.get(t, "/v1/sites/{site}/listings?page=9999", &past)
	if len(past.Data) != 0 || past.Meta.Total != current {
		t.Errorf("past the end: %+v", past.Meta)
	}

	type check func(l model.Listing) bool
	for name, tc := range map[string]struct {
		query string
		where string
		args  []any
		ok    check
	}{
		"status list": {"status=sold,leased", "status IN ('sold','leased')", nil, func(l model.Listing) bool { return l.Status == "sold" || l.Status == "leased" }},
		"type":        {"type=rental", "status = 'current' AND type = 'rental'", nil, func(l model.Listing) bool { return l.Type == "rental" }},
		"min price":   {"min_price=900000", "status = 'current' AND price >= 900000", nil, nil},
		"max price":   {"max_price=500000&type=residential", "status = 'current' AND price <= 500000 AND type = 'residential'", nil, nil},
		"bedrooms":    {"min_bedrooms=4", "status = 'current' AND bedrooms >= 4", nil, func(l model.Listing) bool { return l.Features.Bedrooms != nil && *l.Features.Bedrooms >= 4 }},
		"bathrooms":   {"min_bathrooms=2", "status = 'current' AND bathrooms >= 2", nil, func(l model.Listing) bool { return *l.Features.Bathrooms >= 2 }},
		"car spaces":  {"min_car_spaces=2", "status = 'current' AND car_spaces >= 2", nil, nil},
		"state":       {"state=vic", "status = 'current' AND state = 'VIC'", nil, func(l model.Listing) bool { return *l.Address.State == "VIC" }},
	} {
		t.Run(name, func(t *testing.T) {
			want := e.count(t, tc.where, tc.args...)
			var got listingPage
			e.get(t, "/v1/sites/{site}/listings?per_page=100&"+tc.query, &got)
			if got.Meta.Total != want || want == 0 {
				t.Errorf("total %d, want %d (and more than 0)", got.Meta.Total, want)
			}
			for _, l := range got.Data {
				if tc.ok != nil && !tc.ok(l) {
					t.Errorf("listing %d does not match %s", l.ListingRef, tc.query)
				}
			}
		})
	}
	// Suburb and agent filters use a value the site has.
	var suburb string
	var agent int64
	e.db.Pool.QueryRow(context.Background(), `SELECT suburb FROM listings WHERE site_id = $1 AND status = 'current' AND suburb IS NOT NULL LIMIT 1`, e.site).Scan(&suburb)
	e.db.Pool.QueryRow(context.Background(), `SELECT agent_id FROM listing_agents WHERE site_id = $1 LIMIT 1`, e.site).Scan(&agent)
	var bySuburb, byAgent listingPage
	e.get(t, "/v1/sites/{site}/listings?per_page=100&suburb="+strings.ToLower(strings.ReplaceAll(suburb, " ", "+")), &bySuburb)
	if bySuburb.Meta.Total == 0 || bySuburb.Meta.Total != e.count(t, "status = 'current' AND suburb = $2", suburb) {
		t.Errorf("suburb %s: %d", suburb, bySuburb.Meta.Total)
	}
	e.get(t, fmt.Sprintf("/v1/sites/{site}/listings?per_page=100&agent_id=%d", agent), &byAgent)
	for _, l := range byAgent.Data {
		found := false
		for _, a := range l.Agents {
			found = found || a.AgentID == fmt.Sprint(agent)
		}
		if !found {
			t.Errorf("listing %d lacks agent %d", l.ListingRef, agent)
		}
	}
	if byAgent.Meta.Total == 0 {
		t.Error("agent filter found nothing")
	}
}

func TestSorts(t *testing.T) {
	e := newEnv(t)
	e.mustImport(t, generated(t, 150))
	prices := func(q string) []float64 {
		var p listingPage
		e.get(t, "/v1/sites/{site}/listings?per_page=100&type=residential&"+q, &p)
		var out []float64
		for _, l := range p.Data {
			if l.Price != nil && l.Price.Amount != nil {
				out = append(out, *l.Price.Amount)
			}
		}
		return out
	}
	asc := prices("sort=price")
	if len(asc) < 5 || !sort.Float64sAreSorted(asc) {
		t.Errorf("sort=price: %v", asc)
	}
	desc := prices("sort=-price")
	if !sort.SliceIsSorted(desc, func(i, j int) bool { return desc[i] > desc[j] }) {
		t.Errorf("sort=-price: %v", desc)
	}
	var p listingPage
	e.get(t, "/v1/sites/{site}/listings?per_page=100&sort=suburb", &p)
	var subs []string
	for _, l := range p.Data {
		if l.Address.Suburb != nil {
			subs = append(subs, strings.ToLower(*l.Address.Suburb))
		}
	}
	if !sort.StringsAreSorted(subs) {
		t.Errorf("sort=suburb: %v", subs)
	}
}

func TestStrictQueryParsing(t *testing.T) {
	e := newEnv(t)
	for name, tc := range map[string]struct {
		path    string
		details []string
	}{
		"unknown":          {"/v1/sites/{site}/listings?colour=red", []string{"colour"}},
		"bad number":       {"/v1/sites/{site}/listings?min_price=cheap", []string{"min_price"}},
		"per_page":         {"/v1/sites/{site}/listings?per_page=101", []string{"per_page"}},
		"page zero":        {"/v1/sites/{site}/listings?page=0", []string{"page"}},
		"bad sort":         {"/v1/sites/{site}/listings?sort=colour", []string{"sort"}},
		"bad date":         {"/v1/sites/{site}/listings?modified_since=yesterday", []string{"modified_since"}},
		"bad status":       {"/v1/sites/{site}/listings?status=current,deleted", []string{"status"}},
		"repeated":         {"/v1/sites/{site}/listings?page=1&page=2", []string{"page"}},
		"price order":      {"/v1/sites/{site}/listings?min_price=5&max_price=1", []string{"max_price"}},
		"every problem":    {"/v1/sites/{site}/listings?per_page=0&sort=x&min_bedrooms=-1&foo=1", []string{"per_page", "sort", "min_bedrooms", "foo"}},
		"search needs q":   {"/v1/sites/{site}/listings/search", []string{"q"}},
		"q on list":        {"/v1/sites/{site}/listings?q=house", []string{"q"}},
		"single listing":   {"/v1/sites/{site}/listings/1?page=2", []string{"page"}},
		"media kind":       {"/v1/sites/{site}/media?kind=hologram", []string{"kind"}},
		"fields per_page":  {"/v1/sites/{site}/fields?per_page=1000", []string{"per_page"}},
		"featured sort":    {"/v1/sites/{site}/listings/featured?sort=price", []string{"sort"}},
		"stats parameters": {"/v1/sites/{site}/stats/summary?days=7", []string{"days"}},
	} {
		t.Run(name, func(t *testing.T) {
			status, eb := e.getError(t, req{path: tc.path})
			if status != 422 || eb.Error.Code != "VALIDATION_ERROR" {
				t.Fatalf("%d %s", status, eb.Error.Code)
			}
			for _, d := range tc.details {
				if eb.Error.Details[d] == "" {
					t.Errorf("no detail for %s in %v", d, eb.Error.Details)
				}
			}
			if len(eb.Error.Details) != len(tc.details) {
				t.Errorf("details %v, want exactly %v", eb.Error.Details, tc.details)
			}
		})
	}
}

func TestETagAndCacheControl(t *testing.T) {
	e := newEnv(t)
	e.mustImport(t, generated(t, 30))
	for _, path := range []string{"/listings", "/listings/search?q=house", "/listings/featured", "/fields", "/media", "/agents", "/stats/summary"} {
		url := "/v1/sites/" + e.site + path
		resp, body := e.do(t, req{path: url})
		etag := resp.Header.Get("ETag")
		if resp.StatusCode != 200 || len(etag) < 10 || etag[0] != '"' || strings.HasPrefix(etag, "W/") {
			t.Fatalf("%s: %d ETag %q %s", path, resp.StatusCode, etag, body)
		}
		cc := resp.Header.Get("Cache-Control")
		if !strings.Contains(cc, "max-age=") || !strings.Contains(cc, "stale-while-revalidate=") || !strings.Contains(cc, "stale-if-error=") {
			t.Errorf("%s: Cache-Control %q", path, cc)
		}
		if path == "/stats/summary" {
			continue // generated_at changes
		}
		resp2, body2 := e.do(t, req{path: url, header: map[string]string{"If-None-Match": `"nope", ` + etag}})
		if resp2.StatusCode != http.StatusNotModified || len(body2) != 0 || resp2.Header.Get("ETag") != etag {
			t.Errorf("%s with If-None-Match: %d, %d bytes", path, resp2.StatusCode, len(body2))
		}
		resp3, _ := e.do(t, req{path: url, header: map[string]string{"If-None-Match": `"other"`}})
		if resp3.StatusCode != 200 {
			t.Errorf("%s with another ETag: %d", path, resp3.StatusCode)
		}
	}
	if _, body := e.do(t, req{path: "/v1/sites/" + e.site + "/listings"}); !strings.Contains(string(body), `"meta"`) {
		t.Error("no meta in collection")
	}
}
