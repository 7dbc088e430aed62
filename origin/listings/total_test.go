package listings

import (
	"context"
	"fmt"
	"testing"

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
	var c model.Collection[map[string]any]
	for _, tc := range []struct {
		query      string
		total      int
		exact      bool
		totalPages int
		rows       int
	}{
		{"", 20 + countWindow, false, (20 + countWindow) / 20, 20},
		{"?type=rental", n / 2, true, (n/2 + 19) / 20, 20},
		{"?page=50", n, true, n / 20, 20},
		{"?per_page=50", 50 + countWindow, false, (50 + countWindow) / 50, 50},
		{"?per_page=100", n, true, n / 100, 100}, // exactly at the bound
		{"?page=60", n, true, n / 20, 0},         // past the end
	} {
		e.get(t, "/v1/sites/{site}/listings"+tc.query, &c)
		m := c.Meta
		if m.Total != tc.total || m.TotalExact != tc.exact || m.TotalPages != tc.totalPages || len(c.Data) != tc.rows {
			t.Errorf("%q: total %d exact %v pages %d with %d rows; want %d %v %d with %d", tc.query,
				m.Total, m.TotalExact, m.TotalPages, len(c.Data), tc.total, tc.exact, tc.totalPages, tc.rows)
		}
		if !tc.exact {
			// The last page announced exists.
			var last model.Collection[map[string]any]
			e.get(t, fmt.Sprintf("/v1/sites/{site}/listings?page=%d&per_page=%d", m.TotalPages, m.PerPage), &last)
			if len(last.Data) == 0 {
				t.Errorf("%q: page %d of %d is empty", tc.query, m.TotalPages, m.TotalPages)
			}
		}
	}
	// Other collections are exact.
	e.get(t, "/v1/sites/{site}/fields", &c)
	if !c.Meta.TotalExact {
		t.Error("fields: total_exact false")
	}
}
