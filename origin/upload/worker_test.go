package upload

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/listgate/listgate/origin/ingest"
	"github.com/listgate/listgate/origin/store"
	"github.com/listgate/listgate/origin/store/storetest"
	"github.com/listgate/listgate/pkg/reaxml"
)

// countsTotal is the number of listing records an import accounted for.
func countsTotal(c ingest.Counts) int {
	return c.Created + c.Updated + c.Unchanged + c.Deleted + c.Skipped + c.Errors
}

// Each sample feed, plain and gzipped, is imported by a worker: its status
// ends done, with every listing accounted for. Waits on ingest.Import.
func TestSampleFeedsImported(t *testing.T) {
	h := newHarness(t, nil)
	h.run()
	samples := mustSamples(t)
	names := make([]string, 0, len(samples))
	for name := range samples {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		feed := samples[name]
		listings := bytes.Count(feed, []byte("<uniqueID>"))
		counts := map[bool]ingest.Counts{}
		for _, gzipped := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/gzip=%v", name, gzipped), func(t *testing.T) {
				_, token := h.mustSiteToken() // a fresh site for each upload
				st := h.mustAwaitFeed(token, h.mustUpload(token, feed, gzipped))
				if st.Status != store.FeedDone {
					t.Fatalf("status %s, errors %+v", st.Status, st.Errors)
				}
				if got := countsTotal(st.Counts); got != listings {
					t.Errorf("counts %+v account for %d listings, the feed has %d", st.Counts, got, listings)
				}
				if st.StartedAt == nil || st.FinishedAt == nil || st.FinishedAt.Before(*st.StartedAt) {
					t.Errorf("started %v, finished %v", st.StartedAt, st.FinishedAt)
				}
				counts[gzipped] = st.Counts
			})
		}
		if len(counts) == 2 && counts[false] != counts[true] {
			t.Errorf("%s: plain gave %+v, gzip %+v", name, counts[false], counts[true])
		}
	}
}

// Uploading the same feed again changes nothing. Waits on ingest.Import.
func TestSecondUploadIsUnchanged(t *testing.T) {
	h := newHarness(t, nil)
	h.run()
	_, token := h.mustSiteToken()
	feed := mustSample(t, "reasample_residential.xml")
	first := h.mustAwaitFeed(token, h.mustUpload(token, feed, false))
	second := h.mustAwaitFeed(token, h.mustUpload(token, feed, true))
	if first.Status != store.FeedDone || second.Status != store.FeedDone {
		t.Fatalf("statuses %s, %s; errors %+v, %+v", first.Status, second.Status, first.Errors, second.Errors)
	}
	if first.Counts.Created == 0 {
		t.Errorf("first import created nothing: %+v", first.Counts)
	}
	want := ingest.Counts{Unchanged: first.Counts.Created + first.Counts.Updated,
		Skipped: first.Counts.Skipped, Errors: first.Counts.Errors}
	if second.Counts != want {
		t.Errorf("second import %+v, want %+v", second.Counts, want)
	}
	// An applied feed is not kept: it names people.
	var kept int
	if err := h.db.Pool.QueryRow(context.Background(), `SELECT count(*) FROM feed_jobs WHERE body IS NOT NULL`).Scan(&kept); err != nil || kept != 0 {
		t.Errorf("%d finished jobs keep their feed (%v)", kept, err)
	}
}

// insertDeadJob stores a job as an origin that died mid-import leaves it:
// processing, its lease run out.
func insertDeadJob(tb testing.TB, db *store.DB, siteID string, feed []byte, attempts int) string {
	tb.Helper()
	var id string
	err := db.Pool.QueryRow(context.Background(), `INSERT INTO feed_jobs
		(site_id, status, body, body_size, attempts, lease_until, started_at)
		VALUES ($1, 'processing', $2, $3, $4, now() - interval '1 minute', now() - interval '2 minutes')
		RETURNING id`, siteID, gzipBytes(tb, mustRedact(tb, feed)), len(feed), attempts).Scan(&id)
	if err != nil {
		tb.Fatal(err)
	}
	return id
}

func mustAttempts(tb testing.TB, db *store.DB, id string) int {
	tb.Helper()
	var n int
	if err := db.Pool.QueryRow(context.Background(), `SELECT attempts FROM feed_jobs WHERE id = $1`, id).Scan(&n); err != nil {
		tb.Fatal(err)
	}
	return n
}

// A job left processing by a dead origin is finished by the next one.
// Waits on ingest.Import.
func TestCrashedJobIsResumed(t *testing.T) {
	h := newHarness(t, nil)
	site, token := h.mustSiteToken()
	id := insertDeadJob(t, h.db, site.ID, mustSample(t, "reasample_rural.xml"), 1)
	h.run()
	st := h.mustAwaitFeed(token, id)
	if st.Status != store.FeedDone || st.Counts.Created == 0 {
		t.Fatalf("resumed job: %s %+v %+v", st.Status, st.Counts, st.Errors)
	}
	if n := mustAttempts(t, h.db, id); n != 2 {
		t.Errorf("attempts %d, want 2", n)
	}
}

// The worker gives the importer the stored (redacted, decompressed) feed
// and records what it reports.
func TestWorkerRecordsImportResult(t *testing.T) {
	imp := &fakeImporter{result: ingest.Result{
		Counts: ingest.Counts{Created: 2, Skipped: 1, Errors: 1},
		Errors: []ingest.ListingError{{ListingID: "XNWXNW:ABCD1234", Line: 17, Message: "auction@date: cannot read \"soon\" as date"}},
	}}
	h := newHarness(t, withImporter(imp))
	h.run()
	_, token := h.mustSiteToken()
	feed := mustSample(t, "reasample_residential.xml")
	st := h.mustAwaitFeed(token, h.mustUpload(token, feed, true))
	if st.Status != store.FeedDone || st.Counts != imp.result.Counts || len(st.Errors) != 1 || st.Errors[0] != imp.result.Errors[0] {
		t.Fatalf("status %+v", st)
	}
	calls := imp.calls()
	if len(calls) != 1 || !bytes.Equal(calls[0], mustRedact(t, feed)) {
		t.Fatalf("importer got %d feeds; first is the redacted upload: %v", len(calls), len(calls) == 1 && bytes.Equal(calls[0], mustRedact(t, feed)))
	}
}

// A feed whose import keeps failing is tried MaxAttempts times, then fails
// with a feed-level error entry that reveals no internal detail.
func TestWorkerFailsAfterThreeAttempts(t *testing.T) {
	for name, c := range map[string]struct {
		err  error
		want string
	}{
		"database down":     {errors.New("store: dial tcp 10.0.0.7:5432: connection refused"), "could not be imported (tried 3 times)"},
		"not a REAXML feed": {fmt.Errorf("ingest: %w", reaxml.ErrNotREAXML), "not a REAXML feed"},
	} {
		t.Run(name, func(t *testing.T) {
			imp := &fakeImporter{err: c.err, result: ingest.Result{Counts: ingest.Counts{Created: 1}}}
			h := newHarness(t, withImporter(imp))
			h.run()
			_, token := h.mustSiteToken()
			id := h.mustUpload(token, mustSample(t, "reasample_business.xml"), false)
			st := h.mustAwaitFeed(token, id)
			if st.Status != store.FeedFailed || len(st.Errors) != 1 || st.Errors[0].ListingID != "" ||
				!strings.Contains(st.Errors[0].Message, c.want) {
				t.Fatalf("status %+v, want failed with %q", st, c.want)
			}
			if strings.Contains(st.Errors[0].Message, "10.0.0.7") {
				t.Errorf("feed error reveals internal detail: %q", st.Errors[0].Message)
			}
			if n := len(imp.calls()); n != 3 {
				t.Errorf("imported %d times, want 3", n)
			}
			if n := mustAttempts(t, h.db, id); n != 3 {
				t.Errorf("attempts %d, want 3", n)
			}
		})
	}
}

// A job whose every attempt died with its process is failed without a
// fourth try.
func TestJobInterruptedTooOftenFails(t *testing.T) {
	imp := &fakeImporter{}
	h := newHarness(t, withImporter(imp))
	site, token := h.mustSiteToken()
	id := insertDeadJob(t, h.db, site.ID, mustSample(t, "reasample_business.xml"), 3)
	h.run()
	st := h.mustAwaitFeed(token, id)
	if st.Status != store.FeedFailed || len(st.Errors) != 1 || !strings.Contains(st.Errors[0].Message, "interrupted") {
		t.Fatalf("status %+v", st)
	}
	if n := len(imp.calls()); n != 0 {
		t.Errorf("imported %d times, want none", n)
	}
}

// Stopping the workers mid-import leaves the job leased; a later process
// takes it up when the lease runs out.
func TestInterruptedJobSurvivesRestart(t *testing.T) {
	db := storetest.NewDB(t)
	first := &fakeImporter{delay: time.Hour, started: make(chan struct{}, 1)}
	h1 := newHarnessOn(t, db, withImporter(first, func(c *Config) { c.Lease = 500 * time.Millisecond }))
	_, token := h1.mustSiteToken()
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		h1.svc.Run(ctx)
	}()
	id := h1.mustUpload(token, mustSample(t, "reasample_holidayrental.xml"), false)
	select {
	case <-first.started:
	case <-time.After(10 * time.Second):
		t.Fatal("import did not start")
	}
	cancel()
	select {
	case <-stopped:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
	var status string
	var leased bool
	if err := db.Pool.QueryRow(context.Background(), `SELECT status, lease_until > now() FROM feed_jobs WHERE id = $1`, id).
		Scan(&status, &leased); err != nil || status != store.FeedProcessing {
		t.Fatalf("after stop: status %s, leased %v, %v", status, leased, err)
	}

	second := &fakeImporter{result: ingest.Result{Counts: ingest.Counts{Unchanged: 3}}}
	h2 := newHarnessOn(t, db, withImporter(second))
	h2.run()
	st := h2.mustAwaitFeed(token, id)
	if st.Status != store.FeedDone || st.Counts.Unchanged != 3 || len(second.calls()) != 1 {
		t.Fatalf("after restart: %+v, %d imports", st, len(second.calls()))
	}
}

// A NOTIFY from the origin that took the upload wakes the workers of
// another origin, which do not poll in this test.
func TestNotifyWakesAnotherOrigin(t *testing.T) {
	imp := &fakeImporter{}
	worker := newHarness(t, withImporter(imp, func(c *Config) { c.PollInterval = time.Hour }))
	worker.run()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var listening bool
		err := worker.db.Pool.QueryRow(context.Background(), `SELECT EXISTS (SELECT 1 FROM pg_stat_activity
			WHERE datname = current_database() AND query = 'LISTEN `+store.FeedChannel+`' AND state = 'idle')`).Scan(&listening)
		if err != nil {
			t.Fatal(err)
		}
		if listening {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the worker origin never listened")
		}
		time.Sleep(10 * time.Millisecond)
	}
	front := newHarnessOn(t, worker.db, withImporter(&fakeImporter{})) // takes uploads, runs no workers
	_, token := front.mustSiteToken()
	st := front.mustAwaitFeed(token, front.mustUpload(token, mustSample(t, "reasample_rural.xml"), false))
	if st.Status != store.FeedDone || len(imp.calls()) != 1 {
		t.Fatalf("status %s after %d imports by the notified origin", st.Status, len(imp.calls()))
	}
}

// Two origins' workers share the queue: every job is imported exactly once,
// even when an import outlasts the lease (the lease is renewed).
func TestWorkersShareTheQueue(t *testing.T) {
	// Imports take 1.5 leases; renewals come every third of one.
	slow := func(c *Config) { c.Lease = time.Second; c.Workers = 3 }
	impA := &fakeImporter{delay: 1500 * time.Millisecond}
	impB := &fakeImporter{delay: 1500 * time.Millisecond}
	a := newHarness(t, withImporter(impA, slow))
	b := newHarnessOn(t, a.db, withImporter(impB, slow))
	a.run()
	b.run()
	_, token := a.mustSiteToken()
	const jobs = 6
	var ids []string
	for i := range jobs {
		feed := fmt.Appendf(nil, "<propertyList><!-- job %d --></propertyList>", i)
		ids = append(ids, a.mustUpload(token, feed, i%2 == 0))
	}
	for _, id := range ids {
		if st := a.mustAwaitFeed(token, id); st.Status != store.FeedDone {
			t.Fatalf("feed %s: %+v", id, st)
		}
	}
	seen := map[string]int{}
	for _, f := range append(impA.calls(), impB.calls()...) {
		seen[string(f)]++
	}
	if len(seen) != jobs {
		t.Errorf("%d distinct feeds imported, want %d", len(seen), jobs)
	}
	for f, n := range seen {
		if n != 1 {
			t.Errorf("%s imported %d times", f, n)
		}
	}
	for _, id := range ids {
		if n := mustAttempts(t, a.db, id); n != 1 {
			t.Errorf("feed %s took %d attempts", id, n)
		}
	}
}
