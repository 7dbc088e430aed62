package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/listgate/listgate/pkg/apierror"
)

// Lead event types: written to the outbox in the lead's transaction and
// delivered to the webhook endpoints that subscribe to them.
const (
	EventLeadCreated   = "lead.created"
	EventLeadDuplicate = "lead.duplicate"
	EventLeadUpdated   = "lead.updated"
)

// WebhookEvents are the event types an endpoint may subscribe to.
var WebhookEvents = []string{EventLeadCreated, EventLeadDuplicate, EventLeadUpdated}

// MaxWebhookEndpoints bounds a site's endpoints.
const MaxWebhookEndpoints = 10

// Endpoints are disabled when they keep failing: after DisableAfter with no
// successful attempt, and at least DisableAfterAttempts failed attempts in
// a row. The dashboard says so; enabling one resets the count.
const (
	DisableAfter         = 24 * time.Hour
	DisableAfterAttempts = 20
)

// WebhookEndpoint is a site's webhook endpoint.
type WebhookEndpoint struct {
	ID     string   `json:"id"`
	SiteID string   `json:"site_id"`
	URL    string   `json:"url"`
	Events []string `json:"events"`
	// SecretGen is the generation of the signing secret; while
	// PrevSecretUntil is in the future the previous one signs too.
	SecretGen       int        `json:"secret_generation"`
	PrevSecretUntil *time.Time `json:"previous_secret_until"`
	Enabled         bool       `json:"enabled"`
	// DisabledReason is "operator" or "failing" when not Enabled.
	DisabledReason string     `json:"disabled_reason,omitempty"`
	DisabledAt     *time.Time `json:"disabled_at"`
	// Failures counts the failed attempts since the last success, the first
	// of which was at FailingSince.
	Failures     int        `json:"consecutive_failures"`
	FailingSince *time.Time `json:"failing_since"`
	CreatedAt    time.Time  `json:"created_at"`
}

const endpointColumns = `id, site_id, url, events, secret_gen, prev_secret_until, enabled,
	coalesce(disabled_reason, ''), disabled_at, failures, failing_since, created_at`

func scanEndpoint(r pgx.Row) (WebhookEndpoint, error) {
	var e WebhookEndpoint
	err := r.Scan(&e.ID, &e.SiteID, &e.URL, &e.Events, &e.SecretGen, &e.PrevSecretUntil, &e.Enabled,
		&e.DisabledReason, &e.DisabledAt, &e.Failures, &e.FailingSince, &e.CreatedAt)
	return e, err
}

// NormalizeWebhookEvents checks a subscription list: each one of
// WebhookEvents, at least one, repeats dropped, in WebhookEvents' order.
func NormalizeWebhookEvents(events []string) ([]string, error) {
	var out []string
	for _, ev := range events {
		ev = strings.TrimSpace(ev)
		if !slices.Contains(WebhookEvents, ev) {
			return nil, invalid("events", fmt.Sprintf("unknown event %q: must be among %s", ev, strings.Join(WebhookEvents, ", ")))
		}
	}
	for _, ev := range WebhookEvents {
		if slices.ContainsFunc(events, func(s string) bool { return strings.TrimSpace(s) == ev }) {
			out = append(out, ev)
		}
	}
	if len(out) == 0 {
		return nil, invalid("events", "at least one event is required")
	}
	return out, nil
}

// CreateWebhookEndpoint registers an endpoint for a site. The URL must have
// been checked by the caller (webhook.CheckURL); events are normalized. An
// unknown site is NOT_FOUND; a site at MaxWebhookEndpoints is a
// VALIDATION_ERROR.
func (db *DB) CreateWebhookEndpoint(ctx context.Context, siteID, url string, events []string) (WebhookEndpoint, error) {
	evs, err := NormalizeWebhookEvents(events)
	if err != nil {
		return WebhookEndpoint{}, err
	}
	var e WebhookEndpoint
	err = db.InTx(ctx, func(tx pgx.Tx) error {
		// The site's row lock serializes creations, so the bound holds.
		var n int
		err := tx.QueryRow(ctx, `SELECT (SELECT count(*) FROM webhook_endpoints w WHERE w.site_id = s.id)
			FROM sites s WHERE s.id = $1 FOR UPDATE`, siteID).Scan(&n)
		if errors.Is(err, pgx.ErrNoRows) || isInvalidText(err) {
			return notFound("site")
		}
		if err != nil {
			return err
		}
		if n >= MaxWebhookEndpoints {
			return invalid("url", fmt.Sprintf("a site has at most %d webhook endpoints", MaxWebhookEndpoints))
		}
		e, err = scanEndpoint(tx.QueryRow(ctx, `INSERT INTO webhook_endpoints (site_id, url, events)
			VALUES ($1, $2, $3) RETURNING `+endpointColumns, siteID, url, evs))
		return err
	})
	if err != nil {
		if _, ok := errors.AsType[*apierror.Error](err); ok {
			return WebhookEndpoint{}, err
		}
		return WebhookEndpoint{}, fmt.Errorf("store: create webhook endpoint: %w", err)
	}
	return e, nil
}

// WebhookEndpoints lists a site's endpoints ("" for every site's), oldest
// first.
func (db *DB) WebhookEndpoints(ctx context.Context, siteID string) ([]WebhookEndpoint, error) {
	rows, _ := db.Pool.Query(ctx, `SELECT `+endpointColumns+` FROM webhook_endpoints
		WHERE $1 = '' OR site_id::text = $1 ORDER BY created_at, id`, siteID)
	eps, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (WebhookEndpoint, error) { return scanEndpoint(r) })
	if err != nil {
		return nil, fmt.Errorf("store: list webhook endpoints: %w", err)
	}
	return eps, nil
}

// WebhookEndpoint returns one endpoint. siteID "" matches any site (the
// operator's CLI); otherwise an endpoint of another site is NOT_FOUND.
func (db *DB) WebhookEndpoint(ctx context.Context, siteID, id string) (WebhookEndpoint, error) {
	e, err := scanEndpoint(db.Pool.QueryRow(ctx, `SELECT `+endpointColumns+` FROM webhook_endpoints
		WHERE id = $1 AND ($2 = '' OR site_id::text = $2)`, id, siteID))
	if errors.Is(err, pgx.ErrNoRows) || isInvalidText(err) {
		return WebhookEndpoint{}, notFound("webhook endpoint")
	}
	if err != nil {
		return WebhookEndpoint{}, fmt.Errorf("store: webhook endpoint: %w", err)
	}
	return e, nil
}

// SetWebhookEnabled enables or disables an endpoint (siteID as for
// WebhookEndpoint). Enabling clears the failure count; deliveries held
// while it was disabled stay held until a replay.
func (db *DB) SetWebhookEnabled(ctx context.Context, siteID, id string, enabled bool) (WebhookEndpoint, error) {
	e, err := scanEndpoint(db.Pool.QueryRow(ctx, `UPDATE webhook_endpoints SET enabled = $3,
			disabled_reason = CASE WHEN $3 THEN NULL ELSE 'operator' END,
			disabled_at = CASE WHEN $3 THEN NULL ELSE now() END,
			failures = CASE WHEN $3 THEN 0 ELSE failures END,
			failing_since = CASE WHEN $3 THEN NULL ELSE failing_since END
		WHERE id = $1 AND ($2 = '' OR site_id::text = $2) RETURNING `+endpointColumns, id, siteID, enabled))
	if errors.Is(err, pgx.ErrNoRows) || isInvalidText(err) {
		return WebhookEndpoint{}, notFound("webhook endpoint")
	}
	if err != nil {
		return WebhookEndpoint{}, fmt.Errorf("store: set webhook endpoint enabled: %w", err)
	}
	return e, nil
}

// DeleteWebhookEndpoint deletes an endpoint and its deliveries.
func (db *DB) DeleteWebhookEndpoint(ctx context.Context, siteID, id string) error {
	tag, err := db.Pool.Exec(ctx, `DELETE FROM webhook_endpoints WHERE id = $1 AND ($2 = '' OR site_id::text = $2)`, id, siteID)
	if isInvalidText(err) {
		return notFound("webhook endpoint")
	}
	if err != nil {
		return fmt.Errorf("store: delete webhook endpoint: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return notFound("webhook endpoint")
	}
	return nil
}

// RotateWebhookSecret starts the endpoint's next secret generation; the
// previous one keeps signing (beside it) for overlap. A rotation with an
// overlap while the last one's still runs is a VALIDATION_ERROR: only two
// generations sign, and a second rotation (a form sent twice) would cut off
// the secret the receiver has. overlap 0 ends every older secret now (one
// that leaked).
func (db *DB) RotateWebhookSecret(ctx context.Context, siteID, id string, overlap time.Duration) (WebhookEndpoint, error) {
	e, err := scanEndpoint(db.Pool.QueryRow(ctx, `UPDATE webhook_endpoints SET secret_gen = secret_gen + 1,
			prev_secret_until = now() + make_interval(secs => $3)
		WHERE id = $1 AND ($2 = '' OR site_id::text = $2)
		  AND ($3 = 0 OR prev_secret_until IS NULL OR prev_secret_until <= now())
		RETURNING `+endpointColumns, id, siteID, overlap.Seconds()))
	if errors.Is(err, pgx.ErrNoRows) {
		cur, gerr := db.WebhookEndpoint(ctx, siteID, id)
		if gerr != nil {
			return WebhookEndpoint{}, gerr
		}
		return WebhookEndpoint{}, invalid("overlap", fmt.Sprintf("the previous secret still signs until %s: rotate again after that, or with no overlap to end the older secrets now",
			cur.PrevSecretUntil.UTC().Format(time.RFC3339)))
	}
	if isInvalidText(err) {
		return WebhookEndpoint{}, notFound("webhook endpoint")
	}
	if err != nil {
		return WebhookEndpoint{}, fmt.Errorf("store: rotate webhook secret: %w", err)
	}
	return e, nil
}
