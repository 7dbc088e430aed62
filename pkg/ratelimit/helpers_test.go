package ratelimit

import (
	"context"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/redis/rueidis"

	"github.com/listgate/listgate/pkg/devdb"
	"github.com/listgate/listgate/pkg/devdb/devdbtest"
)

func TestMain(m *testing.M) { os.Exit(devdbtest.RunTests(m)) }

// t0 is the middle of a window: 30 s before the minute's end.
var t0 = time.Date(2030, 1, 2, 3, 4, 30, 0, time.UTC)

// minute is the start of t0's window shifted by k windows.
func minute(k int) time.Time {
	return time.Date(2030, 1, 2, 3, 4+k, 0, 0, time.UTC)
}

// waitLimit bounds every wait for an event in these tests.
const waitLimit = 15 * time.Second

// fallbackEvents records OnFallback calls.
type fallbackEvents struct {
	mu   sync.Mutex
	list []bool
	ch   chan bool
}

func newFallbackEvents() *fallbackEvents { return &fallbackEvents{ch: make(chan bool, 64)} }

func (e *fallbackEvents) record(active bool) {
	e.mu.Lock()
	e.list = append(e.list, active)
	e.mu.Unlock()
	e.ch <- active
}

func (e *fallbackEvents) calls() []bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]bool(nil), e.list...)
}

// await waits for the next OnFallback call and checks its argument.
func (e *fallbackEvents) await(tb testing.TB, want bool) {
	tb.Helper()
	select {
	case got := <-e.ch:
		if got != want {
			tb.Fatalf("OnFallback(%v), want OnFallback(%v)", got, want)
		}
	case <-time.After(waitLimit):
		tb.Fatalf("no OnFallback(%v) within %v", want, waitLimit)
	}
}

// logRecorder is a slog.Handler that keeps every record's level and
// message, at every level.
type logRecorder struct {
	mu     sync.Mutex
	recs   []slog.Record
	notify chan struct{}
}

func newLogRecorder() *logRecorder { return &logRecorder{notify: make(chan struct{}, 1)} }

func (h *logRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (h *logRecorder) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *logRecorder) WithGroup(string) slog.Handler            { return h }

func (h *logRecorder) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	h.recs = append(h.recs, r.Clone())
	h.mu.Unlock()
	select {
	case h.notify <- struct{}{}:
	default:
	}
	return nil
}

// count is the number of records at level.
func (h *logRecorder) count(level slog.Level) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, r := range h.recs {
		if r.Level == level {
			n++
		}
	}
	return n
}

// awaitCount waits until at least n records at level were logged.
func (h *logRecorder) awaitCount(tb testing.TB, level slog.Level, n int) {
	tb.Helper()
	deadline := time.After(waitLimit)
	for h.count(level) < n {
		select {
		case <-h.notify:
		case <-deadline:
			tb.Fatalf("%d %v records within %v, want %d", h.count(level), level, waitLimit, n)
		}
	}
}

// text is every record's attributes, for checks that nothing secret leaks.
func (h *logRecorder) text() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var s string
	for _, r := range h.recs {
		s += r.Message
		r.Attrs(func(a slog.Attr) bool { s += " " + a.String(); return true })
		s += "\n"
	}
	return s
}

// harness is a Redis limiter under test with what it reports.
type harness struct {
	*Redis
	events *fallbackEvents
	logs   *logRecorder
	set    *metrics.Set
}

// mustRedis starts a Redis limiter on url with opts (URL, OnFallback, Log and
// Metrics are filled in) and a probe every probeEvery; it is closed when the
// test ends.
func mustRedis(tb testing.TB, url string, opts RedisOptions, probeEvery time.Duration) *harness {
	tb.Helper()
	h := &harness{events: newFallbackEvents(), logs: newLogRecorder(), set: metrics.NewSet()}
	opts.URL = url
	opts.OnFallback = h.events.record
	opts.Log = slog.New(h.logs)
	opts.Metrics = h.set
	r, err := newRedis(context.Background(), opts, probeEvery)
	if err != nil {
		tb.Fatalf("newRedis: %v", err)
	}
	tb.Cleanup(r.Close)
	h.Redis = r
	return h
}

func (h *harness) counter(name string) uint64 { return h.set.GetOrCreateCounter(name).Get() }

func (h *harness) gauge(name string) float64 { return h.set.GetOrCreateGauge(name, nil).Get() }

// mustAdmin is a plain client for the test's own commands to srv.
func mustAdmin(tb testing.TB, srv *devdb.Redis) rueidis.Client {
	tb.Helper()
	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{srv.Addr}, DisableCache: true})
	if err != nil {
		tb.Fatalf("admin client: %v", err)
	}
	tb.Cleanup(c.Close)
	return c
}

// countAdmitted offers calls requests of site from goroutines goroutines,
// spread round-robin over limiters, and returns how many were admitted.
func countAdmitted(limiters []Limiter, goroutines, calls int, site string, limit int, now time.Time) int {
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		admitted int
	)
	start := make(chan struct{})
	for g := range goroutines {
		l := limiters[g%len(limiters)]
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			n := 0
			for range calls {
				if l.Allow(context.Background(), site, limit, now).Allowed {
					n++
				}
			}
			mu.Lock()
			admitted += n
			mu.Unlock()
		}()
	}
	close(start)
	wg.Wait()
	return admitted
}
