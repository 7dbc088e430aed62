package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/listgate/listgate/pkg/apierror"
	"github.com/listgate/listgate/pkg/apikey"
	"github.com/listgate/listgate/pkg/model"
)

// ViewCount is what an edge counted for one listing and day: views, and
// the visitors it had not seen on that listing earlier that day.
type ViewCount struct {
	SiteID     string
	ListingRef int64
	// Day is the date in the site's time zone, at midnight UTC.
	Day      time.Time
	Views    int64
	Visitors int64
}

// ViewBatch is one report of an edge: its id (a UUID the edge keeps when
// it retries the report), the reporting edge's instance id (informative,
// 1–64 bytes) and the counts.
type ViewBatch struct {
	ID     string
	EdgeID string
	Counts []ViewCount
}

// ViewBatchRetention is how long an applied batch id is remembered: a
// report retried within it is not applied again.
const ViewBatchRetention = 7 * 24 * time.Hour

// ApplyViewBatch adds a batch's counts to listing_views, once per batch id:
// it records the id and adds the counts in one transaction, so a batch
// applied twice (a retried report whose answer was lost, two origins
// taking the same retry) adds its counts once; applied reports whether this
// call added them. Counts of the same listing and day add up. Counts of a
// listing the site does not have (a made-up ref, another site's listing)
// or of an unknown site are skipped. Batch ids older than
// ViewBatchRetention are deleted in the same transaction. The caller
// validates the counts (the table's checks refuse negative ones).
func (db *DB) ApplyViewBatch(ctx context.Context, b ViewBatch) (applied bool, err error) {
	n := len(b.Counts)
	sites, refs, days := make([]string, n), make([]int64, n), make([]time.Time, n)
	views, visitors := make([]int64, n), make([]int64, n)
	for i, c := range b.Counts {
		sites[i], refs[i], days[i], views[i], visitors[i] = c.SiteID, c.ListingRef, c.Day, c.Views, c.Visitors
	}
	err = db.InTx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `INSERT INTO view_batches (batch_id, edge_id) VALUES ($1, $2)
			ON CONFLICT (batch_id) DO NOTHING`, b.ID, b.EdgeID)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return nil
		}
		applied = true
		// Grouping first: ON CONFLICT DO UPDATE may not touch a row twice in
		// one statement. The join keeps only the site's own listings.
		if n > 0 {
			if _, err := tx.Exec(ctx, `
				INSERT INTO listing_views AS v (site_id, listing_ref, day, views, visitors)
				SELECT c.site_id, c.listing_ref, c.day, sum(c.views)::bigint, sum(c.visitors)::bigint
				FROM unnest($1::uuid[], $2::bigint[], $3::date[], $4::bigint[], $5::bigint[])
					AS c (site_id, listing_ref, day, views, visitors)
				JOIN listings l ON l.site_id = c.site_id AND l.ref = c.listing_ref
				GROUP BY c.site_id, c.listing_ref, c.day
				ON CONFLICT (site_id, listing_ref, day) DO UPDATE
					SET views = v.views + excluded.views, visitors = v.visitors + excluded.visitors`,
				sites, refs, days, views, visitors); err != nil {
				return err
			}
		}
		_, err = tx.Exec(ctx, `DELETE FROM view_batches WHERE applied_at < now() - $1::interval`,
			fmt.Sprintf("%d seconds", int(ViewBatchRetention/time.Second)))
		return err
	})
	if isInvalidText(err) {
		return false, invalid("batch", "ids must be UUIDs")
	}
	if err != nil {
		return false, fmt.Errorf("store: apply view batch: %w", err)
	}
	return applied, nil
}

// BeaconID returns the site's beacon id — the public key of scope
// views:write that a site's pages send with their view beacons — creating
// it (named "Beacon id", with source) when the site has none; with rotate,
// the live one is revoked first (edges drop it within a second) and a new
// one is made. Every caller gets the same id until it is rotated or
// revoked. NOT_FOUND for an unknown site.
func (db *DB) BeaconID(ctx context.Context, siteID, source string, rotate bool) (Key, string, error) {
	var k Key
	var id string
	err := db.InTx(ctx, func(tx pgx.Tx) error {
		var err error
		k, id, err = beaconIDTx(ctx, tx, siteID, source, rotate)
		return err
	})
	if err != nil {
		if _, ok := errors.AsType[*apierror.Error](err); ok {
			return Key{}, "", err
		}
		return Key{}, "", fmt.Errorf("store: beacon id: %w", err)
	}
	return k, id, nil
}

// beaconIDTx is BeaconID in tx.
func beaconIDTx(ctx context.Context, tx pgx.Tx, siteID, source string, rotate bool) (Key, string, error) {
	var k Key
	var id string
	err := func() error {
		// The site's row serializes callers: one live beacon id per site.
		var found string
		if err := tx.QueryRow(ctx, `SELECT id FROM sites WHERE id = $1 FOR UPDATE`, siteID).Scan(&found); err != nil {
			if errors.Is(err, pgx.ErrNoRows) || isInvalidText(err) {
				return notFound("site")
			}
			return err
		}
		var liveID, liveBeacon string
		err := scanKey(tx.QueryRow(ctx, `SELECT `+keyColumns+`, beacon_id FROM api_keys
			WHERE site_id = $1 AND beacon_id IS NOT NULL AND revoked_at IS NULL`, siteID), &k, &liveBeacon)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
		case err != nil:
			return err
		case !rotate:
			id = liveBeacon
			return nil
		default:
			liveID = k.ID
		}
		if liveID != "" {
			if _, err := revokeKeyTx(ctx, tx, liveID); err != nil {
				return err
			}
		}
		var secret string
		k, secret, err = createKey(ctx, tx, NewKey{SiteID: siteID, Name: "Beacon id", Scopes: apikey.ViewsWrite, Source: source})
		if err != nil {
			return err
		}
		id = secret
		_, err = tx.Exec(ctx, `UPDATE api_keys SET beacon_id = $2 WHERE id = $1`, k.ID, secret)
		return err
	}()
	return k, id, err
}

// ViewPeriod is a period of whole days in a site's time zone: From and To
// are dates at midnight UTC, inclusive; Zone is the site's IANA zone.
type ViewPeriod struct {
	From, To time.Time
	Zone     string
}

// ListingViews returns the listing's figures for each day of the period,
// oldest first, every day listed; leads are the listing's leads (spam
// excluded) created that day in the site's time zone. It does not check
// the listing exists: the caller resolved ref.
func (db *DB) ListingViews(ctx context.Context, siteID string, ref int64, p ViewPeriod) ([]model.ViewDay, error) {
	rows, _ := db.Pool.Query(ctx, `
		WITH v AS (
			SELECT day, views, visitors FROM listing_views
			WHERE site_id = $1 AND listing_ref = $2 AND day BETWEEN $3::date AND $4::date
		), l AS (
			SELECT (created_at AT TIME ZONE $5)::date AS day, count(*) AS leads FROM leads
			WHERE site_id = $1 AND listing_ref = $2 AND status <> 'spam'
			  AND created_at >= ($3::date::timestamp AT TIME ZONE $5)
			  AND created_at < (($4::date + 1)::timestamp AT TIME ZONE $5)
			GROUP BY 1
		)
		SELECT to_char(d.day, 'YYYY-MM-DD'), coalesce(v.views, 0), coalesce(v.visitors, 0), coalesce(l.leads, 0)
		FROM (SELECT g::date AS day FROM generate_series($3::date, $4::date, interval '1 day') AS g) d
		LEFT JOIN v ON v.day = d.day LEFT JOIN l ON l.day = d.day
		ORDER BY d.day`, siteID, ref, p.From, p.To, p.Zone)
	days, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (model.ViewDay, error) {
		var d model.ViewDay
		err := r.Scan(&d.Date, &d.Views, &d.UniqueVisitors, &d.Leads)
		d.LeadsPer100Views = model.Per100(d.Leads, d.Views)
		return d, err
	})
	if err != nil {
		return nil, fmt.Errorf("store: listing views: %w", err)
	}
	return days, nil
}

// Sorts of TopListings: the figure listings are ranked by, most first.
const (
	SortViews    = "-views"
	SortVisitors = "-unique_visitors"
	SortLeads    = "-leads"
)

// TopListings returns the site's listings ranked by sort (SortViews,
// SortVisitors or SortLeads; ties by listing_ref, newest first) over the
// period, at most limit: the listings with views or leads in it, deleted
// ones included.
func (db *DB) TopListings(ctx context.Context, siteID string, p ViewPeriod, sort string, limit int) ([]model.TopListing, error) {
	var order string
	switch sort {
	case SortViews:
		order = "t.views DESC, t.leads DESC"
	case SortVisitors:
		order = "t.visitors DESC, t.views DESC"
	case SortLeads:
		order = "t.leads DESC, t.views DESC"
	default:
		return nil, invalid("sort", "must be one of -views, -unique_visitors, -leads")
	}
	// The top are chosen by their figures first, then their listings read:
	// every listing viewed in the period is summed, and joining each to its
	// listing before choosing read all their rows (on a site of 100,000
	// listings with a week of views, 742 ms against 371). A top short of
	// limit is chosen again with the listings joined before choosing: the
	// site has fewer listings with figures (cheap to count again), or a
	// listing's row is gone (removed by hand: views have no foreign key).
	figures := `
		WITH v AS (
			SELECT listing_ref, sum(views)::bigint AS views, sum(visitors)::bigint AS visitors FROM listing_views
			WHERE site_id = $1 AND day BETWEEN $2::date AND $3::date
			GROUP BY listing_ref
		), l AS (
			SELECT listing_ref, count(*) AS leads FROM leads
			WHERE site_id = $1 AND listing_ref IS NOT NULL AND status <> 'spam'
			  AND created_at >= ($2::date::timestamp AT TIME ZONE $4)
			  AND created_at < (($3::date + 1)::timestamp AT TIME ZONE $4)
			GROUP BY listing_ref
		), t AS (
			SELECT coalesce(v.listing_ref, l.listing_ref) AS listing_ref, coalesce(v.views, 0) AS views,
				coalesce(v.visitors, 0) AS visitors, coalesce(l.leads, 0) AS leads
			FROM v FULL JOIN l ON l.listing_ref = v.listing_ref
		)`
	columns := `SELECT t.listing_ref, li.unique_id, li.agency_id, li.status, li.headline, t.views, t.visitors, t.leads`
	scan := func(r pgx.CollectableRow) (model.TopListing, error) {
		var t model.TopListing
		err := r.Scan(&t.ListingRef, &t.ListingID, &t.AgencyID, &t.Status, &t.Headline, &t.Views, &t.UniqueVisitors, &t.Leads)
		t.LeadsPer100Views = model.Per100(t.Leads, t.Views)
		return t, err
	}
	rows, _ := db.Pool.Query(ctx, figures+`, top AS MATERIALIZED (SELECT * FROM t ORDER BY `+order+`, t.listing_ref DESC LIMIT $5)
		`+columns+` FROM top t JOIN listings li ON li.site_id = $1 AND li.ref = t.listing_ref
		ORDER BY `+order+`, t.listing_ref DESC`, siteID, p.From, p.To, p.Zone, limit)
	out, err := pgx.CollectRows(rows, scan)
	if err == nil && len(out) < limit {
		rows, _ := db.Pool.Query(ctx, figures+`
			`+columns+` FROM t JOIN listings li ON li.site_id = $1 AND li.ref = t.listing_ref
			ORDER BY `+order+`, t.listing_ref DESC LIMIT $5`, siteID, p.From, p.To, p.Zone, limit)
		out, err = pgx.CollectRows(rows, scan)
	}
	if err != nil {
		return nil, fmt.Errorf("store: top listings: %w", err)
	}
	return out, nil
}
