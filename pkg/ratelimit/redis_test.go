package ratelimit

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/listgate/listgate/pkg/devdb/devdbtest"
)

// fastProbe makes the tests' probes quick; production probes every second.
const fastProbe = 20 * time.Millisecond

func TestRedisTwoEdgesShareTheCountExactly(t *testing.T) {
	srv := devdbtest.NewRedis(t)
	for _, tc := range []struct {
		name  string
		limit int
	}{
		{"starter", 60},
		{"professional", 600},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// A generous timeout: this test is about counting, and a
			// fallback would admit more.
			opts := RedisOptions{Timeout: 5 * time.Second, ExpectedEdges: 2}
			a := mustRedis(t, srv.URL, opts, probeInterval)
			b := mustRedis(t, srv.URL, opts, probeInterval)
			for w := range 2 {
				now := minute(w).Add(5 * time.Second)
				got := countAdmitted([]Limiter{a, b}, 64, 40, t.Name(), tc.limit, now)
				if got != tc.limit {
					t.Errorf("window %d: two edges admitted %d, want exactly %d", w, got, tc.limit)
				}
			}
			for _, h := range []*harness{a, b} {
				if calls := h.events.calls(); len(calls) != 0 {
					t.Fatalf("OnFallback %v: Redis was not used throughout", calls)
				}
			}
			allowed := a.counter(`listgate_edge_ratelimit_decisions_total{backend="redis",result="allowed"}`) +
				b.counter(`listgate_edge_ratelimit_decisions_total{backend="redis",result="allowed"}`)
			if allowed != uint64(2*tc.limit) {
				t.Errorf("redis allowed decisions %d, want %d", allowed, 2*tc.limit)
			}
		})
	}
}

// TestRedisKilledFallsBackOnce crashes Redis mid-window: decisions go on
// from the local fallback at limit/ExpectedEdges, with one OnFallback(true),
// one warning and one count in listgate_edge_ratelimit_fallbacks_total however many
// requests and probes follow.
func TestRedisKilledFallsBackOnce(t *testing.T) {
	srv := devdbtest.NewRedis(t)
	h := mustRedis(t, srv.URL, RedisOptions{Timeout: time.Second, ExpectedEdges: 3}, fastProbe)
	ctx := context.Background()
	for i := range 5 {
		if d := h.Allow(ctx, "site", 60, t0); d != ok(60, 59-i, minute(1)) {
			t.Fatalf("request %d before the crash: %+v", i, d)
		}
	}

	srv.Kill()

	for _, tc := range []struct {
		name       string
		site       string
		limit      int
		n, allowed int
		last       Decision
	}{
		// The fallback counts from zero: this edge's share is 60/3 = 20.
		{"share of the starter limit", "site", 60, 30, 20, no(60, minute(1), 30)},
		{"first fallback request reports the plan limit", "other", 60, 1, 1, ok(60, 19, minute(1))},
		{"share is at least 1", "small", 2, 3, 1, no(2, minute(1), 30)},
		{"unlimited stays unlimited", "big", 0, 5, 5, Decision{Allowed: true, Unlimited: true}},
		{"negative limit still fails closed", "bad", -1, 2, 0, no(0, minute(1), 30)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			allowed := 0
			var last Decision
			for range tc.n {
				last = h.Allow(ctx, tc.site, tc.limit, t0)
				if last.Allowed {
					allowed++
				}
			}
			if allowed != tc.allowed || last != tc.last {
				t.Errorf("%d of %d admitted, last %+v; want %d, %+v", allowed, tc.n, last, tc.allowed, tc.last)
			}
		})
	}

	h.events.await(t, true)
	// Let the probe fail a few times: none of that may log above debug or
	// call OnFallback again.
	h.logs.awaitCount(t, slog.LevelDebug, 3)
	if calls := h.events.calls(); len(calls) != 1 {
		t.Errorf("OnFallback calls %v, want [true]", calls)
	}
	if n := h.logs.count(slog.LevelWarn); n != 1 {
		t.Errorf("%d warnings, want 1:\n%s", n, h.logs.text())
	}
	if n := h.counter(`listgate_edge_ratelimit_fallbacks_total`); n != 1 {
		t.Errorf("listgate_edge_ratelimit_fallbacks_total = %d, want 1", n)
	}
	if g := h.gauge(`listgate_edge_ratelimit_fallback_active`); g != 1 {
		t.Errorf("listgate_edge_ratelimit_fallback_active = %v, want 1", g)
	}
	if n := h.counter(`listgate_edge_ratelimit_decisions_total{backend="fallback",result="allowed"}`); n != 20+1+1 {
		t.Errorf("fallback allowed decisions %d, want 22", n)
	}
	h.Close()
	if g := h.gauge(`listgate_edge_ratelimit_fallback_active`); g != 0 {
		t.Errorf("listgate_edge_ratelimit_fallback_active after Close = %v, want 0", g)
	}
}

// TestRedisOutageAndReturn makes Redis slower than the timeout in two ways,
// and checks that the limiter falls back, stays in fallback while Redis is
// slow, and returns by itself once Redis answers in time, exactly once each
// way.
func TestRedisOutageAndReturn(t *testing.T) {
	for _, tc := range []struct {
		name string
		// stall makes Redis unresponsive for about d; it returns at once.
		stall func(t *testing.T, admin rueidis.Client, d time.Duration)
	}{
		{"busy script", func(t *testing.T, admin rueidis.Client, d time.Duration) {
			// DEBUG SLEEP is disabled on Redis 7 by default; a script
			// that spins blocks the server just the same.
			spin := rueidis.NewLuaScript(`local t = redis.call('TIME')
local stop = t[1] * 1000000 + t[2] + tonumber(ARGV[1])
repeat t = redis.call('TIME') until t[1] * 1000000 + t[2] >= stop
return 1`)
			go spin.Exec(context.Background(), admin, nil, []string{strconv.FormatInt(d.Microseconds(), 10)})
		}},
		{"client pause write", func(t *testing.T, admin rueidis.Client, d time.Duration) {
			// PING still answers during a write pause: the probe must not
			// take that for a return.
			err := admin.Do(context.Background(), admin.B().ClientPause().Timeout(d.Milliseconds()).Write().Build()).Error()
			if err != nil {
				t.Fatalf("CLIENT PAUSE: %v", err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := devdbtest.NewRedis(t)
			admin := mustAdmin(t, srv)
			// A timeout well above a loaded machine's latency (the calls
			// before the stall and after the return must not be slow), a
			// stall well above the slowCallsToFallback timeouts in a row
			// that make the limiter fall back.
			h := mustRedis(t, srv.URL, RedisOptions{Timeout: 500 * time.Millisecond}, fastProbe)
			ctx := context.Background()
			if d := h.Allow(ctx, "site", 60, t0); d != ok(60, 59, minute(1)) {
				t.Fatalf("before the stall: %+v", d)
			}

			tc.stall(t, admin, 3*time.Second)
			// The stall starts when Redis gets to it: offer requests
			// until one times out.
			deadline := time.Now().Add(waitLimit)
			for len(h.events.calls()) == 0 {
				if time.Now().After(deadline) {
					t.Fatal("no fallback while Redis stalls")
				}
				if d := h.Allow(ctx, "spin", 1<<20, t0); !d.Allowed {
					t.Fatalf("rejected while falling back: %+v", d)
				}
			}
			h.events.await(t, true)
			if d := h.Allow(ctx, "during", 60, t0); d != ok(60, 59, minute(1)) {
				t.Errorf("fallback decision %+v", d)
			}

			h.events.await(t, false)
			before := h.counter(`listgate_edge_ratelimit_decisions_total{backend="redis",result="allowed"}`)
			if d := h.Allow(ctx, "after", 60, t0); d != ok(60, 59, minute(1)) {
				t.Errorf("after the return: %+v", d)
			}
			if after := h.counter(`listgate_edge_ratelimit_decisions_total{backend="redis",result="allowed"}`); after != before+1 {
				t.Errorf("the request after the return was not decided by Redis")
			}
			if calls := h.events.calls(); len(calls) != 2 {
				t.Errorf("OnFallback calls %v, want [true false]", calls)
			}
			if w, i := h.logs.count(slog.LevelWarn), h.logs.count(slog.LevelInfo); w != 1 || i != 1 {
				t.Errorf("%d warnings and %d info lines, want 1 and 1:\n%s", w, i, h.logs.text())
			}
			if g := h.gauge(`listgate_edge_ratelimit_fallback_active`); g != 0 {
				t.Errorf("listgate_edge_ratelimit_fallback_active = %v, want 0", g)
			}
			if n := h.counter(`listgate_edge_ratelimit_fallbacks_total`); n != 1 {
				t.Errorf("listgate_edge_ratelimit_fallbacks_total = %d, want 1", n)
			}
		})
	}
}

// TestRedisUnreachableAtStart: no error from NewRedis; the limiter starts
// in fallback and says so before NewRedis returns.
func TestRedisUnreachableAtStart(t *testing.T) {
	h := mustRedis(t, "redis://"+closedPort(t)+"/0", RedisOptions{ExpectedEdges: 2}, fastProbe)
	if calls := h.events.calls(); len(calls) != 1 || !calls[0] {
		t.Fatalf("OnFallback calls %v when NewRedis returned, want [true]", calls)
	}
	got := countAdmitted([]Limiter{h}, 8, 10, "site", 60, t0)
	if got != 30 {
		t.Errorf("%d admitted, want this edge's share 60/2 = 30", got)
	}
	h.logs.awaitCount(t, slog.LevelDebug, 2) // the probe keeps trying, quietly
	if n := h.logs.count(slog.LevelWarn); n != 1 {
		t.Errorf("%d warnings, want 1", n)
	}
}

func TestRedisAllowAfterClose(t *testing.T) {
	srv := devdbtest.NewRedis(t)
	h := mustRedis(t, srv.URL, RedisOptions{}, fastProbe)
	h.Close()
	h.Close()
	if d := h.Allow(context.Background(), "site", 1, t0); d != ok(1, 0, minute(1)) {
		t.Errorf("after Close: %+v", d)
	}
	if calls := h.events.calls(); len(calls) != 0 {
		t.Errorf("OnFallback calls %v after Close, want none", calls)
	}
}

func TestRedisCallerContextDone(t *testing.T) {
	srv := devdbtest.NewRedis(t)
	h := mustRedis(t, srv.URL, RedisOptions{}, fastProbe)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if d := h.Allow(ctx, "site", 60, t0); d != ok(60, 59, minute(1)) {
		t.Errorf("decision %+v", d)
	}
	if calls := h.events.calls(); len(calls) != 0 {
		t.Errorf("a caller's cancelled ctx made the limiter fall back: %v", calls)
	}
}

func TestRedisKeys(t *testing.T) {
	srv := devdbtest.NewRedis(t)
	admin := mustAdmin(t, srv)
	h := mustRedis(t, srv.URL, RedisOptions{Timeout: time.Second}, fastProbe)
	ctx := context.Background()
	for range 3 {
		h.Allow(ctx, "acme", 2, t0)
	}
	key := "lg:rl:{acme}:" + strconv.FormatInt(minute(0).Unix(), 10)
	if n, err := admin.Do(ctx, admin.B().Get().Key(key).Build()).AsInt64(); err != nil || n != 2 {
		t.Errorf("GET %s = %d, %v; want 2 (the rejection is not counted)", key, n, err)
	}
	ttl, err := admin.Do(ctx, admin.B().Ttl().Key(key).Build()).AsInt64()
	if err != nil || ttl <= 60 || ttl > 120 {
		t.Errorf("TTL %s = %d, %v; want (60, 120]", key, ttl, err)
	}
	if n, err := admin.Do(ctx, admin.B().Exists().Key(probeKey).Build()).AsInt64(); err != nil || n != 0 {
		t.Errorf("EXISTS %s = %d, %v; the probe must never write", probeKey, n, err)
	}
}

func TestNewRedisRejectsBadOptions(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name string
		ctx  context.Context
		opts RedisOptions
	}{
		{"empty URL", context.Background(), RedisOptions{}},
		{"wrong scheme", context.Background(), RedisOptions{URL: "http://127.0.0.1:6379"}},
		{"unparsable URL with a password", context.Background(), RedisOptions{URL: "redis://user:s3cret@host:port:x/0"}},
		{"bad database with a password", context.Background(), RedisOptions{URL: "redis://user:s3cret@127.0.0.1:6379/abc"}},
		{"negative timeout", context.Background(), RedisOptions{URL: "redis://127.0.0.1:6379", Timeout: -time.Millisecond}},
		{"negative expected edges", context.Background(), RedisOptions{URL: "redis://127.0.0.1:6379", ExpectedEdges: -1}},
		{"context done", cancelled, RedisOptions{URL: "redis://127.0.0.1:6379"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := NewRedis(tc.ctx, tc.opts)
			if err == nil {
				r.Close()
				t.Fatal("no error")
			}
			if strings.Contains(err.Error(), "s3cret") {
				t.Errorf("error reveals the password: %v", err)
			}
			if tc.name == "context done" && !errors.Is(err, context.Canceled) {
				t.Errorf("error %v, want context.Canceled", err)
			}
		})
	}
}

func TestRedisDefaults(t *testing.T) {
	r, err := NewRedis(context.Background(), RedisOptions{URL: "redis://" + closedPort(t) + "/0", Log: slog.New(newLogRecorder())})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.timeout != 5*time.Millisecond || r.edges != 1 || r.probeEvery != time.Second {
		t.Errorf("timeout %v, edges %d, probe every %v; want 5ms, 1, 1s", r.timeout, r.edges, r.probeEvery)
	}
}

// closedPort is a loopback host:port where nothing listens.
func closedPort(tb testing.TB) string {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// TestRedisOneSlowCallDoesNotFallBack: a call over the timeout is decided
// locally, but the limiter stays on Redis until slowCallsToFallback calls
// in a row are slow.
func TestRedisOneSlowCallDoesNotFallBack(t *testing.T) {
	srv := devdbtest.NewRedis(t)
	admin := mustAdmin(t, srv)
	// The call before the pause must not be slow, the one after it must:
	// a 500 ms timeout, and a 900 ms pause, leave 400 ms for the test to
	// make that call on a loaded machine (with 100 ms and 150 ms a 50 ms
	// wait for a core made it fast and the test fail), and the call after
	// it is answered in time whenever it starts.
	h := mustRedis(t, srv.URL, RedisOptions{Timeout: 500 * time.Millisecond}, fastProbe)
	ctx := context.Background()
	if d := h.Allow(ctx, "site", 60, t0); d != ok(60, 59, minute(1)) {
		t.Fatalf("before the pause: %+v", d)
	}
	// Writes (the script) wait 900 ms: the next call times out, the one
	// after it is answered.
	if err := admin.Do(ctx, admin.B().ClientPause().Timeout(900).Write().Build()).Error(); err != nil {
		t.Fatalf("CLIENT PAUSE: %v", err)
	}
	if d := h.Allow(ctx, "slow", 60, t0); !d.Allowed {
		t.Fatalf("slow call: %+v", d)
	}
	if n := h.counter(`listgate_edge_ratelimit_redis_slow_calls_total`); n != 1 {
		t.Fatalf("listgate_edge_ratelimit_redis_slow_calls_total = %d, want 1", n)
	}
	before := h.counter(`listgate_edge_ratelimit_decisions_total{backend="redis",result="allowed"}`)
	deadline := time.Now().Add(waitLimit)
	for h.counter(`listgate_edge_ratelimit_decisions_total{backend="redis",result="allowed"}`) == before {
		if time.Now().After(deadline) {
			t.Fatal("Redis never decided again after the pause")
		}
		h.Allow(ctx, "after", 60, t0)
	}
	if calls := h.events.calls(); len(calls) != 0 {
		t.Errorf("OnFallback calls %v, want none", calls)
	}
	if n := h.counter(`listgate_edge_ratelimit_fallbacks_total`); n != 0 {
		t.Errorf("listgate_edge_ratelimit_fallbacks_total = %d, want 0", n)
	}
}
