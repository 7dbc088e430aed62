package upload

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	json "github.com/goccy/go-json"

	"github.com/listgate/listgate/origin/ingest"
	"github.com/listgate/listgate/origin/store"
	"github.com/listgate/listgate/pkg/apierror"
	"github.com/listgate/listgate/pkg/reaxml"
)

// errLeaseLost cancels an import whose job another worker has taken.
var errLeaseLost = errors.New("upload: lease on the feed job lost")

// finishTimeout bounds the write of a job's outcome, which is made even
// while the service stops so that finished work is not redone.
const finishTimeout = 10 * time.Second

// work is one worker: it processes jobs while there are any, then waits for
// a wake-up or the next poll.
func (s *Service) work(ctx context.Context) {
	poll := time.NewTicker(s.cfg.PollInterval)
	defer poll.Stop()
	for {
		for ctx.Err() == nil && s.runOne(ctx) {
		}
		select {
		case <-ctx.Done():
			return
		case <-s.wake:
		case <-poll.C:
			s.purgeTokens(ctx)
		}
	}
}

// runOne claims and processes one job. It reports whether it found one.
func (s *Service) runOne(ctx context.Context) bool {
	job, ok, err := s.db.ClaimFeedJob(ctx, s.cfg.Lease)
	if err != nil {
		if ctx.Err() == nil {
			s.log.ErrorContext(ctx, "claim feed job", "err", err)
		}
		return false
	}
	if !ok {
		return false
	}
	s.process(ctx, job)
	return true
}

// process imports a claimed job and records the outcome: done, a retry
// after RetryDelay·attempt, or failed after MaxAttempts. When ctx ends
// mid-import the job keeps its lease and is resumed once it runs out.
func (s *Service) process(ctx context.Context, job store.ClaimedFeedJob) {
	log := s.log.With("feed_id", job.ID, "site_id", job.SiteID, "attempt", job.Attempt)
	if job.Attempt > s.cfg.MaxAttempts {
		// Earlier attempts died with their process (or lost their lease).
		log.ErrorContext(ctx, "feed import failed: every attempt was interrupted")
		s.finish(ctx, log, job, store.FeedFailed, ingest.Result{}, &interruptedError{s.cfg.MaxAttempts})
		return
	}
	log.InfoContext(ctx, "feed import started")
	start := time.Now()
	jobCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stopLease := s.keepLease(jobCtx, cancel, job, log)
	res, err := s.importJob(jobCtx, job)
	stopLease()

	switch {
	case err == nil:
		log.InfoContext(ctx, "feed imported", "duration_ms", time.Since(start).Milliseconds(),
			"created", res.Counts.Created, "updated", res.Counts.Updated, "unchanged", res.Counts.Unchanged,
			"deleted", res.Counts.Deleted, "skipped", res.Counts.Skipped, "errors", res.Counts.Errors)
		s.finish(ctx, log, job, store.FeedDone, res, nil)
	case errors.Is(context.Cause(jobCtx), errLeaseLost):
		log.WarnContext(ctx, "feed import abandoned: another worker took the job")
	case ctx.Err() != nil:
		log.InfoContext(ctx, "feed import interrupted; it resumes when its lease runs out")
	case job.Attempt < s.cfg.MaxAttempts:
		delay := s.cfg.RetryDelay * time.Duration(job.Attempt)
		log.WarnContext(ctx, "feed import failed; retrying", "err", err, "retry_in", delay.String())
		wctx, wcancel := context.WithTimeout(context.WithoutCancel(ctx), finishTimeout)
		defer wcancel()
		if _, rerr := s.db.RetryFeedJob(wctx, job.ID, job.Attempt, delay); rerr != nil {
			log.ErrorContext(ctx, "requeue feed job", "err", rerr)
		}
	default:
		log.ErrorContext(ctx, "feed import failed", "err", err)
		s.finish(ctx, log, job, store.FeedFailed, res, err)
	}
}

// importJob decompresses the stored feed and imports it.
func (s *Service) importJob(ctx context.Context, job store.ClaimedFeedJob) (ingest.Result, error) {
	zr, err := gzip.NewReader(bytes.NewReader(job.Body))
	if err != nil {
		return ingest.Result{}, fmt.Errorf("stored feed: %w", err)
	}
	defer zr.Close()
	return s.cfg.Importer.Import(ctx, job.SiteID, zr, ingest.Options{})
}

// keepLease renews the job's lease every third of Lease until the returned
// stop is called (which waits for it to end); it cancels the import with
// errLeaseLost when the job is no longer the worker's.
func (s *Service) keepLease(ctx context.Context, cancel context.CancelCauseFunc, job store.ClaimedFeedJob, log *slog.Logger) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(s.cfg.Lease / 3)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
			}
			held, err := s.db.ExtendFeedLease(ctx, job.ID, job.Attempt, s.cfg.Lease)
			switch {
			case err != nil && ctx.Err() == nil:
				log.WarnContext(ctx, "extend feed lease", "err", err)
			case err == nil && !held:
				cancel(errLeaseLost)
				return
			}
		}
	})
	return func() {
		close(done)
		wg.Wait()
	}
}

// finish records a job's outcome; a failure adds a feed-level entry to the
// errors. It writes even while ctx ends, so that finished work is kept.
func (s *Service) finish(ctx context.Context, log *slog.Logger, job store.ClaimedFeedJob, status string, res ingest.Result, cause error) {
	errs := res.Errors
	if errs == nil {
		errs = []ingest.ListingError{}
	}
	if cause != nil {
		errs = append(errs, ingest.ListingError{Message: publicFeedError(cause, s.cfg.MaxAttempts)})
	}
	counts, err := json.Marshal(res.Counts)
	if err != nil {
		log.ErrorContext(ctx, "encode feed counts", "err", err)
		return
	}
	errJSON, err := json.Marshal(errs)
	if err != nil {
		log.ErrorContext(ctx, "encode feed errors", "err", err)
		return
	}
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), finishTimeout)
	defer cancel()
	held, err := s.db.FinishFeedJob(wctx, job.ID, job.Attempt, status, counts, errJSON)
	switch {
	case err != nil:
		log.ErrorContext(ctx, "record feed outcome", "err", err)
	case !held:
		log.WarnContext(ctx, "feed outcome not recorded: another worker took the job")
	}
}

// publicFeedError is what the feed's status says about a failure: the
// feed's own problem as it is, anything else (a database failure, a bug) in
// general terms, since its detail is for the log.
func publicFeedError(err error, attempts int) string {
	var syntax *xml.SyntaxError
	var interrupted *interruptedError
	var ae *apierror.Error
	switch {
	case errors.Is(err, reaxml.ErrNotREAXML), errors.As(err, &syntax), errors.As(err, &interrupted):
		return err.Error()
	case errors.As(err, &ae) && ae.Code != apierror.CodeInternalError && ae.Code.Known():
		return ae.Message
	}
	return fmt.Sprintf("the feed could not be imported (tried %d times); contact support", attempts)
}

// interruptedError fails a job whose every attempt died with its process
// or lost its lease.
type interruptedError struct{ attempts int }

func (e *interruptedError) Error() string {
	return fmt.Sprintf("gave up after %d interrupted attempts", e.attempts)
}
