package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// ListingRow is a listing as the dashboard lists it.
type ListingRow struct {
	Ref      int64
	AgencyID string
	UniqueID string
	Type     string
	Status   string
	Headline string
	Suburb   string
	// Address is the parts of the address the feed lets be shown
	// (search_address: street, suburb, state, postcode).
	Address    string
	Featured   bool
	ModifiedAt time.Time
}

// Title names the listing for people: its headline, else its address,
// else its suburb, else its unique id. A listing first seen sold,
// withdrawn or off market often comes without a headline (a feed's short
// record of the change); one that had a headline keeps it, as the feed's
// records merge.
func (l ListingRow) Title() string {
	for _, s := range []string{l.Headline, l.Address, l.Suburb} {
		if s = strings.TrimSpace(s); s != "" {
			return s
		}
	}
	return "Listing " + l.UniqueID
}

// StatusText is the listing's status as people read it.
func (l ListingRow) StatusText() string {
	switch l.Status {
	case "offmarket":
		return "Off market"
	case "":
		return ""
	}
	return strings.ToUpper(l.Status[:1]) + l.Status[1:]
}

// escapeLike escapes the LIKE wildcards of s.
func escapeLike(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// DashboardListings returns up to limit of a site's listings whose headline
// or suburb contains q (case-insensitive; all when q is blank), newest
// modified first, skipping offset; and whether more follow.
func (db *DB) DashboardListings(ctx context.Context, siteID, q string, limit, offset int) ([]ListingRow, bool, error) {
	args := []any{siteID}
	where := "site_id = $1 AND status <> 'deleted'"
	if q = strings.TrimSpace(q); q != "" {
		args = append(args, "%"+escapeLike(q)+"%")
		where += " AND (headline ILIKE $2 OR suburb ILIKE $2 OR search_address ILIKE $2 OR unique_id ILIKE $2)"
	}
	rows, _ := db.Pool.Query(ctx, `SELECT ref, agency_id, unique_id, type, status, coalesce(headline, ''),
		coalesce(suburb, ''), coalesce(search_address, ''), featured, modified_at FROM listings WHERE `+where+
		fmt.Sprintf(" ORDER BY modified_at DESC, ref DESC LIMIT %d OFFSET %d", limit+1, max(offset, 0)), args...)
	ls, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ListingRow, error) {
		var l ListingRow
		err := r.Scan(&l.Ref, &l.AgencyID, &l.UniqueID, &l.Type, &l.Status, &l.Headline, &l.Suburb, &l.Address,
			&l.Featured, &l.ModifiedAt)
		return l, err
	})
	if isInvalidText(err) {
		return nil, false, notFound("site")
	}
	if err != nil {
		return nil, false, fmt.Errorf("store: dashboard listings: %w", err)
	}
	more := len(ls) > limit
	if more {
		ls = ls[:limit]
	}
	return ls, more, nil
}

// SetListingFeatured sets a site's listing's featured flag and, in the
// same transaction, writes a site.content_changed event so that edges drop
// their cached pages. An unknown listing is NOT_FOUND.
func (db *DB) SetListingFeatured(ctx context.Context, siteID string, ref int64, featured bool) error {
	return db.InTx(ctx, func(tx pgx.Tx) error {
		var uniqueID string
		err := tx.QueryRow(ctx, `UPDATE listings SET featured = $3, modified_at = now()
			WHERE site_id = $1 AND ref = $2 RETURNING unique_id`, siteID, ref, featured).Scan(&uniqueID)
		if errors.Is(err, pgx.ErrNoRows) || isInvalidText(err) {
			return notFound("listing")
		}
		if err != nil {
			return fmt.Errorf("store: set listing featured: %w", err)
		}
		return InsertEvent(ctx, tx, siteID, EventContentChanged, map[string]any{
			"reason": "featured", "ref": ref, "unique_id": uniqueID, "featured": featured})
	})
}
