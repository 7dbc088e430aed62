// Package ingest imports REAXML feeds into Postgres. The feed is read in
// a goroutine of its own while the batches before it are written (by as
// many connections at once as Writers, a listing's records always in the
// feed's order); a batch of listings (BatchSize) is written in one
// transaction of a few statements over arrays, whatever its size: the
// stored rows read and locked at once, new agents upserted at once, new listings inserted at once, the others
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
	"maps"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

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

// Writers is how many batches an import writes at once, each in its own
// transaction on its own connection, unless Options.Writers says
// otherwise. Postgres's work (the text-search vector, the indexes) is most
// of a first import's cost, and two writers let it use two cores: a first
// import of 100,000 listings ran at 1,280 listings/s with two against 769
// with one, side by side on a two-core machine (20,000: 1,165 and 909
// against 734 and 761). On a machine whose cores are busy with other work
// two gain less (they were measured no faster under a load average of
// 13), and Postgres spends 10-20 % more CPU a listing, the two inserting
// into the same indexes.
const Writers = 2

// Importer imports feeds into one database. Safe for concurrent use; imports
// into one site take turns, import by import.
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
	// Writers is how many batches are written at once; 0 means Writers.
	// It is capped at one less than the database pool's size.
	Writers int
}

// Import reads a feed and applies it to the site's listings. Listing-level
// problems are counted and listed in the Result; the error is for what
// stops the whole import: an unknown site, the database unreachable, XML
// broken beyond recovery, or ctx ending. Batches committed before such an
// error stay committed, and the Result counts them. Importing the same feed
// again changes nothing.
//
// Batches are written by Writers connections at once, but a record always
// applies after every earlier record of the feed for the same listing: a
// batch holding a listing that a batch still being written holds waits
// for it. Results, errors and Progress come in the feed's order.
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
	writers := opts.Writers
	if writers <= 0 {
		writers = Writers
	}
	writers = max(1, min(writers, int(im.db.Pool.Config().MaxConns)-1))

	// Imports into one site take turns, so two feeds racing cannot both
	// create the same listing: the first writer's connection holds the
	// site's lock for the whole import (a crash releases it with the
	// connection).
	conns, err := im.lockSite(ctx, site.ID, writers)
	if err != nil {
		return res, err
	}
	defer im.unlockSite(site.ID, conns)
	writers = len(conns)

	// Three stages, each in a goroutine of its own, one batch apart: the
	// feed is read (XML), the batch before is encoded (JSON, hashes), the
	// ones before that are written. At most 4 + Writers batches are in
	// memory. Import returns only once all have stopped: the feed is the
	// caller's again.
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	read, batches := make(chan parsed, 1), make(chan parsed, 1)
	wg.Go(func() { readBatches(ctx, feed, loc, size, read) })
	wg.Go(func() { prepareBatches(ctx, read, batches) })
	agents := &agentCache{ids: map[string]int64{}}
	jobs := make(chan *job)
	defer close(jobs)
	for _, c := range conns {
		wg.Go(func() {
			for j := range jobs {
				j.err = im.applyBatch(ctx, c, site.ID, j.items, agents, &j.res)
				close(j.done)
			}
		})
	}

	analyzeAt := analyzeDuring
	var bytesRead int64
	var inflight []*job
	var failed error
	var analyzeDue bool
	// finish takes the oldest batch being written: its outcome joins the
	// import's, in the feed's order.
	finish := func() {
		j := inflight[0]
		inflight = inflight[1:]
		<-j.done
		for _, e := range j.errs {
			res.addError(e.ListingID, e.Line, e.Message)
		}
		if j.err != nil {
			if failed == nil {
				failed = j.err
			}
			return
		}
		res.merge(j.res)
		if len(j.items) > 0 {
			if c := res.Counts; c.Created+c.Updated+c.Deleted >= analyzeAt {
				analyzeDue = true
				analyzeAt *= 4
			}
			if opts.Progress != nil && failed == nil {
				opts.Progress(res.Counts, j.bytesRead)
			}
		}
	}
	var feedErr error
	for b := range batches {
		bytesRead = b.bytesRead
		j := &job{items: b.items, errs: b.errs, bytesRead: b.bytesRead, done: make(chan struct{})}
		if len(j.items) == 0 {
			close(j.done)
		} else {
			j.keys = make(map[[2]string]bool, len(j.items))
			for _, it := range j.items {
				j.keys[[2]string{it.l.AgentID, it.l.UniqueID}] = true
			}
			for len(inflight) > 0 && (writing(inflight) >= writers || j.waitsFor(inflight)) {
				finish()
			}
		}
		if analyzeDue && len(j.items) > 0 && failed == nil {
			// On the first writer's connection, once every batch before
			// has been written (a pool may have no other to spare).
			for len(inflight) > 0 {
				finish()
			}
			if failed == nil {
				im.analyze(ctx, conns[0])
			}
			analyzeDue = false
		}
		if failed != nil {
			break
		}
		if len(j.items) > 0 {
			jobs <- j
		}
		inflight = append(inflight, j)
		if b.err != nil {
			feedErr = b.err
			break
		}
	}
	for len(inflight) > 0 {
		finish()
	}
	if failed != nil {
		return res, failed
	}
	if feedErr != nil {
		if errors.Is(feedErr, context.Canceled) || errors.Is(feedErr, context.DeadlineExceeded) {
			return res, feedErr
		}
		return res, fmt.Errorf("ingest: feed: %w", feedErr)
	}
	if err := ctx.Err(); err != nil {
		return res, err
	}
	if c := res.Counts; c.Created+c.Updated+c.Deleted >= analyzeAfter {
		// A large import changes the tables' statistics faster than
		// autovacuum catches up; plans made on stale ones (a nested loop
		// over "one" listing) are what the read API would pay for.
		im.analyze(ctx, conns[0])
	}
	im.log.InfoContext(ctx, "feed imported", "site_id", site.ID, "bytes", bytesRead,
		"created", res.Counts.Created, "updated", res.Counts.Updated, "unchanged", res.Counts.Unchanged,
		"deleted", res.Counts.Deleted, "skipped", res.Counts.Skipped, "errors", res.Counts.Errors)
	return res, nil
}

// job is a batch handed to a writer, with what writing it did.
type job struct {
	items     []*item
	errs      []ListingError // met while reading the batch
	keys      map[[2]string]bool
	bytesRead int64
	done      chan struct{} // closed once written (or refused)
	res       Result        // the batch's outcome, once committed
	err       error         // what stopped the batch
}

// writing counts the batches handed to writers and not finished yet.
func writing(inflight []*job) int {
	n := 0
	for _, j := range inflight {
		if len(j.items) > 0 {
			n++
		}
	}
	return n
}

// waitsFor reports whether a batch being written holds one of j's
// listings: j must then wait for it.
func (j *job) waitsFor(inflight []*job) bool {
	for _, o := range inflight {
		if len(o.keys) > len(j.keys) {
			for k := range j.keys {
				if o.keys[k] {
					return true
				}
			}
			continue
		}
		for k := range o.keys {
			if j.keys[k] {
				return true
			}
		}
	}
	return false
}

// lockSite takes a connection per writer from the pool, the first holding
// the site's import lock (waiting for an import into the site that holds
// it). Writers whose connection the pool cannot give at once are dropped.
func (im *Importer) lockSite(ctx context.Context, siteID string, writers int) ([]*pgxpool.Conn, error) {
	first, err := im.db.Pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("ingest: %w", err)
	}
	// The wait for another import of the site has no statement_timeout;
	// the import's statements then have importStatementTimeout, not the
	// pool's (a request's), until unlockSite resets it.
	if _, err := first.Exec(ctx, `SET statement_timeout = 0`); err != nil {
		first.Hijack().Close(context.Background())
		return nil, fmt.Errorf("ingest: %w", err)
	}
	if _, err := first.Exec(ctx, `SELECT pg_advisory_lock(hashtextextended($1, 7))`, siteID); err != nil {
		first.Hijack().Close(context.Background()) // the lock may have been taken
		return nil, fmt.Errorf("ingest: %w", err)
	}
	conns := []*pgxpool.Conn{first}
	for len(conns) < writers {
		if im.db.Pool.Stat().AcquiredConns()+1 >= im.db.Pool.Config().MaxConns {
			break // the rest of the origin needs connections too
		}
		c, err := im.db.Pool.Acquire(ctx)
		if err != nil {
			break
		}
		conns = append(conns, c)
	}
	for i, c := range conns {
		if _, err := c.Exec(ctx, setImportStatementTimeout); err != nil {
			im.unlockSite(siteID, conns[:i+1])
			for _, c := range conns[i+1:] {
				c.Release()
			}
			return nil, fmt.Errorf("ingest: %w", err)
		}
	}
	return conns, nil
}

// importStatementTimeout bounds each statement of an import (a batch's
// upserts, ANALYZE) in place of the pool's statement_timeout, which is a
// request's.
const importStatementTimeout = 10 * time.Minute

// setImportStatementTimeout sets importStatementTimeout on a connection.
var setImportStatementTimeout = fmt.Sprintf(`SET statement_timeout = %d`, importStatementTimeout.Milliseconds())

// unlockSite gives the site's import lock and the connections back. A
// connection that cannot say it let the lock go is closed instead, which
// lets it go.
func (im *Importer) unlockSite(siteID string, conns []*pgxpool.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// The listing counts the import's transactions added to rows of their
	// connections' own (listing_facets) go to the site's, each in a
	// statement of its own; one that fails leaves them where they are,
	// counted still.
	for _, c := range conns {
		if _, err := c.Exec(ctx, `SELECT listing_facets_compact($1)`, siteID); err != nil {
			im.log.WarnContext(ctx, "listing counts of an import", "site_id", siteID, "err", err)
		}
	}
	if _, err := conns[0].Exec(ctx, `SELECT pg_advisory_unlock(hashtextextended($1, 7))`, siteID); err != nil {
		conns[0].Hijack().Close(ctx)
		conns = conns[1:]
	}
	// Back to the pool's statement_timeout; a connection that cannot say
	// so is closed.
	for _, c := range conns {
		if _, err := c.Exec(ctx, `RESET statement_timeout`); err != nil {
			c.Hijack().Close(ctx)
			continue
		}
		c.Release()
	}
}

// agentCache holds the ids of the agents an import has upserted, in
// batches that committed, so each is written once per import: upserting
// one agent per listing would pile up dead row versions that every later
// lookup of the agent walks.
type agentCache struct {
	mu  sync.Mutex
	ids map[string]int64
}

// snapshot is a copy for one batch to use and add to.
func (c *agentCache) snapshot() map[string]int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.ids)
}

// publish adds a committed batch's agents.
func (c *agentCache) publish(ids map[string]int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	maps.Copy(c.ids, ids)
}

// merge adds a committed batch's outcome.
func (r *Result) merge(b Result) {
	r.Counts.Created += b.Counts.Created
	r.Counts.Updated += b.Counts.Updated
	r.Counts.Unchanged += b.Counts.Unchanged
	r.Counts.Deleted += b.Counts.Deleted
	r.Counts.Skipped += b.Counts.Skipped
	r.Counts.Errors += b.Counts.Errors
	for _, e := range b.Errors {
		if len(r.Errors) == MaxErrors {
			break
		}
		r.Errors = append(r.Errors, e)
	}
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
func (im *Importer) analyze(ctx context.Context, conn *pgxpool.Conn) {
	if _, err := conn.Exec(ctx, `ANALYZE listings, listing_agents, media, agents, inspections`); err != nil {
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
