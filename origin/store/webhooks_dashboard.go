package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// WebhookDeliveryEndpoint returns the endpoint of a site's webhook delivery,
// for the dashboard to check that a delivery it is asked to resend belongs
// to the endpoint its URL names. A delivery of another site (siteID ""
// matches none), a lead's e-mail, or none at all is NOT_FOUND.
func (db *DB) WebhookDeliveryEndpoint(ctx context.Context, siteID string, deliveryID int64) (string, error) {
	var id string
	err := db.Pool.QueryRow(ctx, `SELECT endpoint_id::text FROM deliveries
		WHERE id = $1 AND site_id::text = $2 AND endpoint_id IS NOT NULL`, deliveryID, siteID).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", notFound("delivery")
	}
	if err != nil {
		return "", fmt.Errorf("store: webhook delivery endpoint: %w", err)
	}
	return id, nil
}
