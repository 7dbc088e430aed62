package listings

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/listgate/listgate/origin/store"

	"github.com/listgate/listgate/pkg/model"
)

// A listing query counts its matches up to countWindow past the page: below
// that the total is exact, above it a lower bound that grows as pages go
// deeper, and every page it announces exists.
func TestTotalBounded(t *testing.T) {
	e := newEnv(t)
	const n = countWindow + 100
	_, err := e.db.Pool.Exec(context.Background(), `INSERT INTO listings (site_id, agency_id, unique_id, type, status,
			headline, modified_at, doc)
		SELECT $1, 'BIG', 'L' || i, (ARRAY['residential', 'rental'])[1 + i % 2], 'current', 'Home ' || i,
			now() - (i || ' minutes')::interval, '{}'
		FROM generate_series(1, $2::int) i`, e.site, n)
	if err != nil {
		t.Fatal(err)
	}
	checkTotals(t, e, "/v1/sites/{site}/listings", []totalCase{
		{"", 20 + countWindow, false, (20 + countWindow) / 20, 20},
		{"?type=rental", n / 2, true, (n/2 + 19) / 20, 20},
		{"?page=50", n, true, n / 20, 20},
		{"?per_page=50", 50 + countWindow, false, (50 + countWindow) / 50, 50},
		{"?per_page=100", n, true, n / 100, 100}, // exactly at the bound
		{"?page=60", n, true, n / 20, 0},         // past the end
		// Deep pages of the orders that count from the page's first row.
		{"?page=2&sort=created", 40 + countWindow, false, (40 + countWindow) / 20, 20},
		{"?page=50&sort=created", n, true, n / 20, 20},
		{"?page=54&sort=-created", n, true, n / 20, 20},
		{"?page=3&sort=modified", 60 + countWindow, false, (60 + countWindow) / 20, 20},
		{"?page=5&per_page=100&sort=modified", n, true, n / 100, 100},
		{"?page=2&type=rental", n / 2, true, (n/2 + 19) / 20, 20},
		{"?page=60&sort=created", n, true, n / 20, 0}, // past the end: counted apart
	}, func(tc totalCase, m model.Meta) {
		if !tc.exact {
			// The last page announced exists.
			var last model.Collection[map[string]any]
			e.get(t, fmt.Sprintf("/v1/sites/{site}/listings?page=%d&per_page=%d", m.TotalPages, m.PerPage), &last)
			if len(last.Data) == 0 {
				t.Errorf("%q: page %d of %d is empty", tc.query, m.TotalPages, m.TotalPages)
			}
		}
	})
	// Other collections are exact.
	var c model.Collection[map[string]any]
	e.get(t, "/v1/sites/{site}/fields", &c)
	if !c.Meta.TotalExact {
		t.Error("fields: total_exact false")
	}
	e.get(t, "/v1/sites/{site}/agents", &c)
	if !c.Meta.TotalExact {
		t.Error("fields: total_exact false")
	}
}

// A media list counts its objects up to countWindow past the page, as a
// listing query does: a site of 100,000 listings has some 650,000 media
// objects, and a count of all of them on every page took 1.5 s a page.
func TestMediaTotalBounded(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	const listings, each = 130, 10 // 1,300 media objects, 10 of them of a deleted listing
	_, err := e.db.Pool.Exec(ctx, `INSERT INTO listings (site_id, agency_id, unique_id, type, status, doc)
		SELECT $1, 'M', 'L' || i, 'residential', CASE WHEN i = 1 THEN 'deleted' ELSE 'current' END, '{}'
		FROM generate_series(1, $2::int) i`, e.site, listings)
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.db.Pool.Exec(ctx, `INSERT INTO media (site_id, listing_ref, kind, slot, url, position, modified_at)
		SELECT l.site_id, l.ref, CASE WHEN j = 1 THEN 'floorplan' ELSE 'image' END, 'm' || j,
			'https://img.example/' || l.ref || '/' || j || '.jpg', j, '2026-01-01'::timestamptz + (l.ref || ' minutes')::interval
		FROM listings l, generate_series(1, $2::int) j WHERE l.site_id = $1`, e.site, each)
	if err != nil {
		t.Fatal(err)
	}
	const shown = (listings - 1) * each
	checkTotals(t, e, "/v1/sites/{site}/media", []totalCase{
		{"", 20 + countWindow, false, (20 + countWindow) / 20, 20},
		{"?kind=floorplan", listings - 1, true, (listings - 1 + 19) / 20, 20},
		{"?page=20", shown, true, (shown + 19) / 20, 20},
		{"?per_page=100&page=3", shown, true, (shown + 99) / 100, 100}, // the bound past the end
		{"?page=70", shown, true, (shown + 19) / 20, 0},                // past the end
	}, nil)
	// Pages follow one another in the list's order: listing, kind,
	// position.
	var first, second model.Collection[model.Media]
	e.get(t, "/v1/sites/{site}/media?per_page=15", &first)
	e.get(t, "/v1/sites/{site}/media?per_page=15&page=2", &second)
	all := append(first.Data, second.Data...)
	for i := 1; i < len(all); i++ {
		a, b := all[i-1], all[i]
		if a.ListingRef > b.ListingRef || (a.ListingRef == b.ListingRef && (a.Kind > b.Kind || (a.Kind == b.Kind && a.Position >= b.Position))) {
			t.Errorf("media %d (%d %s %d) before %d (%d %s %d)", i-1, a.ListingRef, a.Kind, a.Position, i, b.ListingRef, b.Kind, b.Position)
		}
	}
	if len(all) != 30 {
		t.Errorf("two pages of 15: %d objects", len(all))
	}
	// A media list is planned with its values every time: a prepared
	// statement's generic plan is one plan for every site (made by a large
	// site's pages, it walked every site's listings for a small site's),
	// and cannot know how many objects changed since a time (it walked the
	// site's media for a time after them all). A connection that served
	// lists a dozen times holds no prepared statement of them.
	one, err := store.Open(ctx, e.db.Pool.Config().ConnString(), store.Options{MaxConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer one.Close()
	svc := New(Config{DB: one})
	for i := range 12 {
		rec := httptest.NewRecorder()
		since := fmt.Sprintf("2026-01-01T%02d:00:00Z", i)
		target := "/v1/sites/" + e.site + "/media?modified_since=" + since
		if i%2 == 1 {
			target = fmt.Sprintf("/v1/sites/%s/media?page=%d", e.site, i)
		}
		r := httptest.NewRequest("GET", target, nil)
		if err := svc.mediaList(rec, r, site{id: e.site, loc: time.UTC}); err != nil || rec.Code != http.StatusOK {
			t.Fatalf("%s: %v %d", since, err, rec.Code)
		}
	}
	var prepared, generic int64
	if err := one.Pool.QueryRow(ctx, `SELECT count(*), coalesce(sum(generic_plans), 0) FROM pg_prepared_statements
		WHERE statement LIKE '%FROM media%' AND statement NOT LIKE '%pg_prepared_statements%'`).Scan(&prepared, &generic); err != nil || prepared > 0 {
		t.Errorf("media lists ran as %d prepared statements, %d times on a generic plan (%v)", prepared, generic, err)
	}
}

// totalCase is a collection's query and the meta and rows it answers.
type totalCase struct {
	query            string
	total            int
	exact            bool
	totalPages, rows int
}

// checkTotals asks path with each case's query and checks its meta and
// rows; then, when not nil, each(case, meta).
func checkTotals(t *testing.T, e *testEnv, path string, cases []totalCase, each func(totalCase, model.Meta)) {
	t.Helper()
	for _, tc := range cases {
		var c model.Collection[map[string]any]
		e.get(t, path+tc.query, &c)
		m := c.Meta
		if m.Total != tc.total || m.TotalExact != tc.exact || m.TotalPages != tc.totalPages || len(c.Data) != tc.rows {
			t.Errorf("%s%s: total %d exact %v pages %d with %d rows; want %d %v %d with %d", path, tc.query,
				m.Total, m.TotalExact, m.TotalPages, len(c.Data), tc.total, tc.exact, tc.totalPages, tc.rows)
		}
		if each != nil {
			each(tc, m)
		}
	}
}
