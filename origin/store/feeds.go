package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Feed job statuses.
const (
	FeedQueued     = "queued"
	FeedProcessing = "processing"
	FeedDone       = "done"
	FeedFailed     = "failed"
)

// FeedChannel is the LISTEN/NOTIFY channel on which a new feed job is
// announced, in the transaction that inserts it; the payload is the job id.
const FeedChannel = "listgate_feeds"

// FeedJob is an uploaded feed and the outcome of its import. Counts and
// Errors are the JSON the importer reported ({} and [] until then).
type FeedJob struct {
	ID         string
	SiteID     string
	ClientID   string
	Status     string
	BodySize   int64
	Counts     []byte
	Errors     []byte
	Attempts   int
	CreatedAt  time.Time
	StartedAt  *time.Time
	FinishedAt *time.Time
}

// NewFeedJob is the input of InsertFeedJob.
type NewFeedJob struct {
	SiteID   string
	ClientID string
	// Body is the feed, gzip-compressed, with its credentials removed.
	Body []byte
	// BodySize is the size of the feed as uploaded, uncompressed.
	BodySize int64
}

// InsertFeedJob queues a feed and, in the same transaction, notifies
// FeedChannel so that a worker of any origin picks it up.
func (db *DB) InsertFeedJob(ctx context.Context, nj NewFeedJob) (FeedJob, error) {
	j := FeedJob{SiteID: nj.SiteID, ClientID: nj.ClientID, Status: FeedQueued, BodySize: nj.BodySize,
		Counts: []byte("{}"), Errors: []byte("[]")}
	err := db.InTx(ctx, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, `INSERT INTO feed_jobs (site_id, client_id, status, body, body_size)
			VALUES ($1, $2, 'queued', $3, $4) RETURNING id, created_at`,
			nj.SiteID, nj.ClientID, nj.Body, nj.BodySize).Scan(&j.ID, &j.CreatedAt)
		if isInvalidText(err) || isForeignKeyViolation(err) {
			return notFound("site")
		}
		if err != nil {
			return fmt.Errorf("store: insert feed job: %w", err)
		}
		if _, err := tx.Exec(ctx, `SELECT pg_notify($1, $2)`, FeedChannel, j.ID); err != nil {
			return fmt.Errorf("store: notify feed job: %w", err)
		}
		return nil
	})
	if err != nil {
		return FeedJob{}, err
	}
	return j, nil
}

// GetFeedJob returns a site's feed job without its body. A job of another
// site, an unknown or a malformed id is NOT_FOUND.
func (db *DB) GetFeedJob(ctx context.Context, siteID, id string) (FeedJob, error) {
	var j FeedJob
	var clientID *string
	err := db.Pool.QueryRow(ctx, `SELECT id, site_id, client_id, status, body_size, counts, errors, attempts,
			created_at, started_at, finished_at
		FROM feed_jobs WHERE site_id = $1 AND id = $2`, siteID, id).
		Scan(&j.ID, &j.SiteID, &clientID, &j.Status, &j.BodySize, &j.Counts, &j.Errors, &j.Attempts,
			&j.CreatedAt, &j.StartedAt, &j.FinishedAt)
	if errors.Is(err, pgx.ErrNoRows) || isInvalidText(err) {
		return FeedJob{}, notFound("feed")
	}
	if err != nil {
		return FeedJob{}, fmt.Errorf("store: get feed job: %w", err)
	}
	if clientID != nil {
		j.ClientID = *clientID
	}
	return j, nil
}

// ClaimedFeedJob is a job a worker holds. Attempt (the job's attempts
// counter after the claim) fences the worker's later writes: once the lease
// ran out and another worker claimed the job, they change nothing.
type ClaimedFeedJob struct {
	ID      string
	SiteID  string
	Attempt int
	// Body is the stored feed, gzip-compressed.
	Body []byte
}

// ClaimFeedJob takes the oldest job that is queued, or processing with an
// expired lease (its worker died), without waiting for jobs other workers
// are claiming (FOR UPDATE SKIP LOCKED). It sets status processing,
// increments attempts and leases the job for lease from the database's
// clock. ok is false when no job is ready. A queued job whose lease_until
// is in the future (a retry waiting out its delay) is not ready yet. A
// site with a job processing under a live lease has none claimed: an
// import holds its site's lock for its whole run, so a second worker would
// only wait for it while other sites' feeds queue, and a site's feeds are
// applied in the order they came.
func (db *DB) ClaimFeedJob(ctx context.Context, lease time.Duration) (job ClaimedFeedJob, ok bool, err error) {
	err = db.Pool.QueryRow(ctx, `UPDATE feed_jobs j
		SET status = 'processing', attempts = j.attempts + 1,
			lease_until = now() + $1::interval, started_at = coalesce(j.started_at, now())
		FROM (SELECT site_id, id FROM feed_jobs q
			WHERE status IN ('queued', 'processing') AND (lease_until IS NULL OR lease_until <= now())
				AND NOT EXISTS (SELECT 1 FROM feed_jobs r WHERE r.site_id = q.site_id
					AND r.status = 'processing' AND r.lease_until > now())
			ORDER BY created_at LIMIT 1
			FOR UPDATE SKIP LOCKED) c
		WHERE j.site_id = c.site_id AND j.id = c.id
		RETURNING j.id, j.site_id, j.attempts, j.body`, lease).
		Scan(&job.ID, &job.SiteID, &job.Attempt, &job.Body)
	if errors.Is(err, pgx.ErrNoRows) {
		return ClaimedFeedJob{}, false, nil
	}
	if err != nil {
		return ClaimedFeedJob{}, false, fmt.Errorf("store: claim feed job: %w", err)
	}
	return job, true, nil
}

// ExtendFeedLease moves the lease of a job the worker still holds to lease
// from now. It reports false when the worker lost the job.
func (db *DB) ExtendFeedLease(ctx context.Context, id string, attempt int, lease time.Duration) (bool, error) {
	tag, err := db.Pool.Exec(ctx, `UPDATE feed_jobs SET lease_until = now() + $3::interval
		WHERE id = $1 AND attempts = $2 AND status = 'processing'`, id, attempt, lease)
	if err != nil {
		return false, fmt.Errorf("store: extend feed lease: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

// RetryFeedJob puts a job the worker holds back in the queue, ready again
// after delay. It reports false when the worker lost the job.
func (db *DB) RetryFeedJob(ctx context.Context, id string, attempt int, delay time.Duration) (bool, error) {
	tag, err := db.Pool.Exec(ctx, `UPDATE feed_jobs SET status = 'queued',
			lease_until = now() + $3::interval
		WHERE id = $1 AND attempts = $2 AND status = 'processing'`, id, attempt, delay)
	if err != nil {
		return false, fmt.Errorf("store: retry feed job: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

// FinishFeedJob records the outcome of a job the worker holds: status done
// or failed, and the importer's counts and errors as JSON, and drops the
// stored feed: it has been applied, and it names people. It reports false
// when the worker lost the job (nothing is written then).
func (db *DB) FinishFeedJob(ctx context.Context, id string, attempt int, status string, counts, errs []byte) (bool, error) {
	if status != FeedDone && status != FeedFailed {
		return false, fmt.Errorf("store: finish feed job: status %q is not final", status)
	}
	tag, err := db.Pool.Exec(ctx, `UPDATE feed_jobs SET status = $3, counts = $4, errors = $5,
			finished_at = now(), lease_until = NULL, body = NULL
		WHERE id = $1 AND attempts = $2 AND status = 'processing'`, id, attempt, status, counts, errs)
	if err != nil {
		return false, fmt.Errorf("store: finish feed job: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

// ListenFeedJobs holds one connection that listens on FeedChannel. It calls
// ready once listening (jobs announced before then were missed: the caller
// should look for work) and notify for every announcement. It returns when
// ctx ends (nil) or the connection fails (the error); the connection is
// closed, never returned to the pool.
func (db *DB) ListenFeedJobs(ctx context.Context, ready, notify func()) error {
	pc, err := db.Pool.Acquire(ctx)
	if err != nil {
		return listenErr(ctx, err)
	}
	conn := pc.Hijack()
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, `LISTEN `+FeedChannel); err != nil {
		return listenErr(ctx, err)
	}
	ready()
	for {
		if _, err := conn.WaitForNotification(ctx); err != nil {
			return listenErr(ctx, err)
		}
		notify()
	}
}

func listenErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	return fmt.Errorf("store: listen %s: %w", FeedChannel, err)
}
