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

func init() { scenarios["ingest"] = benchIngest }

// benchIngest measures REAXML listings parsed per second and imported per
// second into a throwaway Postgres, on a generated feed, with the peak heap.
func benchIngest(args []string) error {
	fs := flag.NewFlagSet("ingest", flag.ContinueOnError)
	n := fs.Int("listings", 10000, "listings in the generated feed")
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
	fmt.Printf("ingest: parse  %8.0f listings/s  (%d in %v)\n", float64(parsed)/parseDur.Seconds(), parsed, parseDur.Round(time.Millisecond))
	fmt.Printf("ingest: import %8.0f listings/s  (%+v in %v), peak heap %.1f MiB (feed held in memory: %.1f MiB)\n",
		float64(*n)/importDur.Seconds(), res.Counts, importDur.Round(time.Millisecond),
		float64(peak)/(1<<20), float64(feed.Len())/(1<<20))
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
	return pg, nil
}
