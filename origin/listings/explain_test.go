package listings

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/listgate/listgate/origin/store"
)

// On a site of 50,000 listings (beside a small one), every listing query
// shape the API can run plans as index scans: no sequential scan of
// listings.
func TestQueriesUseIndexes(t *testing.T) {
	if testing.Short() {
		t.Skip("inserts 50,000 listings")
	}
	e := newEnv(t)
	small := newEnvOn(t, e.db)
	ctx := context.Background()
	for _, s := range []struct {
		site string
		n    int
	}{{e.site, 50000}, {small.site, 500}} {
		_, err := e.db.Pool.Exec(ctx, `INSERT INTO listings (site_id, agency_id, unique_id, type, status, suburb, state,
			postcode, price, bedrooms, bathrooms, car_spaces, headline, description, search_address, category,
			featured, modified_at, created_at, doc)
		SELECT $1, 'BIG', 'L' || i,
			(ARRAY['residential','rental','land','commercial','commercial_land','rural','business','holiday_rental'])[1 + i % 8],
			(ARRAY['current','current','current','current','sold','leased','withdrawn','offmarket','deleted'])[1 + i % 9],
			(ARRAY['Richmond','Fitzroy','Carlton','Kew','Hawthorn','Brunswick','Coburg','Preston'])[1 + i % 8] || (i % 40),
			'VIC', (3000 + i % 200)::text, 300000 + (i * 7919) % 2000000, 1 + i % 5, 1 + i % 3, i % 4,
			'Headline ' || i || (ARRAY[' family home',' renovated classic',' river views',' city living',' garden retreat'])[1 + i % 5],
			'Description of home ' || i || (ARRAY[' with kitchens and gardens', ' near schools', ' with a pool', ' close to the station', ' on a quiet street', ' with views', ' fully renovated', ' with a study', ' north facing', ' with parking', ' walk to shops'])[1 + i % 11],
			(i % 300) || ' ' || (ARRAY['Main Road','Church Street','High Street','Station Road','Park Avenue','Bay Road','Hill Crescent','King Street'])[1 + i % 7],
			(ARRAY['House','Unit','Townhouse','Apartment'])[1 + i % 4], i % 500 = 0,
			now() - (i || ' minutes')::interval, now() - (i || ' hours')::interval,
			-- A listing's document is a couple of kilobytes, as real ones are.
			jsonb_build_object('description', repeat('A light-filled family home near parks. ', 40))
		FROM generate_series(1, $2::int) i`, s.site, s.n)
		if err != nil {
			t.Fatal(err)
		}
	}
	// As autovacuum keeps a live table: statistics and the visibility map
	// (index-only scans need it). VACUUM leaves pages not all-visible while
	// an older snapshot may still need them (another test's transaction on
	// this cluster, on a busy machine), so it may take more passes: they
	// are repeated until the pages are all-visible, for at most a minute.
	deadline := time.Now().Add(time.Minute)
	for {
		if _, err := e.db.Pool.Exec(ctx, `VACUUM ANALYZE listings`); err != nil {
			t.Fatal(err)
		}
		var visible, pages int
		e.db.Pool.QueryRow(ctx, `SELECT relallvisible, relpages FROM pg_class WHERE relname = 'listings'`).Scan(&visible, &pages)
		if visible >= pages*9/10 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("VACUUM left %d of %d pages all-visible after a minute of passes", visible, pages)
		}
		time.Sleep(100 * time.Millisecond)
	}
	for name, q := range map[string]string{
		"default":           "",
		"page 50":           "page=50&per_page=100",
		"page 200":          "page=200",
		"page 200 by price": "page=200&sort=-price",
		"status list":       "status=sold,leased",
		"type":              "type=rental",
		"suburb":            "suburb=richmond7",
		"price range":       "min_price=500000&max_price=700000",
		"bedrooms":          "min_bedrooms=4&min_bathrooms=2&min_car_spaces=2",
		"sort price":        "sort=price",
		"sort -price":       "sort=-price",
		"sort -created":     "sort=-created",
		"sort suburb":       "sort=suburb",
		"modified since":    "modified_since=2020-01-01T00:00:00Z&status=current",
		"changes":           "modified_since=" + url.QueryEscape("2999-01-01T00:00:00+10:00"),
		"agent":             "agent_id=1",
		"state+postcode":    "state=VIC&postcode=3005",
		"search":            "q=richmond7",
		"search 3 bed":      "q=main+road+3+bed",
		"search + filters":  "q=kitchens&type=residential&sort=-price",
	} {
		t.Run(name, func(t *testing.T) {
			search := strings.Contains(q, "q=")
			params := listingParams
			if search {
				params = searchParams
			}
			f, err := parseListingFilter(&url.URL{RawQuery: q}, params, search)
			if err != nil {
				t.Fatal(err)
			}
			lq := listingSQL(e.site, f)
			page, args := lq.page, lq.args
			for _, stmt := range []struct {
				sql  string
				args []any
			}{{lq.page, lq.args}, {lq.count, lq.countArgs}} {
				plan := explain(t, e, stmt.sql, stmt.args)
				if strings.Contains(plan, "Seq Scan on listings") {
					t.Errorf("sequential scan for %s:\n%s\n%s", q, stmt.sql, plan)
				}
			}
			// A statement without filters runs on its generic plan (see
			// genericPlans), made once for every site: it must walk the
			// order's index as the plan for the site would.
			if lq.generic {
				for _, stmt := range []struct {
					sql  string
					args []any
				}{{lq.page, lq.args}, {lq.count, lq.countArgs}} {
					plan := explainGeneric(t, e, stmt.sql, stmt.args)
					if strings.Contains(plan, "Seq Scan on listings") || strings.Contains(plan, "Bitmap Heap Scan on listings") ||
						!strings.Contains(plan, "using listings_site_") {
						t.Errorf("the generic plan of %s does not walk its index:\n%s\n%s", q, stmt.sql, plan)
					}
				}
				if f.offset() > 0 && !strings.Contains(explainGeneric(t, e, page, args), "Index Only Scan") {
					t.Errorf("the generic plan of deep page %s reads the listings it skips", q)
				}
			}
			// A narrow search finds its matches in the full-text index; a
			// broad one walks the newest listings down to its window.
			if want, ok := map[string]string{"q=richmond7": "listings_site_search",
				"q=home": "listings_site_modified"}[q]; ok {
				if plan := explain(t, e, page, args); !strings.Contains(plan, want) {
					t.Errorf("search %s does not use %s:\n%s", q, want, plan)
				}
			}
			// A ranked search chooses its window without the vectors and
			// reads each ranked match's vector back by the row's address
			// (a Tid Scan), not by looking each match up again by ref.
			if lq.pageCounts && lq.custom {
				plan := explain(t, e, page, args)
				if strings.Contains(plan, "SubPlan") {
					t.Errorf("search %s looks up each match to rank it:\n%s", q, plan)
				}
				if !strings.Contains(plan, "Tid Scan on listings") {
					t.Errorf("search %s does not read its window's vectors by address:\n%s", q, plan)
				}
			}
			// A deep page skips its offset in an index alone; ordered by
			// modification or creation, it counts its total from its own
			// first row, in the index from that row on (TestTotalBounded
			// holds the totals): counted from the first match, page 200
			// walked its 3,980 refs again.
			if f.offset() > 0 && !search {
				plan := explain(t, e, page, args)
				if !strings.Contains(plan, "Index Only Scan") {
					t.Errorf("deep page %s reads the listings it skips:\n%s", q, plan)
				}
				if _, _, _, ok := deepPageCount(f.sort); ok && !strings.Contains(plan, "(ROW(modified_at, ref) <= ROW(") &&
					!strings.Contains(plan, "(ROW(created_at, ref) <= ROW(") {
					t.Errorf("deep page %s does not count from its first row:\n%s", q, plan)
				}
			}
		})
	}
	// A search keeps the plan of its own words however often it runs. A
	// prepared statement would switch to a generic plan after five runs,
	// and the generic plan of a search finds every match of a broad word in
	// the full-text index, then sorts them all: here a connection that ran
	// the same searches a dozen times holds no generic plan of any of them.
	t.Run("repeated searches", func(t *testing.T) {
		one := openOneConn(t, e)
		svc := New(Config{DB: one})
		for i := 0; i < 12; i++ {
			// A broad word, a prefix, a narrow word, a search sorted by price
			// (page and count apart) and a page past the ranked window (its
			// count apart).
			for _, q := range []string{"q=home", "q=descr", "q=4321", "q=kitchens&sort=-price", "q=home&page=400"} {
				rec := httptest.NewRecorder()
				r := httptest.NewRequest("GET", "/v1/sites/"+e.site+"/listings/search?"+q, nil)
				if err := svc.search(rec, r, site{id: e.site, loc: time.UTC}); err != nil || rec.Code != http.StatusOK {
					t.Fatalf("%s: %v %d", q, err, rec.Code)
				}
				if !strings.Contains(q, "page=") && !strings.Contains(rec.Body.String(), `"listing_ref"`) {
					t.Fatalf("%s found nothing: %s", q, rec.Body.String())
				}
			}
		}
		stmts := preparedStatements(t, one, `statement LIKE '%@@%'`)
		for _, st := range stmts {
			if st.Generic > 0 {
				t.Errorf("a search ran on a generic plan %d times (%d custom):\n%s", st.Generic, st.Custom, st.SQL)
			}
		}
	})
	// Pages without filters run on their generic plans, planned once by
	// the connection (TestQueriesUseIndexes checks those plans above):
	// Postgres otherwise plans each run again with the site, for longer
	// than the run takes. The setting ends with the request's batch: the
	// connection's searches afterwards keep their own plans.
	t.Run("plain pages run generic plans", func(t *testing.T) {
		one := openOneConn(t, e)
		svc := New(Config{DB: one})
		plain := []string{"", "page=10", "sort=-price&page=3", "sort=suburb", "status=sold&sort=created"}
		for i := 0; i < 8; i++ {
			for _, q := range plain {
				for _, st := range []site{{id: e.site, loc: time.UTC}, {id: small.site, loc: time.UTC}} {
					rec := httptest.NewRecorder()
					r := httptest.NewRequest("GET", "/v1/sites/"+st.id+"/listings?"+q, nil)
					if err := svc.list(rec, r, st); err != nil || rec.Code != http.StatusOK ||
						!strings.Contains(rec.Body.String(), `"listing_ref"`) {
						t.Fatalf("%s: %v %d %.200s", q, err, rec.Code, rec.Body.String())
					}
				}
			}
			// A page past the last counts apart.
			rec := httptest.NewRecorder()
			r := httptest.NewRequest("GET", "/v1/sites/"+small.site+"/listings?page=200", nil)
			if err := svc.list(rec, r, site{id: small.site, loc: time.UTC}); err != nil || rec.Code != http.StatusOK ||
				!strings.Contains(rec.Body.String(), `"data":[]`) {
				t.Fatalf("past the last page: %v %d %.200s", err, rec.Code, rec.Body.String())
			}
			rec = httptest.NewRecorder()
			r = httptest.NewRequest("GET", "/v1/sites/"+e.site+"/listings/featured", nil)
			if err := svc.featured(rec, r, site{id: e.site, loc: time.UTC}); err != nil || rec.Code != http.StatusOK {
				t.Fatalf("featured: %v %d", err, rec.Code)
			}
			// A search on the same connection, after the pages.
			rec = httptest.NewRecorder()
			r = httptest.NewRequest("GET", "/v1/sites/"+e.site+"/listings/search?q=home", nil)
			if err := svc.search(rec, r, site{id: e.site, loc: time.UTC}); err != nil || rec.Code != http.StatusOK {
				t.Fatalf("search: %v %d", err, rec.Code)
			}
		}
		var mode string
		if err := one.Pool.QueryRow(ctx, `SHOW plan_cache_mode`).Scan(&mode); err != nil || mode != "auto" {
			t.Errorf("plan_cache_mode %q after the requests (%v): the setting outlived its batch", mode, err)
		}
		stmts := preparedStatements(t, one, `(statement LIKE '%FROM listings l%' OR statement LIKE '%listing_ref = ANY($2)%')`)
		var pages int
		for _, st := range stmts {
			search := strings.Contains(st.SQL, "@@")
			switch {
			case search && st.Generic > 0:
				t.Errorf("a search ran on a generic plan %d times (%d custom):\n%s", st.Generic, st.Custom, st.SQL)
			case !search && (st.Custom > 0 || st.Generic == 0):
				t.Errorf("a page without filters was planned again %d times (%d runs of its generic plan):\n%s",
					st.Custom, st.Generic, st.SQL)
			case !search:
				pages++
			}
		}
		// Page and count of the first pages (every sort's page is a
		// statement of its own), deep pages, featured, and each page's
		// agents, media and inspections.
		if pages < 10 {
			t.Errorf("%d statements of plain pages prepared: %+v", pages, stmts)
		}
	})
	featured := listingFilter{page: page{page: 1, perPage: 20}, statuses: []string{"current"}, sort: "-modified", featuredOnly: true}
	fq := listingSQL(e.site, featured)
	if plan := explain(t, e, fq.page, fq.args); strings.Contains(plan, "Seq Scan on listings") {
		t.Errorf("featured: %s", plan)
	}
	if plan := explainGeneric(t, e, fq.page, fq.args); !fq.generic || !strings.Contains(plan, "using listings_site_featured") {
		t.Errorf("featured: generic %v, its generic plan:\n%s", fq.generic, plan)
	}
}

// openOneConn opens the test's database with a pool of one connection, so
// that every statement a service runs is prepared on that connection
// (preparedStatements reads them back). It is closed when the test ends.
func openOneConn(tb testing.TB, e *testEnv) *store.DB {
	tb.Helper()
	one, err := store.Open(context.Background(), e.db.Pool.Config().ConnString(), store.Options{MaxConns: 1})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(one.Close)
	return one
}

// prepared is a statement prepared on a connection, with how many times
// it ran on its generic plan and on a plan made for its values.
type prepared struct {
	SQL             string
	Generic, Custom int64
}

// preparedStatements are the statements prepared on one's connection that
// where (a condition on pg_prepared_statements) picks.
func preparedStatements(tb testing.TB, one *store.DB, where string) []prepared {
	tb.Helper()
	rows, _ := one.Pool.Query(context.Background(), `SELECT statement, generic_plans, custom_plans FROM pg_prepared_statements
		WHERE `+where+` AND statement NOT LIKE '%pg_prepared_statements%'`)
	stmts, err := pgx.CollectRows(rows, pgx.RowToStructByPos[prepared])
	if err != nil {
		tb.Fatal(err)
	}
	return stmts
}

// explainGeneric is EXPLAIN of the generic plan of sql, the plan a
// prepared statement keeps under plan_cache_mode force_generic_plan
// (genericPlans), made on a connection of its own. The arguments are
// written into the EXECUTE as literals: strings and integers, which is what
// the statements without filters take.
func explainGeneric(tb testing.TB, e *testEnv, sql string, args []any) string {
	tb.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, e.db.Pool.Config().ConnString())
	if err != nil {
		tb.Fatal(err)
	}
	defer conn.Close(ctx)
	lits := make([]string, len(args))
	for i, a := range args {
		switch v := a.(type) {
		case string:
			lits[i] = "'" + strings.ReplaceAll(v, "'", "''") + "'"
		case int, int64:
			lits[i] = fmt.Sprint(v)
		default:
			tb.Fatalf("explainGeneric: argument %d is a %T", i+1, a)
		}
	}
	if _, err := conn.Exec(ctx, "PREPARE generic AS "+sql); err != nil {
		tb.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "SET plan_cache_mode = force_generic_plan"); err != nil {
		tb.Fatal(err)
	}
	rows, err := conn.Query(ctx, "EXPLAIN EXECUTE generic("+strings.Join(lits, ", ")+")")
	return planText(tb, rows, err)
}

func explain(tb testing.TB, e *testEnv, sql string, args []any) string {
	tb.Helper()
	return explainWith(tb, e, "", sql, args)
}

// explainAnalyze is EXPLAIN (ANALYZE, BUFFERS) of sql with args.
func explainAnalyze(tb testing.TB, e *testEnv, sql string, args []any) string {
	tb.Helper()
	return explainWith(tb, e, "(ANALYZE, BUFFERS, COSTS OFF) ", sql, args)
}

// explainWith is EXPLAIN with options (as written after EXPLAIN) of sql.
func explainWith(tb testing.TB, e *testEnv, options, sql string, args []any) string {
	tb.Helper()
	rows, err := e.db.Pool.Query(context.Background(), "EXPLAIN "+options+sql, args...)
	return planText(tb, rows, err)
}

// planText is the text of an EXPLAIN's answer.
func planText(tb testing.TB, rows pgx.Rows, err error) string {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		tb.Fatal(err)
	}
	return strings.Join(lines, "\n")
}

// Explain reports the plans of the statements a request runs: the page
// and its count, each executed (ANALYZE) with its buffers.
func TestExplainReportsTheRequestsPlans(t *testing.T) {
	e := newEnv(t)
	svc := New(Config{DB: e.db})
	for _, target := range []string{"/listings?type=rental&sort=-price&page=3", "/listings/search?q=garden"} {
		plans, err := svc.Explain(context.Background(), e.site, target)
		if err != nil {
			t.Fatal(err)
		}
		if len(plans) != 2 || plans[0].Name != "page" || plans[1].Name != "count" {
			t.Fatalf("%s: plans %+v", target, plans)
		}
		for _, p := range plans {
			if !strings.Contains(p.Plan, "actual time=") || !strings.Contains(p.Plan, "Buffers:") || !strings.Contains(p.SQL, "site_id") {
				t.Errorf("%s %s: not an EXPLAIN (ANALYZE, BUFFERS) of the site's query:\n%s\n%s", target, p.Name, p.SQL, p.Plan)
			}
		}
	}
	if _, err := svc.Explain(context.Background(), e.site, "/listings?per_page=100000"); err == nil {
		t.Error("a request the API refuses was explained")
	}
}
