package store

import (
	"context"
	"fmt"
	"time"

	"github.com/listgate/listgate/pkg/apierror"
)

// UsageCount is the number of requests a site served in one minute.
type UsageCount struct {
	SiteID string
	// Minute is the start of the minute; it has no seconds.
	Minute   time.Time
	Requests int64
}

// AddUsage adds counts to the stored ones, in one statement: counts of the
// same site and minute add up, in the batch and across calls. Counts of
// sites that do not exist (deleted since the edge counted) are skipped.
// A count with a negative number of requests, a minute with seconds or a
// site id that is not a UUID is a VALIDATION_ERROR and nothing is added.
func (db *DB) AddUsage(ctx context.Context, counts []UsageCount) error {
	if len(counts) == 0 {
		return nil
	}
	sites := make([]string, len(counts))
	minutes := make([]time.Time, len(counts))
	requests := make([]int64, len(counts))
	for i, c := range counts {
		if c.Requests < 0 {
			return apierror.InvalidField(fmt.Sprintf("counts[%d].requests", i), "must not be negative")
		}
		if c.Minute.IsZero() || !c.Minute.Truncate(time.Minute).Equal(c.Minute) {
			return apierror.InvalidField(fmt.Sprintf("counts[%d].minute", i), "must be the start of a minute")
		}
		sites[i], minutes[i], requests[i] = c.SiteID, c.Minute, c.Requests
	}
	// Grouping first: ON CONFLICT DO UPDATE may not touch a row twice in one
	// statement. The join skips unknown sites.
	_, err := db.Pool.Exec(ctx, `
		INSERT INTO usage_minutes AS u (site_id, minute, requests)
		SELECT c.site_id, c.minute, sum(c.requests)::bigint
		FROM unnest($1::uuid[], $2::timestamptz[], $3::bigint[]) AS c (site_id, minute, requests)
		JOIN sites s ON s.id = c.site_id
		GROUP BY c.site_id, c.minute
		ON CONFLICT (site_id, minute) DO UPDATE SET requests = u.requests + excluded.requests`,
		sites, minutes, requests)
	if isInvalidText(err) {
		return apierror.InvalidField("site_id", "must be a UUID")
	}
	if err != nil {
		return fmt.Errorf("store: add usage: %w", err)
	}
	return nil
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
