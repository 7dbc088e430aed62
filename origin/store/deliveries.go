package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/listgate/listgate/pkg/apierror"
)

// DeliveryChannel is the LISTEN/NOTIFY channel on which the outbox trigger
// announces new deliveries (migration 0012).
const DeliveryChannel = "listgate_deliveries"

// MaxReplay bounds what one replay queues, and a replay is refused while
// that many of the endpoint's deliveries wait.
const MaxReplay = 10000

// DeliveryRetention is how long a finished delivery and its attempts stay
// in the log.
const DeliveryRetention = 30 * 24 * time.Hour

// Delivery states.
const (
	DeliveryPending   = "pending"
	DeliveryDelivered = "delivered"
	DeliveryFailed    = "failed"
	DeliveryHeld      = "held"
	DeliverySkipped   = "skipped"
)

// SetEmailDelivery records whether new leads are e-mailed (the origin's
// LISTGATE_SMTP_URL is set): off, the outbox queues no e-mail.
func (db *DB) SetEmailDelivery(ctx context.Context, on bool) error {
	if _, err := db.Pool.Exec(ctx, `UPDATE delivery_settings SET email = $1 WHERE email IS DISTINCT FROM $1`, on); err != nil {
		return fmt.Errorf("store: set e-mail delivery: %w", err)
	}
	return nil
}

// Delivery is a claimed delivery: a webhook (Endpoint set) or a lead's
// e-mail (Endpoint nil).
type Delivery struct {
	ID        int64
	SiteID    string
	EventID   int64
	EventType string
	LeadID    int64
	// Payload is the outbox event's payload (lead_id, and submission_id or
	// previous_status by type).
	Payload []byte
	// Body is what the first attempt sent, nil before it.
	Body []byte
	// Attempt is this attempt's number, from 1.
	Attempt   int
	CreatedAt time.Time
	Endpoint  *DeliveryEndpoint
}

// DeliveryEndpoint is what a worker needs of a delivery's endpoint.
type DeliveryEndpoint struct {
	ID              string
	URL             string
	SecretGen       int
	PrevSecretUntil *time.Time
	Enabled         bool
}

// ClaimDeliveries claims up to n due deliveries, webhooks or e-mails, for
// lease: their next attempt is put off by lease, so that no other worker
// takes them meanwhile, and their attempt count is raised. A worker that
// dies with a claim leaves it to be claimed again when the lease ends.
//
// skip names endpoints whose deliveries are not to be claimed now (a
// worker's endpoints at their share of its slots): one endpoint that hangs
// does not take every slot from the other sites' leads.
func (db *DB) ClaimDeliveries(ctx context.Context, webhooks bool, n int, lease time.Duration, skip []string) ([]Delivery, error) {
	// Each kind has its own partial index: the predicates are literal.
	q := `WITH c AS (SELECT id FROM deliveries WHERE state = 'pending' AND endpoint_id IS NULL AND next_at <= now()
			ORDER BY next_at LIMIT $1 FOR UPDATE SKIP LOCKED)
		UPDATE deliveries d SET attempts = d.attempts + 1, next_at = now() + make_interval(secs => $2)
		FROM c WHERE d.id = c.id
		RETURNING d.id, d.site_id, d.event_id, d.event_type, d.lead_id, d.payload, d.body, d.attempts, d.created_at,
			NULL::uuid, NULL::text, NULL::int, NULL::timestamptz, NULL::boolean`
	if webhooks {
		q = `WITH c AS (SELECT id FROM deliveries WHERE state = 'pending' AND endpoint_id IS NOT NULL AND next_at <= now()
				AND endpoint_id <> ALL ($3::uuid[])
			ORDER BY next_at LIMIT $1 FOR UPDATE SKIP LOCKED)
		UPDATE deliveries d SET attempts = d.attempts + 1, next_at = now() + make_interval(secs => $2)
		FROM c, webhook_endpoints w WHERE d.id = c.id AND w.id = d.endpoint_id
		RETURNING d.id, d.site_id, d.event_id, d.event_type, d.lead_id, d.payload, d.body, d.attempts, d.created_at,
			w.id, w.url, w.secret_gen, w.prev_secret_until, w.enabled`
	}
	args := []any{n, lease.Seconds()}
	if webhooks {
		if skip == nil {
			skip = []string{}
		}
		args = append(args, skip)
	}
	rows, _ := db.Pool.Query(ctx, q, args...)
	ds, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Delivery, error) {
		var d Delivery
		var epID, url *string
		var gen *int
		var enabled *bool
		var prev *time.Time
		err := r.Scan(&d.ID, &d.SiteID, &d.EventID, &d.EventType, &d.LeadID, &d.Payload, &d.Body, &d.Attempt,
			&d.CreatedAt, &epID, &url, &gen, &prev, &enabled)
		if err == nil && epID != nil {
			d.Endpoint = &DeliveryEndpoint{ID: *epID, URL: *url, SecretGen: *gen, PrevSecretUntil: prev, Enabled: *enabled}
		}
		return d, err
	})
	if err != nil {
		return nil, fmt.Errorf("store: claim deliveries: %w", err)
	}
	return ds, nil
}

// DeliveryResult is the outcome of one attempt.
type DeliveryResult struct {
	SiteID  string
	ID      int64
	Attempt int
	// State is the delivery's state after the attempt: DeliveryDelivered,
	// DeliveryFailed (given up), DeliveryPending (to retry at RetryAt),
	// DeliveryHeld (its endpoint was disabled: not attempted) or
	// DeliverySkipped (nothing to send).
	State   string
	RetryAt time.Time
	// Body, when not nil, is stored as what the delivery sends.
	Body []byte
	// Attempted: an attempt was made, and Status (0: no answer), Latency,
	// Error and Response (the answer's first bytes) describe it.
	Attempted bool
	Status    int
	Latency   time.Duration
	Error     string
	Response  string
	// EndpointID is the delivery's endpoint, "" for an e-mail: its failure
	// count follows Attempted webhook results.
	EndpointID string
}

// FinishDelivery records an attempt and its delivery's new state. It
// changes nothing but the log when the delivery was claimed again since
// (the claim's lease ran out). For a webhook it updates its endpoint's
// failure count and disables an endpoint that keeps failing (DisableAfter);
// disabled reports that.
func (db *DB) FinishDelivery(ctx context.Context, r DeliveryResult) (disabled bool, err error) {
	b := &pgx.Batch{}
	if r.Attempted {
		b.Queue(`INSERT INTO delivery_attempts (site_id, delivery_id, attempt, status, latency_ms, error, response)
			VALUES ($7, $1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING`,
			r.ID, r.Attempt, nullInt(int64(r.Status)), r.Latency.Milliseconds(), nullString(logText(r.Error, 1000)),
			nullString(logText(r.Response, 2048)), r.SiteID)
	}
	done := r.State != DeliveryPending
	b.Queue(`UPDATE deliveries SET state = $3, body = coalesce(body, $4),
			next_at = CASE WHEN $5 THEN next_at ELSE $6 END,
			done_at = CASE WHEN $5 THEN now() END, last_error = $7
		WHERE id = $1 AND attempts = $2`,
		r.ID, r.Attempt, r.State, r.Body, done, r.RetryAt, nullString(logText(r.Error, 1000)))
	if r.Attempted && r.EndpointID != "" {
		if r.State == DeliveryDelivered {
			b.Queue(`UPDATE webhook_endpoints SET failures = 0, failing_since = NULL
				WHERE id = $1 AND failures <> 0`, r.EndpointID)
		} else {
			b.Queue(`UPDATE webhook_endpoints SET failures = failures + 1,
					failing_since = coalesce(failing_since, now()),
					enabled = enabled AND NOT (failures + 1 >= $2 AND coalesce(failing_since, now()) < now() - make_interval(secs => $3)),
					disabled_reason = CASE WHEN enabled AND failures + 1 >= $2 AND coalesce(failing_since, now()) < now() - make_interval(secs => $3)
						THEN 'failing' ELSE disabled_reason END,
					disabled_at = CASE WHEN enabled AND failures + 1 >= $2 AND coalesce(failing_since, now()) < now() - make_interval(secs => $3)
						THEN now() ELSE disabled_at END
				WHERE id = $1 RETURNING disabled_reason = 'failing' AND disabled_at = now()`,
				r.EndpointID, DisableAfterAttempts, DisableAfter.Seconds()).QueryRow(func(row pgx.Row) error {
				var d *bool
				err := noRows(row.Scan(&d))
				disabled = d != nil && *d
				return err
			})
		}
	}
	if err := db.Pool.SendBatch(ctx, b).Close(); err != nil {
		return false, fmt.Errorf("store: finish delivery: %w", err)
	}
	return disabled, nil
}

// logText makes s, which may come from a receiver or a mail server, text
// that PostgreSQL stores: bytes that are not UTF-8, and NUL, become U+FFFD
// (or the whole batch of FinishDelivery would fail, and the attempt would
// be made again and again). Then it cuts s to at most n bytes, on a
// character boundary.
func logText(s string, n int) string {
	s = strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
	if len(s) <= n {
		return s
	}
	// Cut on a rune boundary.
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}

// LeadEvent is what a lead's delivery tells: the lead, its listing, its
// site, and for a duplicate the submission that repeated it.
type LeadEvent struct {
	SiteName         string
	SiteTimezone     string
	DefaultRecipient string
	Lead             LeadRow
	Metadata         []byte
	AgentName        string
	Listing          *LeadListing
	Submission       *LeadSubmissionRow
}

// LeadListing is the listing a lead is about.
type LeadListing struct {
	Ref                int64
	ListingID          string
	AgencyID           string
	Headline           string
	Address            string
	Suburb             string
	State, Postcode    string
	Type, ListingState string
	// Link is the listing's first external link (REAXML externalLink),
	// usually its page on the agency's website; "" when it has none.
	Link string
}

// LeadEventData reads a lead for its delivery: siteID's lead leadID and,
// when submissionID is not 0, that submission. A lead deleted since (its
// site was) is NOT_FOUND.
func (db *DB) LeadEventData(ctx context.Context, siteID string, leadID, submissionID int64) (LeadEvent, error) {
	var ev LeadEvent
	var l = &ev.Lead
	var lst LeadListing
	var ref *int64
	var listingID, agencyID, headline, address, suburb, state, postcode, ltype, lstate, link *string
	err := db.Pool.QueryRow(ctx, `SELECT s.name, s.timezone, coalesce(s.default_lead_recipient, ''),
			l.id, l.type, l.priority, l.status, l.name, coalesce(l.email, ''), coalesce(l.phone, ''),
			coalesce(l.mobile, ''), coalesce(l.message, ''), coalesce(l.assigned_to, ''), l.created_at, l.updated_at,
			l.metadata, coalesce(a.name, ''),
			li.ref, li.unique_id, li.agency_id, li.headline, li.search_address, li.suburb, li.state, li.postcode,
			li.type, li.status,
			(SELECT m.url FROM media m WHERE m.site_id = l.site_id AND m.listing_ref = li.ref AND m.kind = 'link'
				ORDER BY m.position LIMIT 1)
		FROM leads l JOIN sites s ON s.id = l.site_id
		LEFT JOIN agents a ON a.site_id = l.site_id AND a.id = l.assigned_agent_id
		LEFT JOIN listings li ON li.site_id = l.site_id AND li.ref = l.listing_ref
		WHERE l.site_id = $1 AND l.id = $2`, siteID, leadID).Scan(&ev.SiteName, &ev.SiteTimezone, &ev.DefaultRecipient,
		&l.ID, &l.Type, &l.Priority, &l.Status, &l.Name, &l.Email, &l.Phone, &l.Mobile, &l.Message, &l.AssignedTo,
		&l.CreatedAt, &l.UpdatedAt, &ev.Metadata, &ev.AgentName,
		&ref, &listingID, &agencyID, &headline, &address, &suburb, &state, &postcode, &ltype, &lstate, &link)
	if errors.Is(err, pgx.ErrNoRows) || isInvalidText(err) {
		return LeadEvent{}, notFound("lead")
	}
	if err != nil {
		return LeadEvent{}, fmt.Errorf("store: lead event: %w", err)
	}
	if ref != nil {
		s := func(p *string) string {
			if p == nil {
				return ""
			}
			return *p
		}
		lst = LeadListing{Ref: *ref, ListingID: s(listingID), AgencyID: s(agencyID), Headline: s(headline),
			Address: s(address), Suburb: s(suburb), State: s(state), Postcode: s(postcode), Type: s(ltype),
			ListingState: s(lstate), Link: s(link)}
		ev.Listing = &lst
	}
	if submissionID != 0 {
		var sub LeadSubmissionRow
		err := db.Pool.QueryRow(ctx, `SELECT id, duplicate, coalesce(payload->>'name', ''), coalesce(payload->>'email', ''),
				coalesce(payload->>'phone', payload->>'mobile', ''), coalesce(payload->>'message', ''), created_at
			FROM lead_submissions WHERE site_id = $1 AND id = $2`, siteID, submissionID).
			Scan(&sub.ID, &sub.Duplicate, &sub.Name, &sub.Email, &sub.Phone, &sub.Message, &sub.CreatedAt)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return LeadEvent{}, fmt.Errorf("store: lead event submission: %w", err)
		}
		if err == nil {
			ev.Submission = &sub
		}
	}
	return ev, nil
}

// DeliveryLogRow is one line of an endpoint's delivery log: an attempt, or
// a delivery not attempted yet (Attempt 0).
type DeliveryLogRow struct {
	DeliveryID int64
	EventID    int64
	EventType  string
	LeadID     int64
	State      string
	Attempt    int
	At         time.Time
	Status     int
	LatencyMS  int
	Error      string
	Response   string
	NextAt     time.Time
}

// DeliveryLog returns the newest lines of a site's endpoint's log (siteID
// "" for any site), at most limit, newest first.
func (db *DB) DeliveryLog(ctx context.Context, siteID, endpointID string, limit int) ([]DeliveryLogRow, error) {
	rows, _ := db.Pool.Query(ctx, `SELECT d.id, d.event_id, d.event_type, d.lead_id, d.state,
			coalesce(a.attempt, 0), coalesce(a.at, d.created_at), coalesce(a.status, 0), coalesce(a.latency_ms, 0),
			coalesce(a.error, d.last_error, ''), coalesce(a.response, ''), d.next_at
		FROM deliveries d LEFT JOIN delivery_attempts a ON a.site_id = d.site_id AND a.delivery_id = d.id
		WHERE d.endpoint_id = $1 AND ($2 = '' OR d.site_id::text = $2)
		ORDER BY d.created_at DESC, d.id DESC, a.attempt DESC NULLS FIRST
		LIMIT $3`, endpointID, siteID, limit)
	log, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (DeliveryLogRow, error) {
		var l DeliveryLogRow
		return l, r.Scan(&l.DeliveryID, &l.EventID, &l.EventType, &l.LeadID, &l.State, &l.Attempt, &l.At,
			&l.Status, &l.LatencyMS, &l.Error, &l.Response, &l.NextAt)
	})
	if isInvalidText(err) {
		return nil, notFound("webhook endpoint")
	}
	if err != nil {
		return nil, fmt.Errorf("store: delivery log: %w", err)
	}
	return log, nil
}

// ResendDelivery queues a site's webhook delivery again: a new delivery of
// the same event (so the same webhook-id and body) to the same endpoint,
// due now. One already pending for that event and endpoint is not doubled:
// it is made due now instead, unless its latest claim has not recorded its
// attempt (a worker is sending it: it stays under the claim's lease, so
// that no other worker sends it at the same time). It returns the id of the
// pending delivery.
func (db *DB) ResendDelivery(ctx context.Context, siteID string, deliveryID int64) (int64, error) {
	var id int64
	err := db.InTx(ctx, func(tx pgx.Tx) error {
		// The endpoint's row lock serializes its resends and replays, so
		// that two at once do not both queue the event.
		var locked int
		err := tx.QueryRow(ctx, `SELECT 1 FROM webhook_endpoints w JOIN deliveries d ON d.endpoint_id = w.id
			WHERE d.id = $1 AND ($2 = '' OR d.site_id::text = $2) FOR UPDATE OF w`, deliveryID, siteID).Scan(&locked)
		if err != nil {
			return err
		}
		err = tx.QueryRow(ctx, `WITH src AS (SELECT * FROM deliveries WHERE id = $1 AND ($2 = '' OR site_id::text = $2)
				AND endpoint_id IS NOT NULL),
			due AS (UPDATE deliveries d SET state = 'pending', done_at = NULL,
					next_at = CASE WHEN d.state = 'held' OR d.attempts = 0 OR EXISTS (SELECT 1 FROM delivery_attempts a
						WHERE a.site_id = d.site_id AND a.delivery_id = d.id AND a.attempt = d.attempts)
					THEN now() ELSE d.next_at END
				FROM src
				WHERE d.endpoint_id = src.endpoint_id AND d.event_id = src.event_id AND d.state IN ('pending', 'held')
				RETURNING d.id)
			INSERT INTO deliveries (site_id, endpoint_id, event_id, event_type, lead_id, payload, body)
			SELECT site_id, endpoint_id, event_id, event_type, lead_id, payload, body FROM src
			WHERE NOT EXISTS (SELECT 1 FROM due)
			RETURNING id`, deliveryID, siteID).Scan(&id)
		if errors.Is(err, pgx.ErrNoRows) {
			err = tx.QueryRow(ctx, `SELECT d.id FROM deliveries d, deliveries src
				WHERE src.id = $1 AND ($2 = '' OR src.site_id::text = $2)
				  AND d.endpoint_id = src.endpoint_id AND d.event_id = src.event_id
				  AND d.state = 'pending' ORDER BY d.id DESC LIMIT 1`, deliveryID, siteID).Scan(&id)
		}
		return err
	})
	if errors.Is(err, pgx.ErrNoRows) || isInvalidText(err) {
		return 0, notFound("delivery")
	}
	if err != nil {
		return 0, fmt.Errorf("store: resend delivery: %w", err)
	}
	if _, err := db.Pool.Exec(ctx, `SELECT pg_notify($1, '')`, DeliveryChannel); err != nil {
		return id, fmt.Errorf("store: resend delivery: %w", err)
	}
	return id, nil
}

// ReplayWebhooks queues again every delivery of a site's endpoint created
// since: held ones become due, and those finished (delivered or failed)
// are queued anew with the same event, unless one for that event is pending
// already. It returns how many are queued: at most MaxReplay, the oldest
// events first; a replay while MaxReplay of the endpoint's deliveries wait
// is a VALIDATION_ERROR. Deliveries older than DeliveryRetention are gone
// and cannot be replayed.
func (db *DB) ReplayWebhooks(ctx context.Context, siteID, endpointID string, since time.Time) (int64, error) {
	var n int64
	err := db.InTx(ctx, func(tx pgx.Tx) error {
		// The endpoint's row lock serializes its replays: a second one (a
		// double click) finds the first's deliveries pending and does not
		// queue them again.
		var locked int
		err := tx.QueryRow(ctx, `SELECT 1 FROM webhook_endpoints WHERE id = $1 AND ($2 = '' OR site_id::text = $2) FOR UPDATE`,
			endpointID, siteID).Scan(&locked)
		if err != nil {
			return err
		}
		// One replay at a time per endpoint: while MaxReplay or more of its
		// deliveries wait, a replay is refused (a loop of replays would
		// make the dashboard a flood aimed at the endpoint's URL).
		var pending int64
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM (SELECT FROM deliveries
			WHERE endpoint_id = $1 AND state = 'pending' LIMIT $2) p`, endpointID, MaxReplay).Scan(&pending); err != nil {
			return err
		}
		if pending >= MaxReplay {
			return invalid("since", fmt.Sprintf("%d or more deliveries to this endpoint are waiting to be sent: replay again once they are", MaxReplay))
		}
		// Pending again, so no longer finished: the sweep must leave it.
		// At most MaxReplay in all, the oldest first: a replay of a long
		// period is done in steps.
		tag, err := tx.Exec(ctx, `UPDATE deliveries SET state = 'pending', next_at = now(), done_at = NULL
			WHERE id IN (SELECT id FROM deliveries WHERE endpoint_id = $1 AND state = 'held' AND created_at >= $2
				ORDER BY event_id LIMIT $3)`, endpointID, since, MaxReplay)
		if err != nil {
			return err
		}
		n = tag.RowsAffected()
		tag, err = tx.Exec(ctx, `INSERT INTO deliveries (site_id, endpoint_id, event_id, event_type, lead_id, payload, body)
			SELECT DISTINCT ON (d.event_id) d.site_id, d.endpoint_id, d.event_id, d.event_type, d.lead_id, d.payload, d.body
			FROM deliveries d
			WHERE d.endpoint_id = $1 AND d.created_at >= $2 AND d.state IN ('delivered', 'failed')
			  AND NOT EXISTS (SELECT 1 FROM deliveries p WHERE p.endpoint_id = d.endpoint_id
				AND p.event_id = d.event_id AND p.state = 'pending')
			ORDER BY d.event_id, d.id DESC
			LIMIT $3`, endpointID, since, MaxReplay-n)
		if err != nil {
			return err
		}
		n += tag.RowsAffected()
		_, err = tx.Exec(ctx, `SELECT pg_notify($1, '')`, DeliveryChannel)
		return err
	})
	if errors.Is(err, pgx.ErrNoRows) || isInvalidText(err) {
		return 0, notFound("webhook endpoint")
	}
	if _, ok := errors.AsType[*apierror.Error](err); ok {
		return 0, err
	}
	if err != nil {
		return 0, fmt.Errorf("store: replay webhooks: %w", err)
	}
	return n, nil
}

// DeliveryCounts counts a site's deliveries by state ("" for every site),
// of one endpoint ("" for every endpoint), for the dashboard and the CLI.
// An id that is not a UUID matches nothing.
func (db *DB) DeliveryCounts(ctx context.Context, siteID string, endpointID string) (map[string]int64, error) {
	// Only the filters given, on the columns as they are: a filter that
	// may be empty, or a cast of the column, would keep the planner off
	// the indexes and count the whole table, every site's, each time.
	q, args := `SELECT state, count(*) FROM deliveries WHERE true`, []any{}
	for _, f := range []struct{ column, id string }{{"site_id", siteID}, {"endpoint_id", endpointID}} {
		if f.id != "" {
			args = append(args, f.id)
			q += fmt.Sprintf(" AND %s = $%d", f.column, len(args))
		}
	}
	rows, _ := db.Pool.Query(ctx, q+" GROUP BY state", args...)
	counts := map[string]int64{}
	var state string
	var n int64
	_, err := pgx.ForEachRow(rows, []any{&state, &n}, func() error { counts[state] = n; return nil })
	if isInvalidText(err) {
		return map[string]int64{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: delivery counts: %w", err)
	}
	return counts, nil
}

// ListenDeliveries opens a connection of its own (not one of the pool's: it
// is held while the worker runs) that LISTENs on DeliveryChannel.
func (db *DB) ListenDeliveries(ctx context.Context) (*pgx.Conn, error) {
	cfg := db.Pool.Config().ConnConfig.Copy()
	cfg.RuntimeParams["application_name"] = "listgate-origin-delivery"
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("store: listen for deliveries: %w", err)
	}
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{DeliveryChannel}.Sanitize()); err != nil {
		conn.Close(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("store: listen for deliveries: %w", err)
	}
	return conn, nil
}

// ReleaseDeliveries gives back claims not started (a worker claimed more of
// one endpoint than its share): due now again, their attempt not counted.
func (db *DB) ReleaseDeliveries(ctx context.Context, ds []Delivery) error {
	ids := make([]int64, 0, len(ds))
	attempts := make([]int32, 0, len(ds))
	for _, d := range ds {
		ids = append(ids, d.ID)
		attempts = append(attempts, int32(d.Attempt))
	}
	_, err := db.Pool.Exec(ctx, `UPDATE deliveries d SET attempts = d.attempts - 1, next_at = now()
		FROM unnest($1::bigint[], $2::int[]) AS r(id, attempt)
		WHERE d.id = r.id AND d.attempts = r.attempt AND d.state = 'pending'`, ids, attempts)
	if err != nil {
		return fmt.Errorf("store: release deliveries: %w", err)
	}
	return nil
}

// DeliveryBacklog is what waits for a delivery worker, per kind (webhook
// or e-mail): the deliveries due now (pending, their next attempt's time
// passed, not claimed), counted up to [MaxBacklogCount], and how long the
// oldest of them has waited past its due time (0 when none). Each figure
// is read from the kind's partial index of due deliveries.
type DeliveryBacklog struct {
	WebhooksDue, EmailsDue             int64
	OldestWebhookWait, OldestEmailWait time.Duration
}

// MaxBacklogCount bounds the count of due deliveries DeliveryBacklogNow
// reads: past it the count says "at least".
const MaxBacklogCount = 100_000

// DeliveryBacklogNow reads the delivery backlog.
func (db *DB) DeliveryBacklogNow(ctx context.Context) (DeliveryBacklog, error) {
	var b DeliveryBacklog
	var webhookWait, emailWait float64
	err := db.Pool.QueryRow(ctx, `SELECT
		(SELECT count(*) FROM (SELECT 1 FROM deliveries WHERE state = 'pending' AND endpoint_id IS NOT NULL
			AND next_at <= now() LIMIT $1) w),
		(SELECT count(*) FROM (SELECT 1 FROM deliveries WHERE state = 'pending' AND endpoint_id IS NULL
			AND next_at <= now() LIMIT $1) e),
		coalesce(extract(epoch FROM now() - (SELECT min(next_at) FROM deliveries
			WHERE state = 'pending' AND endpoint_id IS NOT NULL AND next_at <= now())), 0)::float8,
		coalesce(extract(epoch FROM now() - (SELECT min(next_at) FROM deliveries
			WHERE state = 'pending' AND endpoint_id IS NULL AND next_at <= now())), 0)::float8`,
		MaxBacklogCount).Scan(&b.WebhooksDue, &b.EmailsDue, &webhookWait, &emailWait)
	if err != nil {
		return DeliveryBacklog{}, fmt.Errorf("store: delivery backlog: %w", err)
	}
	b.OldestWebhookWait = time.Duration(webhookWait * float64(time.Second))
	b.OldestEmailWait = time.Duration(emailWait * float64(time.Second))
	return b, nil
}
