package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/listgate/listgate/origin/api"
	"github.com/listgate/listgate/origin/ingest"
	"github.com/listgate/listgate/origin/listings"
	"github.com/listgate/listgate/origin/store"
	"github.com/listgate/listgate/pkg/model"
	"github.com/listgate/listgate/pkg/reaxml/reaxmlgen"
)

func init() {
	scenarios["origin-listings"] = benchOriginListings
	plans["origin-listings"] = func(q bool) time.Duration {
		if q {
			return 60 * time.Second
		}
		return 90*time.Second + 2*7*5*time.Second + 2*5*3*2*time.Second // the sites made, then 7 requests × 2 sites × 5 rounds, 5 × 2 × 3 of 2 s
	}
}

// benchOriginListings measures the origin's reads (Postgres per request,
// no edge) side by side on a small site (250 listings) and a large one
// (100,000), the same requests on both: the default page, a filtered and
// sorted page, page 200, and four searches (a common word, a rare word, a
// suburb, a typo's prefix); and beside those, #17's goals, the other reads
// a site's clients make (the media list, the agents page, the fields, the
// stats summary, a week's top listings). The ratio large/small says how
// much a read's cost grows with the site.
func benchOriginListings(args []string) error {
	fs := flag.NewFlagSet("origin-listings", flag.ContinueOnError)
	small := fs.Int("small", 250, "listings on the small site")
	large := fs.Int("listings", def(100000, 10000), "listings on the large site")
	dur := fs.Duration("duration", def(time.Second, time.Second), "duration of each run")
	rounds := fs.Int("rounds", def(5, 1), "alternating rounds of each request on the two sites; the ratio is the median of the rounds'")
	workers := fs.Int("workers", 16, "concurrent clients")
	explain := fs.Bool("explain", def(true, false), "report EXPLAIN (ANALYZE, BUFFERS) of each request's queries on the large site")
	if err := fs.Parse(args); err != nil {
		return err
	}
	// The other reads' clients (see below).
	const otherWorkers = 4
	ctx := context.Background()
	db, cleanup, err := benchDatabase(ctx)
	if err != nil {
		return err
	}
	defer cleanup()
	smallSite, err := benchSite(ctx, db, "Small Realty", *small)
	if err != nil {
		return err
	}
	largeSite, err := benchSite(ctx, db, "Large Realty", *large)
	if err != nil {
		return err
	}
	if err := vacuum(ctx, db); err != nil {
		return err
	}
	words, err := searchWords(ctx, db, smallSite, largeSite)
	if err != nil {
		return err
	}
	const token = "bench-internal-token-0123456789abcdef"
	svc := listings.New(listings.Config{DB: db})
	srv := api.New(api.Config{Ready: db.Ping, Unavailable: store.IsUnavailable, Metrics: db.WritePoolMetrics,
		InternalToken: token, Log: slog.New(slog.DiscardHandler),
		Mounts: []api.Mounter{svc}})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: srv.Handler()}
	go hs.Serve(ln)
	defer hs.Close()

	fmt.Printf("origin-listings: sites of %d and %d listings, %d clients, %d rounds of %v per site; searches %+v\n", *small, *large, *workers, *rounds, *dur, words)
	t := reportTable{Title: fmt.Sprintf("The origin alone (Postgres per request), %d clients, the same requests on a site of %s listings and one of %s, side by side: %d alternating rounds of %v on each site; req/s over all rounds, p99 the rounds' median, large / small the median of the rounds' own ratios:",
		*workers, fmtRate(float64(*small)), fmtRate(float64(*large)), *rounds, *dur),
		Header: []string{"request", "small req/s", "small p99", "large req/s", "large p99", "large / small", "rounds' ratios"}}
	other := reportTable{Title: fmt.Sprintf("Other reads (no goal in #17: what else a site's size costs), %d clients, %d alternating rounds of %v on each site:",
		otherWorkers, max(*rounds*3/5, 1), 2*(*dur)),
		Header: t.Header}
	runs := map[string]any{}
	// other: a read beside #17's goals (the listing pages and searches).
	requests := []struct {
		name, path string
		other      bool
	}{
		{"default page", "/listings", false},
		{"filtered and sorted", "/listings?type=residential&min_bedrooms=3&sort=-price", false},
		// The small site has no page 200: its first page is the same work.
		{"page 200 (small site: page 1)", "/listings?page=200", false},
		{"search: common word " + words.common, "/listings/search?q=" + words.common, false},
		{"search: rare word " + words.rare, "/listings/search?q=" + words.rare, false},
		{"search: suburb " + words.suburb, "/listings/search?q=" + words.suburb, false},
		{"search: prefix " + words.prefix, "/listings/search?q=" + words.prefix, false},
		{"media page", "/media", true},
		{"agents page", "/agents", true},
		{"fields (the plugin's search form)", "/fields?per_page=100", true},
		{"stats summary", "/stats/summary", true},
		{"top listings of a week (the plugin's widget)", "/stats/listings?sort=-views&limit=5&from=" +
			time.Now().AddDate(0, 0, -6).Format(time.DateOnly), true},
	}
	get := func(site, path string) *http.Request {
		req, _ := http.NewRequest("GET", "http://"+ln.Addr().String()+"/v1/sites/"+site+path, nil)
		req.Header.Set(api.HeaderInternalToken, token)
		req.Header.Set(api.HeaderSite, site)
		req.Header.Set(api.HeaderKeyID, "bench")
		req.Header.Set(api.HeaderScopes, "listings:read,agents:read,stats:read")
		return req
	}
	for i := range requests {
		rq := &requests[i]
		// Pages of the same size on both sites: a search with fewer than
		// 20 matches on the small site is asked for that many a page on
		// both, so that the ratio compares the queries, not the rendering
		// of more listings.
		if !strings.HasPrefix(rq.path, "/listings") {
		} else if n, err := pageTotal(get(smallSite, rq.path)); err != nil {
			return err
		} else if n < 20 {
			sep := "&"
			if !strings.Contains(rq.path, "?") {
				sep = "?"
			}
			rq.path += sep + "per_page=" + fmt.Sprint(max(n, 1))
			rq.name += fmt.Sprintf(" (%d a page)", max(n, 1))
		}
		// Rounds alternate which site goes first, so that a machine's
		// drift through the run falls on both alike.
		var res [2][]loadResult
		var ratios []float64
		// The other reads are slower by far on the large site (a request
		// of a quarter of a second or more alone): with 16 clients on two
		// cores none would finish within a round. They run with fewer
		// clients, in fewer and longer rounds.
		nw, nd, nr := *workers, *dur, *rounds
		if rq.other {
			nw, nd, nr = otherWorkers, 2*(*dur), max(*rounds*3/5, 1)
		}
		for round := range nr {
			var rr [2]loadResult
			for k := range 2 {
				i := k ^ (round & 1)
				site, path := []string{smallSite, largeSite}[i], rq.path
				if i == 0 && strings.Contains(path, "page=200") {
					path = strings.Replace(path, "page=200", "page=1", 1)
				}
				rr[i] = closedLoop(ctx, nw, nd, 1_000_000, func(int) *http.Request { return get(site, path) }, nil)
				if rr[i].Requests == 0 || rr[i].Statuses[200] != rr[i].Requests {
					return fmt.Errorf("%s: %s", rq.name, rr[i])
				}
			}
			res[0], res[1] = append(res[0], rr[0]), append(res[1], rr[1])
			ratios = append(ratios, rr[1].rps()/rr[0].rps())
		}
		all := [2]loadResult{pooled(res[0]), pooled(res[1])}
		r := median(ratios)
		var each []string
		for _, x := range ratios {
			each = append(each, fmtRatio(x))
		}
		fmt.Printf("origin-listings: %-40s small %s  large %s  large/small %s (rounds %s)\n", rq.name, all[0], all[1], fmtRatio(r), strings.Join(each, " "))
		runs[rq.name] = map[string]any{"path": rq.path, "small": all[0], "large": all[1], "ratio": r, "round_ratios": ratios,
			"small_rounds": res[0], "large_rounds": res[1]}
		table := &t
		if rq.other {
			table = &other
		}
		table.Rows = append(table.Rows, []string{rq.name, fmtRate(all[0].rps()), fmtMs(ms(all[0].P99)),
			fmtRate(all[1].rps()), fmtMs(ms(all[1].P99)), "**" + fmtRatio(r) + "**", strings.Join(each, ", ")})
		summarize("origin-listings", "%s: large/small %s, median of %d rounds (%s; %s vs %s req/s over all rounds)", rq.name, fmtRatio(r), nr,
			strings.Join(each, " "), fmtRate(all[1].rps()), fmtRate(all[0].rps()))
	}
	addTable("origin-listings", t)
	addTable("origin-listings", other)
	if *explain {
		// The plans on the large site, buffers warm from the runs above.
		for _, rq := range requests {
			if rq.other {
				continue
			}
			plans, err := svc.Explain(ctx, largeSite, rq.path)
			if err != nil {
				return fmt.Errorf("%s: %w", rq.name, err)
			}
			var text strings.Builder
			for _, p := range plans {
				fmt.Fprintf(&text, "-- %s query\n%s\n\n", p.Name, p.Plan)
			}
			addBlock("origin-listings", fmt.Sprintf("EXPLAIN (ANALYZE, BUFFERS) on the large site: %s (`%s`):", rq.name, rq.path), text.String())
		}
	}
	return writeResults("origin-listings", map[string]any{"small": *small, "large": *large, "workers": *workers,
		"duration_s": dur.Seconds(), "rounds": *rounds, "runs": runs})
}

// pooled is the runs as one: their requests over their time, each status
// summed, and the median of their p50s and p99s.
func pooled(runs []loadResult) loadResult {
	var out loadResult
	out.Statuses = map[int]int{}
	var p50, p99 []float64
	for _, r := range runs {
		out.Requests += r.Requests
		out.Errors += r.Errors
		out.Duration += r.Duration
		for k, v := range r.Statuses {
			out.Statuses[k] += v
		}
		p50, p99 = append(p50, float64(r.P50)), append(p99, float64(r.P99))
	}
	out.P50, out.P99 = time.Duration(median(p50)), time.Duration(median(p99))
	return out
}

// pageTotal asks for a page and returns its meta.total.
func pageTotal(req *http.Request) (int, error) {
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var c struct{ Meta struct{ Total int } }
	if err := json.NewDecoder(resp.Body).Decode(&c); err != nil || resp.StatusCode != 200 {
		return 0, fmt.Errorf("GET %s: %d %v", req.URL, resp.StatusCode, err)
	}
	return c.Meta.Total, nil
}

// benchSite makes a site of n listings from the feed generator: a generated
// feed imported, then its listings copied (with new ids, and modification
// times spread) until the site has n — a full import of 100,000 would
// measure the importer, not the reads.
func benchSite(ctx context.Context, db *store.DB, name string, n int) (string, error) {
	site, err := db.CreateSite(ctx, name, model.Enterprise, "")
	if err != nil {
		return "", err
	}
	base := min(n, 2000)
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(reaxmlgen.Generate(pw, reaxmlgen.Options{Seed: uint64(n), Listings: base})) }()
	if _, err := ingest.New(db, slog.New(slog.DiscardHandler)).Import(ctx, site.ID, pr, ingest.Options{}); err != nil {
		return "", err
	}
	copies := (n + base - 1) / base
	if copies > 1 {
		// The copies have the same media and inspections as their
		// originals, as a site of n listings would (a page renders them,
		// the media list walks them), and agents of their own: the
		// generator's pool is one agency's 8 agents, each on some 400 of
		// the first 2,000 listings, where a site of n has as many more
		// agents as it has listings. Each copy's listings go to 8 × 8
		// agents of its own, so an agent is on about as many listings as
		// on the small site (about 50).
		err := pgx.BeginFunc(ctx, db.Pool, func(tx pgx.Tx) error {
			var agents, firstID int64
			if err := tx.QueryRow(ctx, `SELECT count(*), (SELECT max(id) + 1 FROM agents) FROM agents WHERE site_id = $1`,
				site.ID).Scan(&agents, &firstID); err != nil {
				return err
			}
			id := site.ID
			for _, st := range []struct {
				sql  string
				args []any
			}{
				{`CREATE TEMP TABLE copy_of (copy bigint, orig bigint, c int) ON COMMIT DROP`, nil},
				{`CREATE TEMP TABLE agent_of (orig bigint, c int, k int, id bigint) ON COMMIT DROP`, nil},
				{`INSERT INTO agent_of SELECT a.id, c, k, $2 + ((c - 1) * 8 + k) * $3 + row_number() OVER (PARTITION BY c, k ORDER BY a.id) - 1
					FROM agents a, generate_series(1, $4::int - 1) c, generate_series(0, 7) k WHERE a.site_id = $1`, []any{id, firstID, agents, copies}},
				{`INSERT INTO agents (id, site_id, name, email, phone_mobile, phone_office, photo_url) OVERRIDING SYSTEM VALUE
					SELECT m.id, a.site_id, a.name, replace(a.email, '@', '+' || m.c || '.' || m.k || '@'), a.phone_mobile, a.phone_office, a.photo_url
					FROM agent_of m JOIN agents a ON a.site_id = $1 AND a.id = m.orig`, []any{id}},
				{`SELECT setval(pg_get_serial_sequence('agents', 'id'), (SELECT max(id) FROM agents))`, nil},
				{`WITH ins AS (INSERT INTO listings (site_id, agency_id, unique_id, type, status, under_offer,
						category, headline, description, suburb, state, postcode, search_address, price, price_shown, bedrooms,
						bathrooms, car_spaces, doc, feed_mod_time, modified_at, created_at)
					SELECT l.site_id, l.agency_id, l.unique_id || '-' || c, l.type, l.status, l.under_offer, l.category,
						l.headline, l.description, l.suburb, l.state, l.postcode, l.search_address, l.price, l.price_shown,
						l.bedrooms, l.bathrooms, l.car_spaces, l.doc, l.feed_mod_time, l.modified_at - (c || ' seconds')::interval,
						l.created_at
					FROM listings l, generate_series(1, $2::int - 1) c WHERE l.site_id = $1
					RETURNING ref, agency_id, unique_id)
				INSERT INTO copy_of SELECT ins.ref, o.ref, substring(ins.unique_id FROM '-([0-9]+)$')::int
				FROM ins JOIN listings o ON o.site_id = $1 AND o.agency_id = ins.agency_id
					AND o.unique_id = regexp_replace(ins.unique_id, '-[0-9]+$', '')`, []any{id, copies}},
				{`INSERT INTO listing_agents (site_id, listing_ref, position, agent_id)
					SELECT $1, m.copy, x.position, a.id FROM copy_of m
					JOIN listing_agents x ON x.site_id = $1 AND x.listing_ref = m.orig
					JOIN agent_of a ON a.orig = x.agent_id AND a.c = m.c AND a.k = m.copy % 8`, []any{id}},
				{`INSERT INTO media (site_id, listing_ref, kind, slot, url, format, position, modified_at)
					SELECT $1, m.copy, x.kind, x.slot, x.url, x.format, x.position, x.modified_at
					FROM copy_of m JOIN media x ON x.site_id = $1 AND x.listing_ref = m.orig`, []any{id}},
				{`INSERT INTO inspections (site_id, listing_ref, starts_at, ends_at)
					SELECT $1, m.copy, x.starts_at, x.ends_at FROM copy_of m JOIN inspections x ON x.site_id = $1 AND x.listing_ref = m.orig`, []any{id}},
			} {
				if _, err := tx.Exec(ctx, st.sql, st.args...); err != nil {
					return fmt.Errorf("%.60s…: %w", strings.TrimSpace(st.sql), err)
				}
			}
			return nil
		})
		if err != nil {
			return "", err
		}
	}
	// A week of listing views, a third of the listings viewed each day (the
	// top listings read them).
	if _, err := db.Pool.Exec(ctx, `INSERT INTO listing_views (site_id, listing_ref, day, views, visitors)
		SELECT l.site_id, l.ref, current_date - d, 1 + (l.ref * 7 + d) % 13 + 7, 1 + (l.ref * 3 + d) % 7
		FROM listings l, generate_series(0, 6) d WHERE l.site_id = $1 AND (l.ref + d) % 3 = 0`, site.ID); err != nil {
		return "", err
	}
	return site.ID, nil
}

// benchWords are the searches' words, taken from the large site's text.
type benchWords struct{ common, rare, suburb, prefix string }

// wordStats is ts_stat over the descriptions of one site.
const wordStats = `SELECT word, ndoc FROM ts_stat(format(
	'SELECT to_tsvector(''simple'', coalesce(description, '''')) FROM listings WHERE site_id = %L', $1::text))
	WHERE length(word) >= 5 AND word ~ '^[a-z]+$'`

// searchWords picks, among the words of both sites (so that the search
// does the same work on the small site: a page of matches, not an empty
// one), a word in most listings of the large site, one in about one in a
// thousand, the most common suburb, and the first four letters of a common
// word of at least seven letters (a search for a word being typed).
func searchWords(ctx context.Context, db *store.DB, small, large string) (benchWords, error) {
	var w benchWords
	var n int
	if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM listings WHERE site_id = $1`, large).Scan(&n); err != nil {
		return w, err
	}
	err := db.Pool.QueryRow(ctx, `WITH s AS MATERIALIZED (`+wordStats+`),
			t AS MATERIALIZED (`+strings.ReplaceAll(wordStats, "$1", "$3")+`),
			b AS (SELECT s.word, s.ndoc FROM s JOIN t USING (word))
		SELECT (SELECT word FROM b ORDER BY ndoc DESC, word LIMIT 1),
			(SELECT word FROM b ORDER BY abs(ndoc - greatest($2::int / 1000, 1)), word LIMIT 1),
			(SELECT substr(word, 1, 4) FROM b WHERE length(word) >= 7 ORDER BY ndoc DESC, word LIMIT 1 OFFSET 3)`,
		large, n, small).Scan(&w.common, &w.rare, &w.prefix)
	if err != nil {
		return w, err
	}
	err = db.Pool.QueryRow(ctx, `SELECT lower(l.suburb) FROM listings l WHERE l.site_id = $1 AND l.suburb !~ ' '
			AND EXISTS (SELECT 1 FROM listings o WHERE o.site_id = $2 AND lower(o.suburb) = lower(l.suburb))
		GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1`, large, small).Scan(&w.suburb)
	return w, err
}

// benchDatabase starts a throwaway Postgres with a migrated database.
func benchDatabase(ctx context.Context) (*store.DB, func(), error) {
	pg, err := startBenchPostgres(ctx)
	if err != nil {
		return nil, nil, err
	}
	db, err := store.Open(ctx, pg.DatabaseURL("bench"), store.Options{MaxConns: 32})
	if err != nil {
		pg.Close()
		return nil, nil, err
	}
	if _, err := db.Migrate(ctx); err != nil {
		db.Close()
		pg.Close()
		return nil, nil, err
	}
	return db, func() { db.Close(); pg.Close() }, nil
}

// vacuum leaves the listings table as autovacuum keeps a live one: analysed,
// and all-visible so counts can be index-only scans. A VACUUM that overlaps
// an autovacuum's snapshot leaves pages not all-visible; it takes another
// pass then.
func vacuum(ctx context.Context, db *store.DB) error {
	for pass := 0; pass < 20; pass++ {
		if _, err := db.Pool.Exec(ctx, `VACUUM ANALYZE listings`); err != nil {
			return err
		}
		var visible, pages int
		db.Pool.QueryRow(ctx, `SELECT relallvisible, relpages FROM pg_class WHERE relname = 'listings'`).Scan(&visible, &pages)
		if visible >= pages*9/10 {
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("listings never became all-visible")
}
