package events

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/listgate/listgate/origin/api"
	"github.com/listgate/listgate/origin/store"
	"github.com/listgate/listgate/pkg/promtext"
)

// Config holds what New needs. Zero durations and sizes take the defaults
// documented on each field.
type Config struct {
	DB *store.DB
	// Log receives connection losses, cut subscribers and pruning. Nil:
	// slog.Default().
	Log *slog.Logger
	// Heartbeat is the interval between comment lines on a stream. Default
	// 15 s.
	Heartbeat time.Duration
	// Retention is how long events are kept for clients to resume from.
	// Default 24 h.
	Retention time.Duration
	// PruneInterval is how often Run prunes events older than Retention.
	// Default 10 min; negative: never (another process prunes).
	PruneInterval time.Duration
	// SubscriberBuffer is how many events a stream may have unwritten when
	// new ones arrive; a stream further behind is cut (and resumes with
	// Last-Event-ID). A burst larger than this does not cut a stream that
	// had kept up. Default 1024.
	SubscriberBuffer int
	// WriteTimeout bounds each write to a stream (of at most 32 KiB); a
	// client that reads nothing for that long is cut. Default 10 s. (The server's WriteTimeout
	// and ReadTimeout do not apply to streams.)
	WriteTimeout time.Duration
	// Retry is the reconnection delay the stream suggests to clients (the
	// SSE retry: field). Default 1 s.
	Retry time.Duration
	// PollInterval is how often the hub reads the outbox when no
	// notification came, which also checks its connection. Default 10 s.
	PollInterval time.Duration
	// GapTimeout is how long the hub holds events back behind an id that may
	// still commit (see the package doc) before it gives up on that id. If
	// the id commits later after all, every stream gets a reset. Default 5 s.
	GapTimeout time.Duration
}

// Validate reports a setting out of range.
func (c Config) Validate() error {
	if c.DB == nil {
		return errors.New("events: config: DB is required")
	}
	for name, d := range map[string]time.Duration{"heartbeat": c.Heartbeat, "retention": c.Retention,
		"write timeout": c.WriteTimeout, "retry": c.Retry, "poll interval": c.PollInterval,
		"gap timeout": c.GapTimeout} {
		if d < 0 {
			return fmt.Errorf("events: config: %s must not be negative", name)
		}
	}
	if c.SubscriberBuffer < 0 {
		return errors.New("events: config: subscriber buffer must not be negative")
	}
	return nil
}

func (c Config) withDefaults() Config {
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&c.Heartbeat, 15*time.Second)
	def(&c.Retention, 24*time.Hour)
	def(&c.PruneInterval, 10*time.Minute)
	def(&c.WriteTimeout, 10*time.Second)
	def(&c.Retry, time.Second)
	def(&c.PollInterval, 10*time.Second)
	def(&c.GapTimeout, 5*time.Second)
	if c.SubscriberBuffer == 0 {
		c.SubscriberBuffer = 1024
	}
	if c.Log == nil {
		c.Log = slog.Default()
	}
	return c
}

// Hub fans the outbox out to the streams of one origin process. Build it
// with New, mount it on the API and call Run once. Safe for concurrent use.
type Hub struct {
	cfg Config
	db  *store.DB
	log *slog.Logger

	running atomic.Bool
	// ready is closed once the hub knows a position at or below which every
	// event is final; streams wait for it.
	ready     chan struct{}
	listening atomic.Bool

	mu      sync.Mutex
	subs    map[*subscriber]struct{}
	last    int64 // every event at or below last is final and was published
	stopped bool

	// beforeConnect, when set (tests), runs before each connection attempt.
	beforeConnect func()
}

var _ api.Mounter = (*Hub)(nil)

// New returns a hub; it does nothing until Run.
func New(cfg Config) (*Hub, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Hub{cfg: cfg, db: cfg.DB, log: cfg.Log, ready: make(chan struct{}),
		subs: map[*subscriber]struct{}{}}, nil
}

// Metrics, shared by every hub of the process.
func init() {
	promtext.Describe("listgate_origin_event_streams", "Edges following this origin's event stream now.")
	promtext.Describe("listgate_origin_events_published_total", "Events sent to the edges following this origin (one per event, whatever the number of edges).")
	promtext.Describe("listgate_origin_event_streams_cut_total", "Event streams dropped because their edge fell too far behind.")
	promtext.Describe("listgate_origin_events_listener_reconnects_total", "Reconnections of the origin's Postgres LISTEN session for events.")
	promtext.Describe("listgate_origin_events_pruned_total", "Events deleted from the outbox after 24 hours.")
	promtext.Describe("listgate_origin_event_stream_resets_total", "Resets sent to following edges (they purge their caches and resume).")
	promtext.Describe("listgate_origin_events_gap_waits_total", "Outbox reads that held events back behind a gap of a transaction still in flight.")
	promtext.Describe("listgate_origin_events_gaps_given_up_total", "Outbox gaps given up on (their transactions took too long or rolled back).")
	promtext.Describe("listgate_origin_events_late_total", "Events that committed after their gap was given up on.")
}

var (
	metricStreams      = metrics.GetOrCreateGauge("listgate_origin_event_streams", nil)
	metricPublished    = metrics.GetOrCreateCounter("listgate_origin_events_published_total")
	metricCut          = metrics.GetOrCreateCounter("listgate_origin_event_streams_cut_total")
	metricReconnects   = metrics.GetOrCreateCounter("listgate_origin_events_listener_reconnects_total")
	metricPruned       = metrics.GetOrCreateCounter("listgate_origin_events_pruned_total")
	metricResets       = metrics.GetOrCreateCounter("listgate_origin_event_stream_resets_total")
	metricGapsDeferred = metrics.GetOrCreateCounter("listgate_origin_events_gap_waits_total")
	metricGapsForced   = metrics.GetOrCreateCounter("listgate_origin_events_gaps_given_up_total")
	metricLate         = metrics.GetOrCreateCounter("listgate_origin_events_late_total")
)

// Run listens for events and publishes them, and prunes the outbox, until
// ctx ends; then it ends every stream and returns nil. Connection failures
// are retried with backoff, never returned. Run may be called once.
func (h *Hub) Run(ctx context.Context) error {
	if !h.running.CompareAndSwap(false, true) {
		return errors.New("events: hub already running")
	}
	defer h.stop()
	var wg sync.WaitGroup
	if h.cfg.PruneInterval > 0 {
		wg.Go(func() { h.pruneLoop(ctx) })
	}
	h.listenLoop(ctx)
	wg.Wait()
	return nil
}

// Listening reports whether the hub's LISTEN connection is up.
func (h *Hub) Listening() bool { return h.listening.Load() }

// Position returns the id at or below which every event is final and
// published (0 before the hub is ready).
func (h *Hub) Position() int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.last
}

// event is one outbox row, encoded once for every stream, or a reset sent
// to every stream (reset true, id the position). Read-only.
type event struct {
	id    int64
	typ   string
	data  []byte
	frame []byte
	reset bool
}

// subscriber is one stream's queue of event batches. queued counts the
// events sent to it that its stream has not finished writing. The hub closes
// ch (under mu, after setting reason) when it cuts the stream or stops.
type subscriber struct {
	ch     chan []*event
	queued atomic.Int64
	reason string
}

var errStopped = errors.New("events: hub stopped")

// subscribe registers a subscriber and returns the position it starts
// after: it will receive every event above it and none at or below it.
func (h *Hub) subscribe() (*subscriber, int64, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.stopped {
		return nil, 0, errStopped
	}
	// queued < SubscriberBuffer before every send and every batch holds an
	// event, so the channel never holds more batches than that: sends never
	// block.
	s := &subscriber{ch: make(chan []*event, h.cfg.SubscriberBuffer)}
	h.subs[s] = struct{}{}
	metricStreams.Inc()
	return s, h.last, nil
}

// unsubscribe removes s; its channel is left to the garbage collector.
func (h *Hub) unsubscribe(s *subscriber) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.subs[s]; ok {
		delete(h.subs, s)
		metricStreams.Dec()
	}
}

// dropLocked cuts s: its stream ends after what it has queued.
func (h *Hub) dropLocked(s *subscriber, reason string) {
	delete(h.subs, s)
	metricStreams.Dec()
	s.reason = reason
	close(s.ch)
}

// forEdges is the condition on an outbox row e that it is streamed: lead
// events are the delivery workers' (origin/delivery), not the edges'.
const forEdges = `e.type NOT LIKE 'lead.%'`

// streamed reports whether an event of type typ goes to edges (forEdges).
func streamed(typ string) bool { return !strings.HasPrefix(typ, "lead.") }

// publish fans evs (in id order, all above the position) out as one batch,
// lead events left out, and advances the position past them all.
func (h *Hub) publish(evs []*event) {
	if len(evs) == 0 {
		return
	}
	send := evs
	if slices.ContainsFunc(evs, func(e *event) bool { return !streamed(e.typ) }) {
		send = slices.DeleteFunc(slices.Clone(evs), func(e *event) bool { return !streamed(e.typ) })
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(send) > 0 {
		h.sendLocked(send)
	}
	h.last = evs[len(evs)-1].id
	metricPublished.Add(len(send))
}

// publishReset tells every stream to reset at the current position.
func (h *Hub) publishReset(reason string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	metricResets.Add(len(h.subs))
	h.sendLocked([]*event{{id: h.last, reset: true, frame: appendReset(nil, h.last, reason)}})
}

// sendLocked queues batch for every subscriber. A subscriber is cut, never
// waited for, when it still has SubscriberBuffer or more events unwritten:
// one burst, however large, does not cut a subscriber that had kept up.
func (h *Hub) sendLocked(batch []*event) {
	for s := range h.subs {
		if q := s.queued.Load(); q >= int64(h.cfg.SubscriberBuffer) {
			h.dropLocked(s, "too far behind")
			metricCut.Inc()
			h.log.Warn("event stream too far behind: cut", "unwritten", q, "position", h.last)
			continue
		}
		s.queued.Add(int64(len(batch)))
		s.ch <- batch
	}
}

// start sets the first position and opens the hub to streams.
func (h *Hub) start(pos int64) {
	h.mu.Lock()
	h.last = pos
	h.mu.Unlock()
	close(h.ready)
}

// stop ends every stream and refuses new ones.
func (h *Hub) stop() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.stopped = true
	for s := range h.subs {
		h.dropLocked(s, "origin shutting down")
	}
}
