package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/listgate/listgate/pkg/apierror"
)

// UsageCount is the number of requests a site served in one minute.
type UsageCount struct {
	SiteID string
	// Minute is the start of the minute; it has no seconds.
	Minute   time.Time
	Requests int64
}

// UsageHourRetention is how long usage_hours rows are kept: the
// dashboard charts the last 12 months.
const UsageHourRetention = 400 * 24 * time.Hour

// UsageReportRetention is how long the ids of applied usage reports are
// remembered: an edge resends a report whose answer it did not get long
// before.
const UsageReportRetention = 24 * time.Hour

// AddUsage adds counts to the stored ones: AddUsageReport without a report
// id.
func (db *DB) AddUsage(ctx context.Context, counts []UsageCount) error {
	_, err := db.AddUsageReport(ctx, "", counts)
	return err
}

// AddUsageReport adds a report's counts to the stored ones, to the minutes
// (usage_minutes) and to their UTC hours (usage_hours), in one statement:
// counts of the same site and minute add up, in the batch and across
// reports, and an hour is always the sum of what its minutes were given.
// With a report id (a UUID), the report is applied once: applying the same
// id again (an edge resending a report whose answer it did not get) adds
// nothing and reports applied false; ids are remembered for
// UsageReportRetention. Counts of sites that do not exist (deleted since
// the edge counted) are skipped. A count with a negative number of
// requests, a minute with seconds, a site id or report id that is not a
// UUID is a VALIDATION_ERROR and nothing is added.
func (db *DB) AddUsageReport(ctx context.Context, reportID string, counts []UsageCount) (applied bool, err error) {
	if len(counts) == 0 {
		return true, nil
	}
	sites := make([]string, len(counts))
	minutes := make([]time.Time, len(counts))
	hours := make([]time.Time, len(counts))
	requests := make([]int64, len(counts))
	for i, c := range counts {
		if c.Requests < 0 {
			return false, apierror.InvalidField(fmt.Sprintf("counts[%d].requests", i), "must not be negative")
		}
		if c.Minute.IsZero() || !c.Minute.Truncate(time.Minute).Equal(c.Minute) {
			return false, apierror.InvalidField(fmt.Sprintf("counts[%d].minute", i), "must be the start of a minute")
		}
		// Truncate works on absolute time: UTC hours, whatever c.Minute's
		// location.
		sites[i], minutes[i], hours[i], requests[i] = c.SiteID, c.Minute, c.Minute.Truncate(time.Hour), c.Requests
	}
	var id any // NULL without a report id
	if reportID != "" {
		id = reportID
	}
	// The claim of the report id first; the counts only when it was made
	// (or there is no id). Grouping first: ON CONFLICT DO UPDATE may not
	// touch a row twice in one statement. The join skips unknown sites.
	// Rows are written in key order, so that concurrent reports of the same
	// hours wait for each other instead of deadlocking.
	err = db.Pool.QueryRow(ctx, `
		WITH claim AS (
			INSERT INTO usage_reports (report_id) SELECT $5::uuid WHERE $5::uuid IS NOT NULL
			ON CONFLICT (report_id) DO NOTHING
			RETURNING 1),
		c AS (
			SELECT c.site_id, c.minute, c.hour, sum(c.requests)::bigint AS requests
			FROM unnest($1::uuid[], $2::timestamptz[], $3::timestamptz[], $4::bigint[]) AS c (site_id, minute, hour, requests)
			JOIN sites s ON s.id = c.site_id
			WHERE $5::uuid IS NULL OR EXISTS (SELECT 1 FROM claim)
			GROUP BY c.site_id, c.minute, c.hour),
		m AS (
			INSERT INTO usage_minutes AS u (site_id, minute, requests)
			SELECT site_id, minute, requests FROM c ORDER BY site_id, minute
			ON CONFLICT (site_id, minute) DO UPDATE SET requests = u.requests + excluded.requests),
		h AS (
			INSERT INTO usage_hours AS u (site_id, hour, requests)
			SELECT site_id, hour, sum(requests)::bigint FROM c GROUP BY site_id, hour ORDER BY site_id, hour
			ON CONFLICT (site_id, hour) DO UPDATE SET requests = u.requests + excluded.requests)
		SELECT $5::uuid IS NULL OR EXISTS (SELECT 1 FROM claim)`,
		sites, minutes, hours, requests, id).Scan(&applied)
	if isInvalidText(err) {
		return false, apierror.InvalidField("site_id", "must be a UUID")
	}
	if err != nil {
		return false, fmt.Errorf("store: add usage: %w", err)
	}
	return applied, nil
}

// UsageBuckets returns the site's requests in each bucket [starts[i],
// starts[i+1]) (the last one ending at end), from the hourly counts
// (usage_hours, kept UsageHourRetention). The caller lays the buckets out
// (days or months in the site's time zone); an hour counts in the bucket
// where it starts, which in a zone whose offset is not whole hours puts
// the hour around midnight in one day. It does not check that the site
// exists; an id that is not a UUID is NOT_FOUND.
func (db *DB) UsageBuckets(ctx context.Context, siteID string, starts []time.Time, end time.Time) ([]int64, error) {
	if len(starts) == 0 {
		return nil, nil
	}
	ends := append(append([]time.Time(nil), starts[1:]...), end)
	rows, err := db.Pool.Query(ctx, `
		SELECT coalesce(sum(u.requests), 0)::bigint
		FROM unnest($2::timestamptz[], $3::timestamptz[]) WITH ORDINALITY AS b (lo, hi, i)
		LEFT JOIN usage_hours u ON u.site_id = $1 AND u.hour >= b.lo AND u.hour < b.hi
		GROUP BY b.i ORDER BY b.i`, siteID, starts, ends)
	if err != nil {
		return nil, fmt.Errorf("store: usage: %w", err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if isInvalidText(err) {
		return nil, notFound("site")
	}
	if err != nil {
		return nil, fmt.Errorf("store: usage: %w", err)
	}
	return out, nil
}

// UsageLastHour returns the site's requests per minute for the 60 minutes
// ending with now's minute (which is included), oldest first, with zero for
// the minutes without a count. Minutes are in UTC. It does not check that
// the site exists; an id that is not a UUID is NOT_FOUND.
func (db *DB) UsageLastHour(ctx context.Context, siteID string, now time.Time) ([]UsageCount, error) {
	end := now.Truncate(time.Minute)
	start := end.Add(-59 * time.Minute)
	rows, err := db.Pool.Query(ctx, `
		SELECT g.minute, coalesce(u.requests, 0)
		FROM generate_series($2::timestamptz, $3::timestamptz, interval '1 minute') AS g (minute)
		LEFT JOIN usage_minutes u ON u.site_id = $1 AND u.minute = g.minute
		ORDER BY g.minute`, siteID, start, end)
	if err != nil {
		return nil, fmt.Errorf("store: usage: %w", err)
	}
	defer rows.Close()
	out := make([]UsageCount, 0, 60)
	for rows.Next() {
		c := UsageCount{SiteID: siteID}
		if err := rows.Scan(&c.Minute, &c.Requests); err != nil {
			return nil, fmt.Errorf("store: usage: %w", err)
		}
		c.Minute = c.Minute.UTC()
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		if isInvalidText(err) {
			return nil, notFound("site")
		}
		return nil, fmt.Errorf("store: usage: %w", err)
	}
	return out, nil
}
