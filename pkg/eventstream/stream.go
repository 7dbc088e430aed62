// Package eventstream is the edge's client for the origin's event stream
// (GET /internal/v1/events, Server-Sent Events): it connects with the
// internal token, parses the stream strictly and within bounded memory
// (Parser), tracks the last event id, and reconnects with Last-Event-ID and
// jittered exponential backoff whenever the stream ends, so that the edge
// sees every event once, in order.
//
// When a connection starts without continuity — the first one, one made
// without a last event id, or one where the origin answers "event: reset"
// because the id is too old — the client calls OnReset before any event of
// that connection, and the edge purges what it cached from earlier events.
//
// Metrics (VictoriaMetrics, shared by every stream of the process):
// listgate_edge_eventstream_connected (streams connected now),
// listgate_edge_eventstream_connects_total, listgate_edge_eventstream_events_total,
// listgate_edge_eventstream_resets_total, listgate_edge_eventstream_disconnects_total.
package eventstream

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"mime"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/listgate/listgate/pkg/internalapi"
	"github.com/listgate/listgate/pkg/promtext"
)

// Options configure Subscribe. Zero fields take the defaults documented on
// them.
type Options struct {
	// URL is the stream's address, such as
	// http://127.0.0.1:8081/internal/v1/events. Required unless Next is set.
	URL string
	// Next, if set, gives the address of each connection attempt instead
	// of URL: with several origins, each attempt goes to a healthy one.
	Next func() string
	// Wake, if set, cuts a reconnection's back-off short when it receives:
	// the edge sends on it when an origin answers its health check again,
	// so that the stream does not sleep seconds past an outage.
	Wake <-chan struct{}
	// InternalToken is sent in X-Listgate-Internal-Token. Required.
	InternalToken string
	// HTTPClient makes the requests. Nil: a client with no overall timeout
	// (a stream lasts for hours; IdleTimeout guards it instead). A client
	// with a Timeout would cut every stream after it.
	HTTPClient *http.Client
	// OnEvent receives every event except resets, in stream order, from the
	// stream's goroutine: it must return quickly. Required.
	OnEvent func(Event)
	// OnReset is called, from the same goroutine, when a connection starts
	// without continuity (see the package doc), before that connection's
	// events. Nil: nothing is called.
	OnReset func()
	// LastEventID resumes from a known position on the first connection;
	// empty means no continuity (OnReset is called).
	LastEventID string
	// MinBackoff and MaxBackoff bound the delay before a reconnection; the
	// delay doubles from MinBackoff (or the stream's retry: value when it
	// sent one) with each failed attempt, with jitter. Defaults 250 ms and
	// 30 s.
	MinBackoff, MaxBackoff time.Duration
	// IdleTimeout drops a connection that has received nothing, heartbeats
	// included, for this long (response headers included). Default 45 s,
	// three of the origin's heartbeats.
	IdleTimeout time.Duration
	// Limits bound lines and events; an oversized one drops the connection.
	Limits Limits
	// Log receives connection failures. Nil: slog.Default().
	Log *slog.Logger
}

func (o Options) withDefaults() Options {
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{}
	}
	if o.MinBackoff <= 0 {
		o.MinBackoff = 250 * time.Millisecond
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = 30 * time.Second
	}
	o.MaxBackoff = max(o.MaxBackoff, o.MinBackoff)
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = 45 * time.Second
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	o.Limits = o.Limits.withDefaults()
	return o
}

// Validate reports a missing required option.
func (o Options) Validate() error {
	switch {
	case o.URL == "" && o.Next == nil:
		return errors.New("eventstream: URL or Next is required")
	case o.InternalToken == "":
		return errors.New("eventstream: InternalToken is required")
	case o.OnEvent == nil:
		return errors.New("eventstream: OnEvent is required")
	}
	return nil
}

// Stream is a running subscription. Its methods are safe for concurrent use.
type Stream struct {
	opts      Options
	connected atomic.Bool
	// lost is when the last connection ended (unix nanoseconds), 0 before.
	lost atomic.Int64
	done chan struct{}

	mu     sync.Mutex
	lastID string

	// Owned by the stream's goroutine.
	lastNum  uint64 // lastID as a number, when it is one
	numValid bool
	retry    time.Duration
}

func init() {
	promtext.Describe("listgate_edge_eventstream_connected", "Event streams from an origin connected now (1 while the edge follows one).")
	promtext.Describe("listgate_edge_eventstream_connects_total", "Connections of the event stream to an origin.")
	promtext.Describe("listgate_edge_eventstream_events_total", "Events received on the event stream.")
	promtext.Describe("listgate_edge_eventstream_resets_total", "Resets of the event stream: the origin could not resume from the last event seen, so the caches were purged.")
	promtext.Describe("listgate_edge_eventstream_disconnects_total", "Event stream connections lost or refused.")
}

// Metrics, shared by every stream of the process.
var (
	metricConnected = metrics.GetOrCreateGauge("listgate_edge_eventstream_connected", nil)
	metricConnects  = metrics.GetOrCreateCounter("listgate_edge_eventstream_connects_total")
	metricEvents    = metrics.GetOrCreateCounter("listgate_edge_eventstream_events_total")
	metricResets    = metrics.GetOrCreateCounter("listgate_edge_eventstream_resets_total")
	metricDisconns  = metrics.GetOrCreateCounter("listgate_edge_eventstream_disconnects_total")
)

// Subscribe validates opts and starts following the stream in a goroutine
// until ctx ends; it returns at once, before the first connection. It fails
// only for invalid options: connection errors are retried forever (and
// logged), never returned.
func Subscribe(ctx context.Context, opts Options) (*Stream, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	s := &Stream{opts: opts.withDefaults(), done: make(chan struct{}), lastID: opts.LastEventID}
	s.noteID(opts.LastEventID)
	go s.run(ctx)
	return s, nil
}

// Connected reports whether the stream is connected now. While it is not,
// the edge should serve what it cached with short TTLs.
func (s *Stream) Connected() bool { return s.connected.Load() }

// SyncedWithin reports whether the stream is connected, or was until less
// than d ago: a reconnection to another origin takes a moment, during which
// events wait in the origins' log and arrive on reconnection.
func (s *Stream) SyncedWithin(d time.Duration) bool {
	if s.connected.Load() {
		return true
	}
	lost := s.lost.Load()
	return lost != 0 && time.Since(time.Unix(0, lost)) < d
}

// LastEventID returns the id the stream would resume from.
func (s *Stream) LastEventID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastID
}

// Done is closed when the stream's goroutine has returned, after ctx ended.
func (s *Stream) Done() <-chan struct{} { return s.done }

// run connects and reconnects until ctx ends.
func (s *Stream) run(ctx context.Context) {
	defer close(s.done)
	failures := 0
	for {
		progressed, err := s.connect(ctx)
		if ctx.Err() != nil {
			return
		}
		if progressed {
			failures = 0
		}
		failures++
		metricDisconns.Inc()
		s.opts.Log.Warn("event stream: disconnected, reconnecting", "err", err, "attempt", failures,
			"last_event_id", s.LastEventID())
		if !sleep(ctx, s.backoff(failures), s.opts.Wake) {
			return
		}
	}
}

// backoff is the delay before reconnection attempt n (n ≥ 1): doubling from
// the base, capped, with equal jitter.
func (s *Stream) backoff(n int) time.Duration {
	base := s.opts.MinBackoff
	if s.retry > 0 {
		base = s.retry
	}
	d := s.opts.MaxBackoff
	if n-1 < 30 && base<<(n-1) < d && base<<(n-1) > 0 {
		d = base << (n - 1)
	}
	return d/2 + rand.N(d/2+1)
}

// connect runs one connection until it ends. progressed reports whether it
// got as far as an event or a position, so the next attempt need not back
// off further.
func (s *Stream) connect(ctx context.Context) (progressed bool, err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	idle := time.AfterFunc(s.opts.IdleTimeout, cancel)
	defer idle.Stop()

	url := s.opts.URL
	if s.opts.Next != nil {
		url = s.opts.Next()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false, err
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Cache-Control", "no-cache")
	req.Header.Set(internalapi.HeaderInternalToken, s.opts.InternalToken)
	from := s.LastEventID()
	if from != "" {
		req.Header.Set("Last-Event-ID", from)
	}
	resp, err := s.opts.HTTPClient.Do(req)
	if err != nil {
		return false, s.idleErr(idle, err)
	}
	defer resp.Body.Close()
	if err := checkResponse(resp); err != nil {
		return false, err
	}

	metricConnects.Inc()
	// A first connection cannot say what was missed: the caches are purged
	// before the stream counts as connected, so Connected means synced.
	if from == "" {
		s.numValid = false
		s.reset()
	}
	s.connected.Store(true)
	metricConnected.Inc()
	defer func() {
		s.connected.Store(false)
		s.lost.Store(time.Now().UnixNano())
		metricConnected.Dec()
	}()
	p := NewParser(&activityReader{r: resp.Body, idle: idle, timeout: s.opts.IdleTimeout}, s.opts.Limits)
	defer func() {
		if r, ok := p.Retry(); ok {
			s.retry = min(r, s.opts.MaxBackoff)
		}
	}()
	for {
		ev, err := p.Next()
		if err == nil {
			progressed = true
			s.dispatch(ev)
		}
		// An id with no data moves the position too (forward only).
		if id := p.LastEventID(); id != "" && id != s.LastEventID() && !s.behind(id) {
			progressed = true
			s.setLastID(id)
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF // a stream never ends on its own
			}
			return progressed, s.idleErr(idle, err)
		}
	}
}

// dispatch hands ev to the callbacks, after recording its id (so that
// LastEventID, read from OnEvent or after it, includes ev). Numeric ids must
// increase: an event at or below the last one is a duplicate and is dropped.
func (s *Stream) dispatch(ev Event) {
	if ev.Type == "reset" {
		s.numValid = false
		s.setLastID(ev.ID)
		s.reset()
		return
	}
	if s.behind(ev.ID) {
		return
	}
	s.setLastID(ev.ID)
	metricEvents.Inc()
	s.opts.OnEvent(ev)
}

func (s *Stream) reset() {
	metricResets.Inc()
	if s.opts.OnReset != nil {
		s.opts.OnReset()
	}
}

// setLastID records the stream's position: an event's id, or the parser's
// last event id (an id with no data moves it too).
func (s *Stream) setLastID(id string) {
	s.mu.Lock()
	s.lastID = id
	s.mu.Unlock()
	s.noteID(id)
}

// behind reports whether id is numeric and not past the position.
func (s *Stream) behind(id string) bool {
	n, err := strconv.ParseUint(id, 10, 64)
	return err == nil && s.numValid && n <= s.lastNum
}

// noteID keeps the numeric form of the position for duplicate checks.
func (s *Stream) noteID(id string) {
	if n, err := strconv.ParseUint(id, 10, 64); err == nil && (!s.numValid || n > s.lastNum) {
		s.lastNum, s.numValid = n, true
	}
}

// idleErr says so when the idle timer cut the connection.
func (s *Stream) idleErr(idle *time.Timer, err error) error {
	if !idle.Stop() {
		return fmt.Errorf("nothing received for %s: %w", s.opts.IdleTimeout, err)
	}
	return err
}

// checkResponse accepts a 200 text/event-stream response.
func checkResponse(resp *http.Response) error {
	if resp.StatusCode != http.StatusOK {
		// The body is an error envelope; its code is enough for the log.
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("status %d: %.200q", resp.StatusCode, b)
	}
	mt, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if err != nil || mt != "text/event-stream" {
		return fmt.Errorf("content type %q is not text/event-stream", resp.Header.Get("Content-Type"))
	}
	return nil
}

// activityReader pushes the idle deadline back whenever bytes arrive.
type activityReader struct {
	r       io.Reader
	idle    *time.Timer
	timeout time.Duration
}

func (a *activityReader) Read(b []byte) (int, error) {
	n, err := a.r.Read(b)
	if n > 0 {
		a.idle.Reset(a.timeout)
	}
	return n, err
}

// sleep waits d or until ctx ends; it reports whether d passed.
func sleep(ctx context.Context, d time.Duration, wake <-chan struct{}) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-wake:
		return true
	case <-ctx.Done():
		return false
	}
}
