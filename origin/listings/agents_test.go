package listings

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/listgate/listgate/pkg/model"
)

// An agent's count of current listings reads the site's own listings: a
// small site's agents page, beside a large site, reads a few dozen blocks,
// not the large site's listings. The layout is the bench's: a small site
// imported, a large one imported and its listings copied (no agents on the
// copies), statistics current. Counted by a subquery correlated with the
// agent's site, the planner merge-joined each agent's listing_agents rows
// with every site's listings in ref order: 8,115 blocks for the page here,
// 356 ms beside the bench's site of 100,000.
func TestAgentCountsStayInTheSite(t *testing.T) {
	if testing.Short() {
		t.Skip("copies 9,000 listings")
	}
	e := newEnv(t)
	large := newEnvOn(t, e.db)
	ctx := context.Background()
	e.mustImportGenerated(t, 250, 250)
	large.mustImportGenerated(t, 1000, 1000)
	if _, err := e.db.Pool.Exec(ctx, `INSERT INTO listings (site_id, agency_id, unique_id, type, status, category,
			headline, description, suburb, state, postcode, search_address, price, bedrooms, doc, modified_at, created_at)
		SELECT l.site_id, l.agency_id, l.unique_id || '-' || c, l.type, l.status, l.category, l.headline, l.description,
			l.suburb, l.state, l.postcode, l.search_address, l.price, l.bedrooms, l.doc,
			l.modified_at - (c || ' seconds')::interval, l.created_at
		FROM listings l, generate_series(1, 9) c WHERE l.site_id = $1`, large.site); err != nil {
		t.Fatal(err)
	}
	if _, err := e.db.Pool.Exec(ctx, `VACUUM ANALYZE listings`); err != nil {
		t.Fatal(err)
	}
	var want map[int64]int64
	rows, _ := e.db.Pool.Query(ctx, `SELECT a.id, count(l.ref) FROM agents a
		LEFT JOIN listing_agents la ON la.site_id = a.site_id AND la.agent_id = a.id
		LEFT JOIN listings l ON l.site_id = la.site_id AND l.ref = la.listing_ref AND l.status = 'current'
		WHERE a.site_id = $1 GROUP BY a.id`, e.site)
	want, err := collectCountsByID(rows)
	if err != nil || len(want) < 2 {
		t.Fatalf("agents of the small site: %v %v", want, err)
	}
	blocks := regexp.MustCompile(`(?m)^Execution Time|^  Buffers: shared hit=(\d+)(?: read=(\d+))?`)
	for name, q := range map[string]struct {
		sql  string
		args []any
	}{
		"page":      {agentQuery("true", "LIMIT $2 OFFSET $3", "("+siteAgents+")"), []any{e.site, 20, 0}},
		"one agent": {agentQuery("a.id = $2", "", "0"), []any{e.site, firstKey(want)}},
	} {
		plan := explainAnalyze(t, e, q.sql, q.args)
		read := 0
		for _, m := range blocks.FindAllStringSubmatch(plan, -1) {
			for _, n := range m[1:] {
				k, _ := strconv.Atoi(n)
				read += k
			}
		}
		// The small site's agents, listing_agents rows and listings are
		// a few dozen blocks; the large site's listings are thousands.
		if read == 0 || read > 500 {
			t.Errorf("%s: %d blocks read:\n%s", name, read, plan)
		}
		rows, _ := e.db.Pool.Query(ctx, `SELECT id, n FROM (`+q.sql+`) AS x(id, name, email, mobile, office, photo, n, total)`, q.args...)
		got, err := collectCountsByID(rows)
		if err != nil {
			t.Fatal(err)
		}
		for id, n := range got {
			if want[id] != n {
				t.Errorf("%s: agent %d has %d current listings, want %d", name, id, n, want[id])
			}
		}
		if len(got) == 0 || (name == "page" && len(got) != len(want)) {
			t.Errorf("%s: %d agents, want %d", name, len(got), len(want))
		}
	}
}

func collectCountsByID(rows pgx.Rows) (map[int64]int64, error) {
	out := map[int64]int64{}
	var id, n int64
	_, err := pgx.ForEachRow(rows, []any{&id, &n}, func() error { out[id] = n; return nil })
	return out, err
}

func firstKey(m map[int64]int64) int64 {
	var first int64
	for k := range m {
		if first == 0 || k < first {
			first = k
		}
	}
	return first
}

// A site's agents page reads its page: the page's agents from an index in
// the page's order and each agent's listing refs from an index alone, so a
// site of 3,000 agents, each on 20 listings, costs a page what a site of a
// few does. Before, every agent of the site was read and sorted for each
// page (the total was a window over them), and each agent's listing_agents
// rows were read from the table. A page past the last still says how many
// agents the site has.
func TestAgentsPageReadsItsPage(t *testing.T) {
	if testing.Short() {
		t.Skip("makes 3,000 agents and 30,000 listings")
	}
	e := newEnv(t)
	ctx := context.Background()
	if _, err := e.db.Pool.Exec(ctx, `INSERT INTO agents (site_id, name, email)
		SELECT $1, 'Agent ' || (ARRAY['Smith','Jones','Nguyen','Brown','Lee'])[1 + i % 5] || ' ' || i, 'agent' || i || '@example.com'
		FROM generate_series(1, 3000) i`, e.site); err != nil {
		t.Fatal(err)
	}
	if _, err := e.db.Pool.Exec(ctx, `INSERT INTO listings (site_id, agency_id, unique_id, type, status, doc)
		SELECT $1, 'AG', 'L' || i, 'residential', (ARRAY['current','current','sold'])[1 + i % 3], '{}'
		FROM generate_series(1, 30000) i`, e.site); err != nil {
		t.Fatal(err)
	}
	// Each agent on 20 listings: listing i has agents i % 3000 and (i + 1) % 3000.
	if _, err := e.db.Pool.Exec(ctx, `WITH a AS (SELECT array_agg(id ORDER BY id) ids FROM agents WHERE site_id = $1),
		l AS (SELECT ref, row_number() OVER (ORDER BY ref) AS i FROM listings WHERE site_id = $1)
		INSERT INTO listing_agents (site_id, listing_ref, position, agent_id)
		SELECT $1, l.ref, p, a.ids[1 + (l.i + p) % 3000] FROM l, a, generate_series(1, 2) p`, e.site); err != nil {
		t.Fatal(err)
	}
	if _, err := e.db.Pool.Exec(ctx, `VACUUM ANALYZE agents, listing_agents, listings`); err != nil {
		t.Fatal(err)
	}
	var page struct {
		Data []model.Agent
		Meta model.Meta
	}
	e.get(t, "/v1/sites/{site}/agents?page=2", &page)
	if len(page.Data) != 20 || page.Meta.Total != 3000 || page.Data[0].ListingCount == 0 {
		t.Fatalf("page 2: %d agents, total %d, first %+v", len(page.Data), page.Meta.Total, page.Data)
	}
	var want int64
	if err := e.db.Pool.QueryRow(ctx, `SELECT count(*) FROM listing_agents la JOIN listings l ON l.site_id = la.site_id
		AND l.ref = la.listing_ref AND l.status = 'current' WHERE la.site_id = $1 AND la.agent_id = $2`,
		e.site, page.Data[0].AgentID).Scan(&want); err != nil || int64(page.Data[0].ListingCount) != want {
		t.Errorf("agent %s: %d current listings, want %d (%v)", page.Data[0].AgentID, page.Data[0].ListingCount, want, err)
	}
	plan := explainAnalyze(t, e, agentQuery("true", "LIMIT $2 OFFSET $3", "("+siteAgents+")"), []any{e.site, 20, 20})
	for _, want := range []string{"Index Scan using agents_site_lower_name", "Index Only Scan using listing_agents_agent_refs"} {
		if !strings.Contains(plan, want) {
			t.Errorf("the page's plan has no %q:\n%s", want, plan)
		}
	}
	// The total counts the site's agents (narrow rows, no sort); the page
	// itself sorts none of them.
	if strings.Contains(plan, "WindowAgg") || strings.Contains(plan, "top-N heapsort") {
		t.Errorf("the page sorts every agent of the site:\n%s", plan)
	}
	var past struct {
		Data []model.Agent
		Meta model.Meta
	}
	e.get(t, "/v1/sites/{site}/agents?page=500", &past)
	if len(past.Data) != 0 || past.Meta.Total != 3000 || past.Meta.TotalPages != 150 {
		t.Errorf("a page past the last: %d agents, meta %+v; want none, total 3000", len(past.Data), past.Meta)
	}
}
