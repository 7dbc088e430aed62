package listings

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/jackc/pgx/v5"
)

// Plan is a statement a listings request runs, with what EXPLAIN
// (ANALYZE, BUFFERS) said of it.
type Plan struct {
	Name string // "page" or "count"
	SQL  string
	Plan string
}

// Explain runs EXPLAIN (ANALYZE, BUFFERS) on the statements a listings
// request makes for a site — target is the request's path and query under
// the site, as the API takes it ("/listings?…" or "/listings/search?…") —
// for performance reports and an operator's investigation. It executes
// the queries (read only). Each is planned with the request's values; a
// page without filters runs on its generic plan instead (genericPlans),
// which walks the same index (TestQueriesUseIndexes) without the planning.
func (s *Service) Explain(ctx context.Context, siteID, target string) ([]Plan, error) {
	u, err := url.Parse(target)
	if err != nil {
		return nil, err
	}
	search := strings.HasSuffix(u.Path, "/listings/search")
	params := listingParams
	if search {
		params = searchParams
	}
	f, err := parseListingFilter(u, params, search)
	if err != nil {
		return nil, err
	}
	q := listingSQL(siteID, f)
	var plans []Plan
	for _, st := range []struct {
		name, sql string
		args      []any
	}{{"page", q.page, q.args}, {"count", q.count, q.countArgs}} {
		rows, err := s.db.Pool.Query(ctx, "EXPLAIN (ANALYZE, BUFFERS) "+st.sql, st.args...)
		if err != nil {
			return nil, fmt.Errorf("explain %s: %w", st.name, err)
		}
		lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return nil, fmt.Errorf("explain %s: %w", st.name, err)
		}
		plans = append(plans, Plan{Name: st.name, SQL: st.sql, Plan: strings.Join(lines, "\n")})
	}
	return plans, nil
}
