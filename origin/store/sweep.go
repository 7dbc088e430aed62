package store

import (
	"context"
	"fmt"
	"time"
)

// sweepBatch is how many rows one DELETE of Sweep removes, so that no
// statement holds its locks for long.
const sweepBatch = 5000

// Swept counts what one Sweep removed or expired.
type Swept struct {
	IdempotencyKeys int64
	Sessions        int64
	Usage           int64
	UsageHours      int64
	UsageReports    int64
	Pairings        int64
	FeedJobs        int64
	LimitWindows    int64
	Deliveries      int64
}

// Total is the number of rows Sweep touched.
func (s Swept) Total() int64 {
	return s.IdempotencyKeys + s.Sessions + s.Usage + s.UsageHours + s.UsageReports + s.Pairings + s.FeedJobs + s.LimitWindows + s.Deliveries
}

// FeedJobRetention is how long a finished feed job's status stays readable
// at GET /v1/feeds/{feed_id}.
const FeedJobRetention = 30 * 24 * time.Hour

// Sweep deletes what is past its use at now: idempotency records and
// dashboard sessions that have expired, per-minute usage counts
// older than usageRetention, hourly ones older than UsageHourRetention,
// usage report ids older than UsageReportRetention, feed jobs finished more than
// FeedJobRetention ago, abuse-limit windows that have run out, and
// deliveries finished more than DeliveryRetention ago; and it
// marks pending pairings whose codes have expired as expired. Each kind is
// deleted in batches of sweepBatch rows. Everything swept was already
// ignored by the code that reads it; Sweep only keeps the tables from
// growing. Safe to run from several origins at once. (Expired upload tokens
// are deleted by the upload service itself.)
func (db *DB) Sweep(ctx context.Context, now time.Time, usageRetention time.Duration) (Swept, error) {
	var s Swept
	for _, d := range []struct {
		name, table, column string
		before              time.Time
		n                   *int64
	}{
		{"idempotency keys", "idempotency_keys", "expires_at", now, &s.IdempotencyKeys},
		{"dashboard sessions", "dashboard_sessions", "expires_at", now, &s.Sessions},
		{"usage", "usage_minutes", "minute", now.Add(-usageRetention), &s.Usage},
		{"usage hours", "usage_hours", "hour", now.Add(-UsageHourRetention), &s.UsageHours},
		{"usage reports", "usage_reports", "applied_at", now.Add(-UsageReportRetention), &s.UsageReports},
		// Only finished jobs have finished_at.
		{"feed jobs", "feed_jobs", "finished_at", now.Add(-FeedJobRetention), &s.FeedJobs},
		{"limit windows", "limit_windows", "expires_at", now, &s.LimitWindows},
		// Only finished deliveries have done_at; their attempts go with them.
		{"deliveries", "deliveries", "done_at", now.Add(-DeliveryRetention), &s.Deliveries},
	} {
		// The table and column names are constants of this function.
		q := fmt.Sprintf(`DELETE FROM %[1]s WHERE ctid = ANY (ARRAY(
			SELECT ctid FROM %[1]s WHERE %[2]s < $1 LIMIT %[3]d))`, d.table, d.column, sweepBatch)
		for {
			tag, err := db.Pool.Exec(ctx, q, d.before)
			if err != nil {
				return s, fmt.Errorf("store: sweep %s: %w", d.name, err)
			}
			*d.n += tag.RowsAffected()
			if tag.RowsAffected() < sweepBatch {
				break
			}
		}
	}
	n, err := (&Pairings{db: db}).ExpirePairings(ctx, now)
	if err != nil {
		return s, err
	}
	s.Pairings = int64(n)
	return s, nil
}
