package events

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	json "github.com/goccy/go-json"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/listgate/listgate/origin/store"
)

const (
	// readBatch is how many outbox rows one read takes.
	readBatch = 500
	// gapRetry is how soon the outbox is read again while a gap is pending.
	gapRetry = 50 * time.Millisecond
	// startRetry is how often the start-up waits for older transactions.
	startRetry = 20 * time.Millisecond
	// minBackoff and maxBackoff bound the delay between connection attempts.
	minBackoff = 100 * time.Millisecond
	maxBackoff = 5 * time.Second
	// applicationName marks the hub's connection in pg_stat_activity.
	applicationName = "listgate-origin-events"
)

// dataExpr is an event's data: its payload, with site_id added from the
// column when the payload lacks it.
const dataExpr = `CASE WHEN e.site_id IS NOT NULL AND jsonb_typeof(e.payload) = 'object' AND NOT e.payload ? 'site_id'
	THEN e.payload || jsonb_build_object('site_id', e.site_id) ELSE e.payload END`

// listenLoop keeps a LISTEN session up until ctx ends.
func (h *Hub) listenLoop(ctx context.Context) {
	var c cursor
	failures := 0
	for ctx.Err() == nil {
		if failures > 0 {
			metricReconnects.Inc()
			if !sleep(ctx, backoff(failures)) {
				return
			}
		}
		if h.beforeConnect != nil {
			h.beforeConnect()
		}
		err := h.session(ctx, &c, func() { failures = 0 })
		if ctx.Err() != nil {
			return
		}
		failures++
		h.log.Warn("event listener: connection lost, reconnecting", "err", err, "attempt", failures,
			"position", c.last)
	}
}

// session connects, LISTENs, catches up and then publishes on every
// notification until the connection fails or ctx ends. up is called once the
// session has caught up.
func (h *Hub) session(ctx context.Context, c *cursor, up func()) error {
	conn, err := h.connect(ctx)
	if err != nil {
		return err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		defer cancel()
		conn.Close(cctx)
	}()
	// LISTEN before reading, so nothing committed after the read goes
	// unnoticed.
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{store.EventChannel}.Sanitize()); err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	h.listening.Store(true)
	defer h.listening.Store(false)
	if !c.started {
		if err := h.startPosition(ctx, conn, c); err != nil {
			return err
		}
		c.started = true
		h.start(c.last)
	}
	if err := h.catchUp(ctx, conn, c); err != nil {
		return err
	}
	up()
	for {
		wait := h.cfg.PollInterval
		if c.gapPending() {
			wait = gapRetry
		}
		wctx, cancel := context.WithTimeout(ctx, wait)
		_, err := conn.WaitForNotification(wctx)
		cancel()
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case err != nil && !pgconn.Timeout(err):
			return fmt.Errorf("wait for notification: %w", err)
		}
		drainNotifications(conn)
		if err := h.catchUp(ctx, conn, c); err != nil {
			return err
		}
	}
}

// connect opens the hub's own connection (not one of the pool's: it is held
// for as long as the process runs).
func (h *Hub) connect(ctx context.Context) (*pgx.Conn, error) {
	cfg := h.db.Pool.Config().ConnConfig.Copy()
	cfg.RuntimeParams["application_name"] = applicationName
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	return conn, nil
}

// drainNotifications consumes the notifications already received: the read
// that follows covers them all.
func drainNotifications(conn *pgx.Conn) {
	done, cancel := context.WithCancel(context.Background())
	cancel()
	for {
		if n, _ := conn.WaitForNotification(done); n == nil {
			return
		}
	}
}

// startPosition sets the cursor at the highest event id once every id at or
// below it is final: it reads the head, then waits until every transaction
// that was running at that moment has ended (one of them may hold a lower
// id). After GapTimeout it starts anyway and watches the ids missing below
// the head, as for a gap given up on.
func (h *Hub) startPosition(ctx context.Context, conn *pgx.Conn, c *cursor) error {
	var head, xmax int64
	err := conn.QueryRow(ctx, `SELECT coalesce((SELECT max(id) FROM events), 0),
		pg_snapshot_xmax(pg_current_snapshot())::text::bigint`).Scan(&head, &xmax)
	if err != nil {
		return fmt.Errorf("read outbox head: %w", err)
	}
	c.last = head
	for start := time.Now(); ; {
		var xmin int64
		if err := conn.QueryRow(ctx, `SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint`).Scan(&xmin); err != nil {
			return fmt.Errorf("read snapshot: %w", err)
		}
		if xmin >= xmax {
			return nil
		}
		if time.Since(start) >= h.cfg.GapTimeout {
			break
		}
		if !sleep(ctx, startRetry) {
			return ctx.Err()
		}
	}
	rows, _ := conn.Query(ctx, `SELECT i FROM generate_series(greatest($1::bigint - $2::bigint, 0) + 1, $1::bigint) i
		WHERE NOT EXISTS (SELECT 1 FROM events WHERE id = i)`, head, maxForgiven)
	missing, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return fmt.Errorf("read outbox gaps: %w", err)
	}
	now := time.Now()
	for _, id := range missing {
		c.forgive(id, id, now)
	}
	metricGapsForced.Inc()
	h.log.Warn("events: starting while older transactions still run; watching the ids missing below the head",
		"head", head, "missing", len(missing), "waited", h.cfg.GapTimeout.String())
	return nil
}

// catchUp publishes every final event after the cursor.
func (h *Hub) catchUp(ctx context.Context, conn *pgx.Conn, c *cursor) error {
	if err := h.checkForgiven(ctx, conn, c); err != nil {
		return err
	}
	for {
		rows, err := conn.Query(ctx, `SELECT e.id, e.type, `+dataExpr+`,
				pg_snapshot_xmin(snap.s)::text::bigint, pg_snapshot_xmax(snap.s)::text::bigint
			FROM events e, (SELECT pg_current_snapshot() AS s) snap
			WHERE e.id > $1 ORDER BY e.id LIMIT $2`, c.last, readBatch)
		if err != nil {
			return fmt.Errorf("read outbox: %w", err)
		}
		var (
			batch      []*event
			ids        []int64
			xmin, xmax int64
		)
		for rows.Next() {
			var id int64
			var typ string
			var data []byte
			if err := rows.Scan(&id, &typ, &data, &xmin, &xmax); err != nil {
				rows.Close()
				return fmt.Errorf("read outbox: %w", err)
			}
			ev, err := newEvent(id, typ, data)
			if err != nil {
				rows.Close()
				return err
			}
			batch = append(batch, ev)
			ids = append(ids, id)
		}
		if err := rows.Err(); err != nil {
			return fmt.Errorf("read outbox: %w", err)
		}
		forgiven := len(c.forgiven)
		n := c.accept(ids, xmin, xmax, time.Now(), h.cfg.GapTimeout)
		h.publish(batch[:n])
		if n < len(batch) {
			metricGapsDeferred.Inc()
		}
		if len(c.forgiven) != forgiven {
			metricGapsForced.Inc()
			h.log.Warn("events: gave up waiting for an outbox gap; a transaction older than it still runs",
				"position", c.last, "waited", h.cfg.GapTimeout.String())
		}
		if n < len(batch) || len(batch) < readBatch {
			return nil
		}
	}
}

// checkForgiven looks for given-up ids that committed after all: streams
// missed those events, so every stream is told to reset.
func (h *Hub) checkForgiven(ctx context.Context, conn *pgx.Conn, c *cursor) error {
	watch := c.watched(time.Now())
	if len(watch) == 0 {
		return nil
	}
	rows, _ := conn.Query(ctx, `SELECT id FROM events WHERE id = ANY($1)`, watch)
	late, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return fmt.Errorf("read late events: %w", err)
	}
	if len(late) > 0 {
		c.unforgive(late)
		metricLate.Add(len(late))
		h.log.Error("events: an event committed after its gap was given up on; resetting every stream",
			"ids", late)
		h.publishReset(resetLate)
	}
	return nil
}

// newEvent encodes an outbox row as an SSE frame.
func newEvent(id int64, typ string, payload []byte) (*event, error) {
	var buf bytes.Buffer
	if err := json.Compact(&buf, payload); err != nil {
		return nil, fmt.Errorf("event %d: payload: %w", id, err)
	}
	data := buf.Bytes()
	return &event{id: id, typ: typ, data: data, frame: appendEvent(nil, id, typ, data)}, nil
}

// backoff is the delay before connection attempt n (n ≥ 1): exponential
// from minBackoff to maxBackoff, with equal jitter.
func backoff(n int) time.Duration {
	d := minBackoff << min(n-1, 10)
	if d > maxBackoff || d <= 0 {
		d = maxBackoff
	}
	return d/2 + rand.N(d/2+1)
}

// sleep waits d or until ctx ends; it reports whether d passed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
