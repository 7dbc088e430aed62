package store

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// Event types written to the outbox and streamed to edges (the
// model.Event* the edge reads; the events table's CHECK lists them).
const (
	EventKeyRevoked     = "key.revoked"
	EventKeyChanged     = "key.changed"
	EventPlanChanged    = "site.plan_changed"
	EventContentChanged = "site.content_changed"
	EventCORSChanged    = "site.cors_changed"
)

// EventChannel is the LISTEN/NOTIFY channel on which origins announce new
// outbox rows to each other; the payload is the event id.
const EventChannel = "listgate_events"

// InsertEvent writes an event to the outbox in tx and notifies listeners
// when tx commits.
func InsertEvent(ctx context.Context, tx pgx.Tx, siteID, typ string, payload any) error {
	var id int64
	err := tx.QueryRow(ctx, `INSERT INTO events (site_id, type, payload) VALUES ($1, $2, $3) RETURNING id`,
		siteID, typ, payload).Scan(&id)
	if err != nil {
		return fmt.Errorf("store: write event %s: %w", typ, err)
	}
	if _, err := tx.Exec(ctx, `SELECT pg_notify($1, $2)`, EventChannel, fmt.Sprint(id)); err != nil {
		return fmt.Errorf("store: notify event %s: %w", typ, err)
	}
	return nil
}
