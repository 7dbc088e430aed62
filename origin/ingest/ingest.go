// Package ingest imports REAXML feeds into Postgres. Listings are applied in
// batches, each listing in its own savepoint, so one bad listing does not
// fail the others; a record older than the stored modTime is skipped; a
// partial record leaves what it omits as it was; agents, media slots and
// inspections follow the record (a media URL clients may not be given —
// anything but absolute http or https with a host — is left out, and the
// listing reported, stored without it); and every batch that changed something
// writes the site's content-changed event to the outbox in the same
// transaction, so the edges drop their cached pages once it commits.
package ingest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/listgate/listgate/origin/store"
	"github.com/listgate/listgate/pkg/reaxml"
)

// BatchSize is how many listings share one transaction.
const BatchSize = 100

// analyzeAfter is how many changed listings make an import refresh the
// tables' statistics when it ends.
const analyzeAfter = 200

// analyzeDuring is how many changed listings make an import refresh the
// tables' statistics while it runs, and again each time the count has
// grown fourfold. A first import into tables the statistics still call
// empty is otherwise planned as scans of "nothing", and every listing costs
// more than the one before (measured: 467/s for the first thousand of a
// 6,000-listing feed, 158/s for the sixth; about 600/s throughout with
// these refreshes).
const analyzeDuring = 500

// Importer imports feeds into one database. Safe for concurrent use; imports
// into one site take turns batch by batch.
type Importer struct {
	db  *store.DB
	log *slog.Logger
}

// New returns an importer writing to db. log nil means slog.Default().
func New(db *store.DB, log *slog.Logger) *Importer {
	if log == nil {
		log = slog.Default()
	}
	return &Importer{db: db, log: log}
}

// Options tune one Import.
type Options struct {
	// Progress, when not nil, is called after every batch with the counts
	// so far and the number of feed bytes read.
	Progress func(c Counts, bytesRead int64)
}

// Import reads a feed and applies it to the site's listings. Listing-level
// problems are counted and listed in the Result; the error is for what
// stops the whole import: an unknown site, the database unreachable, XML
// broken beyond recovery, or ctx ending. Batches committed before such an
// error stay committed, and the Result counts them. Importing the same feed
// again changes nothing.
func (im *Importer) Import(ctx context.Context, siteID string, feed io.Reader, opts Options) (Result, error) {
	var res Result
	site, err := im.db.GetSite(ctx, siteID)
	if err != nil {
		return res, err
	}
	loc, err := time.LoadLocation(site.Timezone)
	if err != nil {
		return res, fmt.Errorf("ingest: site %s time zone %q: %w", site.ID, site.Timezone, err)
	}
	cr := &countingReader{r: feed}
	dec := reaxml.NewDecoder(cr, reaxml.Options{Location: loc})
	batch := make([]*reaxml.Listing, 0, BatchSize)
	agents := map[string]int64{}
	analyzeAt := analyzeDuring
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		err := im.applyBatch(ctx, site.ID, batch, agents, &res)
		batch = batch[:0]
		if c := res.Counts; err == nil && c.Created+c.Updated+c.Deleted >= analyzeAt {
			im.analyze(ctx)
			analyzeAt *= 4
		}
		if opts.Progress != nil {
			opts.Progress(res.Counts, cr.n)
		}
		return err
	}
	for {
		l, err := dec.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		var le *reaxml.ListingError
		if errors.As(err, &le) {
			res.addError(listingID(le.AgentID, le.UniqueID), le.Line, le.Err.Error())
			continue
		}
		if err != nil {
			if ferr := flush(); ferr != nil {
				return res, ferr
			}
			return res, fmt.Errorf("ingest: feed: %w", err)
		}
		batch = append(batch, l)
		if len(batch) == BatchSize {
			if err := flush(); err != nil {
				return res, err
			}
		}
	}
	if err := flush(); err != nil {
		return res, err
	}
	if c := res.Counts; c.Created+c.Updated+c.Deleted >= analyzeAfter {
		// A large import changes the tables' statistics faster than
		// autovacuum catches up; plans made on stale ones (a nested loop
		// over "one" listing) are what the read API would pay for.
		im.analyze(ctx)
	}
	im.log.InfoContext(ctx, "feed imported", "site_id", site.ID, "bytes", cr.n,
		"created", res.Counts.Created, "updated", res.Counts.Updated, "unchanged", res.Counts.Unchanged,
		"deleted", res.Counts.Deleted, "skipped", res.Counts.Skipped, "errors", res.Counts.Errors)
	return res, nil
}

// analyze refreshes the statistics of the tables an import writes. A
// failure is logged, not returned: the import itself succeeded.
func (im *Importer) analyze(ctx context.Context) {
	if _, err := im.db.Pool.Exec(ctx, `ANALYZE listings, listing_agents, media, agents, inspections`); err != nil {
		im.log.WarnContext(ctx, "analyze during import", "err", err)
	}
}

// addError counts a listing error and lists the first MaxErrors.
func (r *Result) addError(id string, line int, msg string) {
	r.Counts.Errors++
	if len(r.Errors) < MaxErrors {
		r.Errors = append(r.Errors, ListingError{ListingID: id, Line: line, Message: msg})
	}
}

// addSkipped lists (within MaxErrors) a listing that was stored without
// some of its media; the listing is counted by what happened to it.
func (r *Result) addSkipped(e ListingError) {
	if len(r.Errors) < MaxErrors {
		r.Errors = append(r.Errors, e)
	}
}

func listingID(agencyID, uniqueID string) string {
	if agencyID == "" && uniqueID == "" {
		return ""
	}
	return agencyID + ":" + uniqueID
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
