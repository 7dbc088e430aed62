package listings

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/listgate/listgate/pkg/model"
)

// rankedRefs is the order of a relevance search as it was ranked before the
// search window: every match, by ts_rank_cd, newest first among equals.
func rankedRefs(tb testing.TB, e *testEnv, q string, recent int) []int64 {
	tb.Helper()
	f, err := parseListingFilter(&url.URL{RawQuery: "q=" + url.QueryEscape(q)}, searchParams, true)
	if err != nil {
		tb.Fatal(err)
	}
	b, tsq, _ := listingWhere(e.site, f)
	sql := `SELECT l.ref FROM listings l WHERE ` + b.where() + ` ORDER BY ts_rank_cd(l.search, ` + tsq + `) DESC, l.modified_at DESC, l.ref DESC`
	if recent > 0 {
		sql = `SELECT ref FROM (SELECT l.ref, l.modified_at, ts_rank_cd(l.search, ` + tsq + `) AS rank FROM listings l
			WHERE ` + b.where() + ` ORDER BY l.modified_at DESC, l.ref DESC LIMIT ` + fmt.Sprint(recent) + `) w
			ORDER BY rank DESC, modified_at DESC, ref DESC`
	}
	rows, _ := e.db.Pool.Query(context.Background(), sql, b.args...)
	refs, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		tb.Fatal(err)
	}
	return refs
}

// searchRefs pages through a search and returns the refs in order.
func searchRefs(tb testing.TB, e *testEnv, q string) ([]int64, model.Meta) {
	tb.Helper()
	var refs []int64
	var first model.Meta
	for page := 1; ; page++ {
		var c model.Collection[model.Listing]
		e.get(tb, fmt.Sprintf("/v1/sites/{site}/listings/search?per_page=100&page=%d&q=%s", page, url.QueryEscape(q)), &c)
		if page == 1 {
			first = c.Meta
		}
		for _, l := range c.Data {
			refs = append(refs, l.ListingRef)
		}
		if len(c.Data) < 100 {
			return refs, first
		}
	}
}

// A golden set of searches on a generated site: each ranks every match in
// the order of ts_rank_cd, as before the search window.
func TestSearchGoldenOrder(t *testing.T) {
	e := newEnv(t)
	e.mustImportGenerated(t, 17, 400)
	var suburb, common, word string
	e.db.Pool.QueryRow(context.Background(), `SELECT lower(suburb) FROM listings WHERE site_id = $1 AND suburb !~ ' '
		GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1`, e.site).Scan(&suburb)
	e.db.Pool.QueryRow(context.Background(), `SELECT word FROM ts_stat(format('SELECT to_tsvector(''simple'', description)
		FROM listings WHERE site_id = %L', $1::text)) WHERE length(word) >= 5 AND word ~ '^[a-z]+$'
		ORDER BY ndoc DESC, word LIMIT 1`, e.site).Scan(&common)
	e.db.Pool.QueryRow(context.Background(), `SELECT word FROM ts_stat(format('SELECT to_tsvector(''simple'', description)
		FROM listings WHERE site_id = %L', $1::text)) WHERE length(word) >= 6 AND word ~ '^[a-z]+$' AND ndoc BETWEEN 3 AND 20
		ORDER BY ndoc, word LIMIT 1`, e.site).Scan(&word)
	if suburb == "" || common == "" || word == "" {
		t.Fatalf("words from the data: %q %q %q", suburb, common, word)
	}
	for _, q := range []string{common, word, suburb, common[:4], suburb + " " + common, "3 bed " + common,
		"family home", "renovated kitchen", "main road", "pool"} {
		want := rankedRefs(t, e, q, 0)
		got, meta := searchRefs(t, e, q)
		if !slices.Equal(got, want) {
			t.Errorf("%q: ranked %d refs %v…, want %d %v…", q, len(got), firstRefs(got), len(want), firstRefs(want))
		}
		if meta.Total != len(want) || !meta.TotalExact {
			t.Errorf("%q: total %d exact %v, want %d exact", q, meta.Total, meta.TotalExact, len(want))
		}
	}
}

func firstRefs(refs []int64) []int64 { return refs[:min(len(refs), 8)] }

// A search matching more than searchWindow listings ranks the
// searchWindow most recently modified, says its total is a lower bound,
// and ends there.
func TestSearchWindow(t *testing.T) {
	e := newEnv(t)
	const n = searchWindow + 150
	_, err := e.db.Pool.Exec(context.Background(), `INSERT INTO listings (site_id, agency_id, unique_id, type, status,
			headline, description, modified_at, doc)
		SELECT $1, 'BIG', 'L' || i, 'residential', 'current',
			CASE WHEN i % 7 = 0 THEN 'Kitchen to love' ELSE 'Home ' || i END,
			repeat('A kitchen with a view. ', 1 + i % 3) || 'Near the park.',
			now() - (i || ' minutes')::interval, '{}'
		FROM generate_series(1, $2::int) i`, e.site, n)
	if err != nil {
		t.Fatal(err)
	}
	got, meta := searchRefs(t, e, "kitchen")
	want := rankedRefs(t, e, "kitchen", searchWindow)
	if !slices.Equal(got, want) {
		t.Errorf("ranked %d refs %v…, want the %d most recent by rank %v…", len(got), firstRefs(got), len(want), firstRefs(want))
	}
	if meta.Total != searchWindow || meta.TotalExact || meta.TotalPages != searchWindow/100 {
		t.Errorf("meta %+v, want a total of %d, not exact", meta, searchWindow)
	}
	// The oldest matches are not ranked: the site's oldest listing is not
	// in the results although its headline matches.
	var oldest int64
	e.db.Pool.QueryRow(context.Background(), `SELECT ref FROM listings WHERE site_id = $1 AND headline = 'Kitchen to love'
		ORDER BY modified_at LIMIT 1`, e.site).Scan(&oldest)
	if slices.Contains(got, oldest) {
		t.Errorf("the oldest match %d was ranked", oldest)
	}
	// A narrower search on the same site ranks all its matches.
	gotNarrow, m := searchRefs(t, e, "kitchen love")
	if wantNarrow := rankedRefs(t, e, "kitchen love", 0); !slices.Equal(gotNarrow, wantNarrow) || !m.TotalExact || m.Total != n/7 {
		t.Errorf("narrow: %d refs, total %d exact %v; want %d", len(gotNarrow), m.Total, m.TotalExact, len(wantNarrow))
	}
}

// Ranking a search's window reads one block a match beyond those that
// found it: each match's text-search vector is in its row, read back by the
// row's address. On realistic listings (the feed generator's) a vector is
// about 1.3 kB, and stored out of line (TOAST) ranking would read it back,
// some four blocks a match. Choosing the window carries no vector: the
// newest matches are sorted by modification time with their refs and
// addresses only, where the vectors made each of a narrow search's matches
// a row of 1.3 kB to sort and store.
func TestRankingReadsNoMoreBlocks(t *testing.T) {
	e := newEnv(t)
	e.mustImportGenerated(t, 23, 300)
	ctx := context.Background()
	var common string
	e.db.Pool.QueryRow(ctx, `SELECT word FROM ts_stat(format('SELECT to_tsvector(''simple'', description)
		FROM listings WHERE site_id = %L', $1::text)) WHERE length(word) >= 5 AND word ~ '^[a-z]+$'
		ORDER BY ndoc DESC, word LIMIT 1`, e.site).Scan(&common)
	f, err := parseListingFilter(&url.URL{RawQuery: "q=" + common}, searchParams, true)
	if err != nil {
		t.Fatal(err)
	}
	q := listingSQL(e.site, f)
	var plan []struct{ Plan planNode }
	if err := e.db.Pool.QueryRow(ctx, "EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) "+q.page, q.args...).Scan(&plan); err != nil {
		t.Fatal(err)
	}
	chosen := plan[0].Plan.find(func(n *planNode) bool { return n.SubplanName == "CTE c" })
	if chosen == nil {
		t.Fatalf("no window CTE c in the plan: %+v", plan)
	}
	// The window's rows: ref, modification time and address (8 + 8 + 6).
	if chosen.PlanWidth > 32 {
		t.Errorf("choosing the window of %q carries rows of %d bytes: %+v", common, chosen.PlanWidth, chosen)
	}
	ranked := plan[0].Plan.find(func(n *planNode) bool { return n.SubplanName == "CTE w" })
	if ranked == nil {
		t.Fatalf("no ranking CTE w in the plan: %+v", plan)
	}
	window := ranked.find(func(n *planNode) bool { return n.NodeType == "CTE Scan" && n.CTEName == "c" })
	if window == nil || window.ActualRows < 100 {
		t.Fatalf("the ranking does not read a window of %q's matches: %+v", common, ranked)
	}
	if extra := ranked.blocks() - window.blocks(); extra > int(window.ActualRows) {
		t.Errorf("ranking %d matches of %q read %d blocks beyond the %d that found them", int(window.ActualRows), common, extra, window.blocks())
	}
}

// planNode is a node of EXPLAIN (FORMAT JSON).
type planNode struct {
	NodeType    string  `json:"Node Type"`
	SubplanName string  `json:"Subplan Name"`
	CTEName     string  `json:"CTE Name"`
	ActualRows  float64 `json:"Actual Rows"`
	PlanWidth   int     `json:"Plan Width"`
	SharedHit   int     `json:"Shared Hit Blocks"`
	SharedRead  int     `json:"Shared Read Blocks"`
	Plans       []planNode
}

func (n *planNode) blocks() int { return n.SharedHit + n.SharedRead }

func (n *planNode) find(match func(*planNode) bool) *planNode {
	if match(n) {
		return n
	}
	for i := range n.Plans {
		if m := n.Plans[i].find(match); m != nil {
			return m
		}
	}
	return nil
}
