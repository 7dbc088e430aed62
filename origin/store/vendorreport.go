package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/listgate/listgate/pkg/model"
)

// ListingSummary is what the dashboard's listing page and vendor report
// show of a listing beside its figures.
type ListingSummary struct {
	ListingRow
	State, Postcode string
	// CreatedAt is when the listing was first seen (its first import).
	CreatedAt time.Time
	// PhotoURL is the URL of the listing's first image (media kind image,
	// lowest position), "" when it has none. An absolute http or https URL
	// (the ingest and migration 0009 keep no other).
	PhotoURL string
}

// PlaceText is the listing's address as the feed lets it be shown: the
// street address when shown, else suburb, state and postcode, else "".
func (l ListingSummary) PlaceText() string {
	if a := strings.TrimSpace(l.Address); a != "" {
		return a
	}
	var parts []string
	for _, s := range []string{l.Suburb, l.State, l.Postcode} {
		if s = strings.TrimSpace(s); s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, " ")
}

// DashboardListing returns the site's listing ref, deleted ones included
// (their history stays). NOT_FOUND when the site has no such listing.
func (db *DB) DashboardListing(ctx context.Context, siteID string, ref int64) (ListingSummary, error) {
	var l ListingSummary
	err := db.Pool.QueryRow(ctx, `SELECT l.ref, l.agency_id, l.unique_id, l.type, l.status, coalesce(l.headline, ''),
			coalesce(l.suburb, ''), coalesce(l.search_address, ''), l.featured, l.modified_at,
			coalesce(l.state, ''), coalesce(l.postcode, ''), l.created_at,
			coalesce((SELECT m.url FROM media m WHERE m.site_id = l.site_id AND m.listing_ref = l.ref AND m.kind = 'image'
				ORDER BY m.position, m.id LIMIT 1), '')
		FROM listings l WHERE l.site_id = $1 AND l.ref = $2`, siteID, ref).Scan(
		&l.Ref, &l.AgencyID, &l.UniqueID, &l.Type, &l.Status, &l.Headline, &l.Suburb, &l.Address, &l.Featured,
		&l.ModifiedAt, &l.State, &l.Postcode, &l.CreatedAt, &l.PhotoURL)
	if errors.Is(err, pgx.ErrNoRows) || isInvalidText(err) {
		return ListingSummary{}, notFound("listing")
	}
	if err != nil {
		return ListingSummary{}, fmt.Errorf("store: dashboard listing: %w", err)
	}
	return l, nil
}

// DashboardListingRows returns the site's listings of refs (deleted ones
// included) by ref; refs the site does not have are left out.
func (db *DB) DashboardListingRows(ctx context.Context, siteID string, refs []int64) (map[int64]ListingRow, error) {
	out := make(map[int64]ListingRow, len(refs))
	if len(refs) == 0 {
		return out, nil
	}
	rows, _ := db.Pool.Query(ctx, `SELECT ref, agency_id, unique_id, type, status, coalesce(headline, ''),
		coalesce(suburb, ''), coalesce(search_address, ''), featured, modified_at
		FROM listings WHERE site_id = $1 AND ref = ANY($2::bigint[])`, siteID, refs)
	ls, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ListingRow, error) {
		var l ListingRow
		err := r.Scan(&l.Ref, &l.AgencyID, &l.UniqueID, &l.Type, &l.Status, &l.Headline, &l.Suburb, &l.Address,
			&l.Featured, &l.ModifiedAt)
		return l, err
	})
	if isInvalidText(err) {
		return nil, notFound("site")
	}
	if err != nil {
		return nil, fmt.Errorf("store: dashboard listing rows: %w", err)
	}
	for _, l := range ls {
		out[l.Ref] = l
	}
	return out, nil
}

// ListingTotals returns the listing's figures over its whole history: every
// view counted and every lead naming it (spam excluded). UniqueVisitors is
// the sum of the days' (model.ViewFigures).
func (db *DB) ListingTotals(ctx context.Context, siteID string, ref int64) (model.ViewFigures, error) {
	var f model.ViewFigures
	err := db.Pool.QueryRow(ctx, `SELECT
			coalesce((SELECT sum(views) FROM listing_views WHERE site_id = $1 AND listing_ref = $2), 0)::bigint,
			coalesce((SELECT sum(visitors) FROM listing_views WHERE site_id = $1 AND listing_ref = $2), 0)::bigint,
			(SELECT count(*) FROM leads WHERE site_id = $1 AND listing_ref = $2 AND status <> 'spam')`,
		siteID, ref).Scan(&f.Views, &f.UniqueVisitors, &f.Leads)
	if isInvalidText(err) {
		return f, notFound("site")
	}
	if err != nil {
		return f, fmt.Errorf("store: listing totals: %w", err)
	}
	f.LeadsPer100Views = model.Per100(f.Leads, f.Views)
	return f, nil
}
