package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/listgate/listgate/origin/ingest"
	"github.com/listgate/listgate/pkg/devdb"
	"github.com/listgate/listgate/pkg/model"
	"github.com/listgate/listgate/pkg/reaxml"
	"github.com/listgate/listgate/pkg/reaxml/reaxmlgen"
)

func init() {
	scenarios["ingest"] = benchIngest
	plans["ingest"] = func(q bool) time.Duration {
		if q {
			return 8 * time.Second
		}
		return 40 * time.Second // 5,000 listings at about 200/s, and a cluster
	}
}

// benchIngest measures REAXML listings parsed per second and imported per
// second into a throwaway Postgres, on a generated feed, with the peak heap,
// and checks that every listing was created.
func benchIngest(args []string) error {
	fs := flag.NewFlagSet("ingest", flag.ContinueOnError)
	n := fs.Int("listings", def(5000, 300), "listings in the generated feed")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var feed bytes.Buffer
	if err := reaxmlgen.Generate(&feed, reaxmlgen.Options{Seed: 42, Listings: *n}); err != nil {
		return err
	}
	fmt.Printf("ingest: generated feed of %d listings, %.1f MiB\n", *n, float64(feed.Len())/(1<<20))

	// Parse only.
	start := time.Now()
	dec := reaxml.NewDecoder(bytes.NewReader(feed.Bytes()), reaxml.Options{})
	parsed := 0
	for {
		_, err := dec.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		var le *reaxml.ListingError
		if err != nil && !errors.As(err, &le) {
			return err
		}
		parsed++
	}
	parseDur := time.Since(start)

	// Parse and import.
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
	var peak uint64
	var ms runtime.MemStats
	start = time.Now()
	res, err := ingest.New(db, slog.New(slog.DiscardHandler)).Import(ctx, site.ID, bytes.NewReader(feed.Bytes()),
		ingest.Options{Progress: func(ingest.Counts, int64) {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
		}})
	importDur := time.Since(start)
	if err != nil {
		return err
	}
	parseRate, importRate := float64(parsed)/parseDur.Seconds(), float64(*n)/importDur.Seconds()
	fmt.Printf("ingest: parse  %8.0f listings/s  (%d in %v)\n", parseRate, parsed, parseDur.Round(time.Millisecond))
	fmt.Printf("ingest: import %8.0f listings/s  (%+v in %v), peak heap %.1f MiB (feed held in memory: %.1f MiB)\n",
		importRate, res.Counts, importDur.Round(time.Millisecond),
		float64(peak)/(1<<20), float64(feed.Len())/(1<<20))
	summarize("ingest", "feed of %d listings (%.1f MiB): parse %s listings/s, parse and import %s listings/s (parse / import = %s), peak heap %.1f MiB",
		*n, float64(feed.Len())/(1<<20), fmtRate(parseRate), fmtRate(importRate), fmtRatio(parseRate/importRate), float64(peak)/(1<<20))
	addTable("ingest", reportTable{Title: fmt.Sprintf("A generated REAXML feed of %d listings (%.1f MiB):", *n, float64(feed.Len())/(1<<20)),
		Header: []string{"", "listings/s", "time", "ratio"},
		Rows: [][]string{
			{"parse only (pkg/reaxml)", fmtRate(parseRate), parseDur.Round(time.Millisecond).String(), ""},
			{"parse and import into Postgres", fmtRate(importRate), importDur.Round(time.Millisecond).String(),
				"parse / import = **" + fmtRatio(parseRate/importRate) + "**"},
		}})
	addBars("ingest", barChart{Name: "throughput", Title: fmt.Sprintf("REAXML ingest, %d listings", *n), Unit: "listings/s", Ref: 0,
		Bars: []chartBar{{"parse", parseRate}, {"parse+import", importRate}}})
	writeResults("ingest", map[string]any{"listings": *n, "feed_bytes": feed.Len(), "parsed": parsed,
		"parse_per_second": parseRate, "import_per_second": importRate, "counts": res.Counts,
		"peak_heap_bytes": peak, "parse_s": parseDur.Seconds(), "import_s": importDur.Seconds()})
	// Every record accounted for (the generated feed has a few status
	// stubs for listings the site never had: skipped), none an error.
	c := res.Counts
	if parsed != *n || c.Created+c.Updated+c.Unchanged+c.Deleted+c.Skipped != *n || c.Errors != 0 || c.Created == 0 {
		return fmt.Errorf("a feed of %d listings: %d parsed, import %+v", *n, parsed, res.Counts)
	}
	return nil
}

// startBenchPostgres starts a throwaway cluster with a database "bench".
func startBenchPostgres(ctx context.Context) (*devdb.Postgres, error) {
	pg, err := devdb.StartPostgres(ctx, devdb.PostgresOptions{})
	if err != nil {
		return nil, err
	}
	conn, err := pgx.Connect(ctx, pg.URL)
	if err != nil {
		pg.Close()
		return nil, err
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE bench"); err != nil {
		pg.Close()
		return nil, err
	}
	var version, fsync, syncCommit string
	if conn.QueryRow(ctx, `SELECT current_setting('server_version'), current_setting('fsync'), current_setting('synchronous_commit')`).
		Scan(&version, &fsync, &syncCommit) == nil {
		noteMachine("postgres", fmt.Sprintf("PostgreSQL %s (fsync=%s, synchronous_commit=%s: a throwaway cluster)", version, fsync, syncCommit))
	}
	return pg, nil
}
