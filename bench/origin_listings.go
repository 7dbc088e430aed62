package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

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
			return 15 * time.Second
		}
		return 30*time.Second + 3*8*time.Second // 50,000 listings made, then three runs
	}
}

// benchOriginListings measures the origin's listing page (Postgres per
// request, no edge) on a site of 50,000 listings: requests/s and p99 for
// the default page, a filtered page and a search.
func benchOriginListings(args []string) error {
	fs := flag.NewFlagSet("origin-listings", flag.ContinueOnError)
	n := fs.Int("listings", def(50000, 2000), "listings on the site")
	dur := fs.Duration("duration", def(8*time.Second, time.Second), "duration of each run")
	workers := fs.Int("workers", 16, "concurrent clients")
	explain := fs.Bool("explain", false, "print the plans of the main queries")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ctx := context.Background()
	db, cleanup, err := benchDatabase(ctx)
	if err != nil {
		return err
	}
	defer cleanup()
	site, err := db.CreateSite(ctx, "Bench Realty", model.Enterprise, "")
	if err != nil {
		return err
	}
	// Import a generated feed, then copy its listings until the site has n:
	// a full ingest of 50,000 would measure the importer, not the reads.
	base := min(*n, 2000)
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(reaxmlgen.Generate(pw, reaxmlgen.Options{Seed: 5, Listings: base})) }()
	if _, err := ingest.New(db, slog.New(slog.DiscardHandler)).Import(ctx, site.ID, pr, ingest.Options{}); err != nil {
		return err
	}
	copies := (*n + base - 1) / base
	if _, err := db.Pool.Exec(ctx, `INSERT INTO listings (site_id, agency_id, unique_id, type, status, under_offer,
			category, headline, description, suburb, state, postcode, search_address, price, price_shown, bedrooms,
			bathrooms, car_spaces, doc, feed_mod_time, modified_at, created_at)
		SELECT l.site_id, l.agency_id, l.unique_id || '-' || c, l.type, l.status, l.under_offer, l.category,
			l.headline, l.description, l.suburb, l.state, l.postcode, l.search_address, l.price, l.price_shown,
			l.bedrooms, l.bathrooms, l.car_spaces, l.doc, l.feed_mod_time, l.modified_at - (c || ' seconds')::interval,
			l.created_at
		FROM listings l, generate_series(1, $2::int - 1) c WHERE l.site_id = $1`, site.ID, copies); err != nil {
		return err
	}
	if err := vacuum(ctx, db); err != nil {
		return err
	}
	var total int
	db.Pool.QueryRow(ctx, `SELECT count(*) FROM listings WHERE site_id = $1`, site.ID).Scan(&total)

	if *explain {
		for _, q := range []string{
			`SELECT count(*) FROM listings l WHERE l.site_id = $1 AND l.status = 'current'`,
			`SELECT l.ref, l.doc FROM listings l WHERE l.site_id = $1 AND l.status = 'current' ORDER BY l.modified_at DESC, l.ref DESC LIMIT 20`,
		} {
			rows, _ := db.Pool.Query(ctx, "EXPLAIN (ANALYZE, BUFFERS) "+q, site.ID)
			for rows.Next() {
				var line string
				rows.Scan(&line)
				fmt.Println(line)
			}
		}
	}
	const token = "bench-internal-token-0123456789abcdef"
	srv := api.New(api.Config{Ready: db.Ping, Unavailable: store.IsUnavailable, Metrics: db.WritePoolMetrics,
		InternalToken: token, Log: slog.New(slog.DiscardHandler),
		Mounts: []api.Mounter{listings.New(listings.Config{DB: db})}})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: srv.Handler()}
	go hs.Serve(ln)
	defer hs.Close()

	fmt.Printf("origin-listings: site of %d listings, %d clients, %v per run\n", total, *workers, *dur)
	t := reportTable{Title: fmt.Sprintf("The origin alone (Postgres per request), a site of %s listings, %d clients, %v each:", fmtRate(float64(total)), *workers, *dur),
		Header: []string{"page", "requests/s", "p50", "p99", "requests"}}
	runs := map[string]loadResult{}
	for _, q := range []string{"", "?type=residential&min_bedrooms=3&sort=-price", "?q=family+home"} {
		path := "/v1/sites/" + site.ID + "/listings"
		if len(q) > 2 && q[:3] == "?q=" {
			path += "/search"
		}
		url := "http://" + ln.Addr().String() + path + q
		res := closedLoop(ctx, *workers, *dur, 1_000_000, func(int) *http.Request {
			req, _ := http.NewRequest("GET", url, nil)
			req.Header.Set(api.HeaderInternalToken, token)
			req.Header.Set(api.HeaderSite, site.ID)
			req.Header.Set(api.HeaderKeyID, "bench")
			req.Header.Set(api.HeaderScopes, "listings:read")
			return req
		}, nil)
		name := strings.TrimPrefix(path, "/v1/sites/"+site.ID) + q
		fmt.Printf("origin-listings: %-45s %s\n", name, res)
		runs[name] = res
		t.Rows = append(t.Rows, []string{"`" + name + "`", fmtRate(res.rps()), fmtMs(ms(res.P50)), fmtMs(ms(res.P99)), fmt.Sprint(res.Requests)})
		summarize("origin-listings", "%s: %s req/s, p50 %s, p99 %s", name, fmtRate(res.rps()), fmtMs(ms(res.P50)), fmtMs(ms(res.P99)))
		if res.Requests == 0 || res.Statuses[200] != res.Requests {
			return fmt.Errorf("%s: %s", name, res)
		}
	}
	addTable("origin-listings", t)
	return writeResults("origin-listings", map[string]any{"listings": total, "workers": *workers, "duration_s": dur.Seconds(), "runs": runs})
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
