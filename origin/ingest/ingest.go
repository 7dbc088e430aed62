// Package ingest imports REAXML feeds into Postgres. The feed is read in
// a goroutine of its own while the batch before it is written; a batch of
// listings (BatchSize) is written in one transaction of a few statements
// over arrays, whatever its size: the stored rows read and locked at once,
// new agents upserted at once, new listings inserted at once, the others
// updated and every listing's parts replaced in one round trip. One bad
// listing does not fail the others: when the database refuses a batch, it
// is split in halves, each in a savepoint, down to the listing refused. A
// record older than the stored modTime is skipped; a partial record leaves
// what it omits as it was; agents, media slots and inspections follow the
// record (a media URL clients may not be given — anything but absolute
// http or https with a host — is left out, and the listing reported, stored
// without it); and every batch that changed something writes the site's
// content-changed event to the outbox in the same transaction, so the edges
// drop their cached pages once it commits.
package ingest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/listgate/listgate/origin/store"
	"github.com/listgate/listgate/pkg/reaxml"
)

// BatchSize is how many listings share one transaction, unless
// Options.BatchSize says otherwise.
const BatchSize = 500

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
	// BatchSize is how many listings share one transaction; 0 means
	// BatchSize.
	BatchSize int
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
	size := opts.BatchSize
	if size <= 0 {
		size = BatchSize
	}
	// Three stages, each in a goroutine of its own, one batch apart: the
	// feed is read (XML), the batch before is encoded (JSON, hashes), the
	// one before that is written. At most five batches are in memory.
	// Import returns only once both have stopped: the feed is the caller's
	// again.
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	read, batches := make(chan parsed, 1), make(chan parsed, 1)
	wg.Go(func() { readBatches(ctx, feed, loc, size, read) })
	wg.Go(func() { prepareBatches(ctx, read, batches) })
	agents := map[string]int64{}
	analyzeAt := analyzeDuring
	var bytesRead int64
	for b := range batches {
		bytesRead = b.bytesRead
		for _, e := range b.errs {
			res.addError(e.ListingID, e.Line, e.Message)
		}
		if len(b.items) > 0 {
			if err := im.applyBatch(ctx, site.ID, b.items, agents, &res); err != nil {
				return res, err
			}
			if c := res.Counts; c.Created+c.Updated+c.Deleted >= analyzeAt {
				im.analyze(ctx)
				analyzeAt *= 4
			}
			if opts.Progress != nil {
				opts.Progress(res.Counts, b.bytesRead)
			}
		}
		if b.err != nil {
			if errors.Is(b.err, context.Canceled) || errors.Is(b.err, context.DeadlineExceeded) {
				return res, b.err
			}
			return res, fmt.Errorf("ingest: feed: %w", b.err)
		}
	}
	if err := ctx.Err(); err != nil {
		return res, err
	}
	if c := res.Counts; c.Created+c.Updated+c.Deleted >= analyzeAfter {
		// A large import changes the tables' statistics faster than
		// autovacuum catches up; plans made on stale ones (a nested loop
		// over "one" listing) are what the read API would pay for.
		im.analyze(ctx)
	}
	im.log.InfoContext(ctx, "feed imported", "site_id", site.ID, "bytes", bytesRead,
		"created", res.Counts.Created, "updated", res.Counts.Updated, "unchanged", res.Counts.Unchanged,
		"deleted", res.Counts.Deleted, "skipped", res.Counts.Skipped, "errors", res.Counts.Errors)
	return res, nil
}

// parsed is a batch of a feed's listings, prepared, with the listing
// errors met while reading it; err, on the last batch, is what stopped the
// feed before its end.
type parsed struct {
	listings  []*reaxml.Listing // as read
	items     []*item           // as prepared
	errs      []ListingError
	bytesRead int64
	err       error
}

// readBatches reads a feed into batches of at most size listings with
// distinct keys (a record repeating one of its batch's keys starts the
// next batch, so that it applies over the first), sends them to out in
// the feed's order and closes out. It stops early when ctx ends.
func readBatches(ctx context.Context, feed io.Reader, loc *time.Location, size int, out chan<- parsed) {
	defer close(out)
	cr := &countingReader{r: feed}
	dec := reaxml.NewDecoder(cr, reaxml.Options{Location: loc})
	var listings []*reaxml.Listing
	var errs []ListingError
	keys := map[[2]string]bool{}
	send := func(err error) bool {
		b := parsed{listings: listings, errs: errs, bytesRead: cr.n, err: err}
		listings, errs = nil, nil
		clear(keys)
		select {
		case out <- b:
			return true
		case <-ctx.Done():
			return false
		}
	}
	for {
		if ctx.Err() != nil {
			return
		}
		l, err := dec.Next()
		if errors.Is(err, io.EOF) {
			send(nil)
			return
		}
		var le *reaxml.ListingError
		if errors.As(err, &le) {
			errs = append(errs, ListingError{ListingID: listingID(le.AgentID, le.UniqueID), Line: le.Line, Message: le.Err.Error()})
			continue
		}
		if err != nil {
			send(err)
			return
		}
		k := [2]string{l.AgentID, l.UniqueID}
		if keys[k] && !send(nil) {
			return
		}
		keys[k] = true
		listings = append(listings, l)
		if len(listings) == size && !send(nil) {
			return
		}
	}
}

// prepareBatches prepares the listings of the batches from in, sends them
// to out and closes out. It stops early when ctx ends.
func prepareBatches(ctx context.Context, in <-chan parsed, out chan<- parsed) {
	defer close(out)
	for b := range in {
		b.items, b.listings = prepare(b.listings), nil
		select {
		case out <- b:
		case <-ctx.Done():
			return
		}
	}
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
