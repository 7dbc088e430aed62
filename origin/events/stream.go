package events

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/listgate/listgate/origin/api"
	"github.com/listgate/listgate/pkg/apierror"
	"github.com/listgate/listgate/pkg/internalapi"
)

// Path is the stream's route.
const Path = internalapi.PathEvents

const (
	// backlogPage is how many events one backlog read takes.
	backlogPage = 500
	// readyTimeout is how long a stream waits for a hub that is starting.
	readyTimeout = 5 * time.Second
	// writeChunk is the most written under one write deadline.
	writeChunk = 32 << 10
	// maxKeptBuffer is the largest write buffer a stream keeps between
	// writes; a larger one (after a burst) is released.
	maxKeptBuffer = 256 << 10
)

// Mount registers GET /internal/v1/events.
func (h *Hub) Mount(handle func(pattern string, h api.HandlerFunc)) {
	handle("GET "+Path, api.LongLived(h.serveStream))
}

// serveStream is GET /internal/v1/events: 401 without the internal token,
// 422 for a malformed Last-Event-ID, 503 while the hub is not running;
// otherwise a stream that lasts until the client leaves, falls too far
// behind, or the origin shuts down.
func (h *Hub) serveStream(w http.ResponseWriter, r *http.Request) error {
	if err := api.RequireEdge(r); err != nil {
		return err
	}
	from, resume, err := lastEventID(r)
	if err != nil {
		return err
	}
	if r.Method == http.MethodHead {
		setStreamHeaders(w.Header())
		w.WriteHeader(http.StatusOK)
		return nil
	}
	rc := http.NewResponseController(w)
	// A stream outlives the server's read deadline (ReadTimeout), which
	// would otherwise end the request's context; a writer without deadlines
	// (a test recorder) is fine as it is.
	if err := rc.SetReadDeadline(time.Time{}); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return err
	}
	if err := h.waitReady(r.Context()); err != nil {
		return err
	}
	sub, pos, err := h.subscribe()
	if err != nil {
		return apierror.Unavailable(1, err)
	}
	defer h.unsubscribe(sub)

	out := &streamWriter{w: w, rc: rc, timeout: h.cfg.WriteTimeout}
	out.buf = appendRetry(out.buf, h.cfg.Retry)
	sent, err := h.open(r.Context(), out, from, resume, pos)
	if err != nil {
		if !out.started {
			return err
		}
		h.log.WarnContext(r.Context(), "event stream: backlog failed", "err", err,
			"request_id", api.RequestID(r.Context()))
		return nil
	}
	if err := out.flush(); err != nil {
		return nil
	}
	h.live(r.Context(), out, sub, sent)
	return nil
}

// open writes the start of a stream into out: the backlog after from up to
// pos when resuming, a reset when that is impossible, and a position marker
// otherwise. It returns the id the stream stands at.
func (h *Hub) open(ctx context.Context, out *streamWriter, from int64, resume bool, pos int64) (int64, error) {
	if !resume {
		out.buf = appendPosition(out.buf, pos)
		return pos, nil
	}
	if from > pos {
		// Ahead of this hub: another origin's hub published further, or the
		// id comes from elsewhere.
		issued, err := h.lastIssued(ctx)
		if err != nil {
			return 0, err
		}
		if from > issued {
			metricResets.Inc()
			out.buf = appendReset(out.buf, pos, resetUnknown)
			return pos, nil
		}
		return from, nil
	}
	sent := from
	// At least one pass, even when from is the position: the watermark must
	// be read, or a client resuming from a pruned id at a hub that has not
	// caught up would miss its reset.
	for first := true; first || sent < pos; first = false {
		evs, pruned, err := h.backlog(ctx, sent, pos)
		if err != nil {
			return sent, err
		}
		if sent < pruned {
			metricResets.Inc()
			out.buf = appendReset(out.buf, pos, resetExpired)
			return pos, nil
		}
		for _, ev := range evs {
			out.buf = append(out.buf, ev.frame...)
			sent = ev.id
		}
		if len(evs) < backlogPage {
			break
		}
		if err := out.flush(); err != nil {
			return sent, err
		}
	}
	if sent < pos {
		out.buf = appendPosition(out.buf, pos)
	}
	return pos, nil
}

// live writes the subscriber's events above sent, and heartbeats, until the
// client leaves, a write fails, or the hub ends the subscription.
func (h *Hub) live(ctx context.Context, out *streamWriter, sub *subscriber, sent int64) {
	hb := time.NewTicker(h.cfg.Heartbeat)
	defer hb.Stop()
	for {
		select {
		case batch, ok := <-sub.ch:
			// Take what is queued, then write it in one flush.
			var n int64
			for ok {
				for _, ev := range batch {
					if ev.id > sent || ev.reset {
						out.buf = append(out.buf, ev.frame...)
						sent = max(sent, ev.id)
					}
				}
				n += int64(len(batch))
				select {
				case batch, ok = <-sub.ch:
					continue
				default:
				}
				break
			}
			err := out.flush()
			sub.queued.Add(-n)
			if err != nil {
				return
			}
			if !ok {
				h.log.InfoContext(ctx, "event stream ended by the hub", "reason", h.reason(sub),
					"position", sent, "request_id", api.RequestID(ctx))
				return
			}
		case <-hb.C:
			out.buf = append(out.buf, heartbeat...)
			if err := out.flush(); err != nil {
				return
			}
		case <-ctx.Done():
			return
		}
	}
}

func (h *Hub) reason(s *subscriber) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return s.reason
}

// waitReady waits for the hub to know its position.
func (h *Hub) waitReady(ctx context.Context) error {
	select {
	case <-h.ready:
		return nil
	default:
	}
	t := time.NewTimer(readyTimeout)
	defer t.Stop()
	select {
	case <-h.ready:
		return nil
	case <-t.C:
		return apierror.Unavailable(1, errors.New("events: hub not ready"))
	case <-ctx.Done():
		return ctx.Err()
	}
}

// backlog reads the events after `after`, up to upTo, and the pruning
// watermark, from one snapshot.
func (h *Hub) backlog(ctx context.Context, after, upTo int64) ([]*event, int64, error) {
	var evs []*event
	var pruned int64
	err := pgx.BeginTxFunc(ctx, h.db.Pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly},
		func(tx pgx.Tx) error {
			if err := tx.QueryRow(ctx, `SELECT coalesce((SELECT max(pruned_through) FROM event_stream_state), 0)`).
				Scan(&pruned); err != nil {
				return err
			}
			rows, _ := tx.Query(ctx, `SELECT e.id, e.type, `+dataExpr+` FROM events e
				WHERE e.id > $1 AND e.id <= $2 AND `+forEdges+` ORDER BY e.id LIMIT $3`, after, upTo, backlogPage)
			var err error
			evs, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (*event, error) {
				var id int64
				var typ string
				var data []byte
				if err := row.Scan(&id, &typ, &data); err != nil {
					return nil, err
				}
				return newEvent(id, typ, data)
			})
			return err
		})
	if err != nil {
		return nil, 0, fmt.Errorf("events: read backlog: %w", err)
	}
	return evs, pruned, nil
}

// lastIssued returns the highest event id the outbox's sequence has handed
// out.
func (h *Hub) lastIssued(ctx context.Context) (int64, error) {
	var n int64
	err := h.db.Pool.QueryRow(ctx,
		`SELECT coalesce(pg_sequence_last_value(pg_get_serial_sequence('events', 'id')::regclass), 0)`).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("events: read sequence: %w", err)
	}
	return n, nil
}

// lastEventID reads Last-Event-ID (the header, else ?last_event_id=). It
// must be a non-negative decimal integer; a query that does not parse is a
// 422, as on every API route.
func lastEventID(r *http.Request) (int64, bool, error) {
	v, ok := r.Header.Get("Last-Event-ID"), true
	if v == "" {
		q, err := api.ParseQuery(r.URL.RawQuery)
		if err != nil {
			return 0, false, err
		}
		v = q.Get("last_event_id")
	}
	if v = strings.TrimSpace(v); v == "" {
		return 0, false, nil
	}
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			ok = false
		}
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if !ok || err != nil {
		return 0, false, apierror.InvalidField("last_event_id", "must be the id of an event (a non-negative integer)")
	}
	return n, true, nil
}

// streamWriter writes a stream in batches: each flush writes the buffer
// under its own write deadline, so the server's WriteTimeout (and
// ReadTimeout) never cut a stream, while a client that stops reading is cut
// after timeout.
type streamWriter struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
	buf     []byte
	started bool
}

// flush sends the status and headers the first time, then the buffer, in
// chunks, each under its own write deadline.
func (s *streamWriter) flush() error {
	if !s.started {
		s.started = true
		setStreamHeaders(s.w.Header())
		s.w.WriteHeader(http.StatusOK)
	}
	defer func() {
		if cap(s.buf) > maxKeptBuffer {
			s.buf = nil
		}
		s.buf = s.buf[:0]
	}()
	for b := s.buf; ; {
		if err := s.rc.SetWriteDeadline(time.Now().Add(s.timeout)); err != nil && !errors.Is(err, http.ErrNotSupported) {
			return err
		}
		n := min(len(b), writeChunk)
		if _, err := s.w.Write(b[:n]); err != nil {
			return err
		}
		if err := s.rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
			return err
		}
		if b = b[n:]; len(b) == 0 {
			return nil
		}
	}
}

func setStreamHeaders(h http.Header) {
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
}
