package ratelimit

import (
	"context"
	"testing"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/listgate/listgate/pkg/devdb/devdbtest"
)

// step offers n requests of site at time at and checks how many were
// admitted and the last decision in full.
type step struct {
	site    string
	limit   int
	at      time.Time
	n       int
	allowed int
	last    Decision
}

func ok(limit, remaining int, reset time.Time) Decision {
	return Decision{Allowed: true, Limit: limit, Remaining: remaining, Reset: reset}
}

func no(limit int, reset time.Time, retryAfter int) Decision {
	return Decision{Limit: limit, Reset: reset, RetryAfter: retryAfter}
}

// contractCases is the behaviour every backend must show (DESIGN.md §4).
var contractCases = []struct {
	name  string
	steps []step
}{
	{"starter first request shows 59", []step{
		{"a", 60, t0, 1, 1, ok(60, 59, minute(1))},
	}},
	{"starter 60th allowed with remaining 0", []step{
		{"a", 60, t0, 60, 60, ok(60, 0, minute(1))},
	}},
	{"starter 61st rejected until the minute's end", []step{
		{"a", 60, t0, 60, 60, ok(60, 0, minute(1))},
		{"a", 60, t0, 1, 0, no(60, minute(1), 30)},
		{"a", 60, minute(1).Add(-time.Millisecond), 5, 0, no(60, minute(1), 1)},
	}},
	{"rejections do not count (seen through a raised limit)", []step{
		{"a", 60, t0, 70, 60, no(60, minute(1), 30)},
		{"a", 70, t0, 11, 10, no(70, minute(1), 30)},
	}},
	{"next window starts fresh", []step{
		{"a", 60, t0, 61, 60, no(60, minute(1), 30)},
		{"a", 60, minute(1), 1, 1, ok(60, 59, minute(2))},
		{"a", 60, minute(1).Add(59 * time.Second), 60, 59, no(60, minute(2), 1)},
	}},
	{"window edges: last millisecond and first instant", []step{
		{"a", 1, minute(1).Add(-time.Millisecond), 1, 1, ok(1, 0, minute(1))},
		{"a", 1, minute(1), 1, 1, ok(1, 0, minute(2))},
	}},
	{"retry after is 60 at the window start", []step{
		{"a", 1, minute(0), 2, 1, no(1, minute(1), 60)},
	}},
	{"retry after rounds up to whole seconds", []step{
		{"a", 1, t0.Add(200 * time.Millisecond), 2, 1, no(1, minute(1), 30)},
	}},
	{"retry after is at least 1", []step{
		{"a", 1, minute(1).Add(-time.Nanosecond), 2, 1, no(1, minute(1), 1)},
	}},
	{"professional 600", []step{
		{"a", 600, t0, 1, 1, ok(600, 599, minute(1))},
		{"a", 600, t0, 599, 599, ok(600, 0, minute(1))},
		{"a", 600, t0, 1, 0, no(600, minute(1), 30)},
	}},
	{"unlimited: always allowed, nothing counted, no headers", []step{
		{"a", 0, t0, 1000, 1000, Decision{Allowed: true, Unlimited: true}},
		{"a", 60, t0, 1, 1, ok(60, 59, minute(1))},
	}},
	{"negative limit fails closed and counts nothing", []step{
		{"a", -1, t0, 5, 0, no(0, minute(1), 30)},
		{"a", 60, t0, 1, 1, ok(60, 59, minute(1))},
	}},
	{"two sites are independent", []step{
		{"a", 60, t0, 61, 60, no(60, minute(1), 30)},
		{"b", 60, t0, 1, 1, ok(60, 59, minute(1))},
		{"a", 60, t0, 1, 0, no(60, minute(1), 30)},
	}},
	{"a lowered limit rejects at once", []step{
		{"a", 600, t0, 100, 100, ok(600, 500, minute(1))},
		{"a", 60, t0, 1, 0, no(60, minute(1), 30)},
	}},
}

// runContract runs contractCases against the limiters fresh makes, each
// case with its own limiter and its own site names.
func runContract(t *testing.T, fresh func(t *testing.T) Limiter) {
	for _, tc := range contractCases {
		t.Run(tc.name, func(t *testing.T) {
			l := fresh(t)
			for i, s := range tc.steps {
				site := t.Name() + "/" + s.site
				allowed := 0
				var last Decision
				for range s.n {
					last = l.Allow(context.Background(), site, s.limit, s.at)
					if last.Allowed {
						allowed++
					}
				}
				if allowed != s.allowed {
					t.Errorf("step %d: %d of %d admitted, want %d", i, allowed, s.n, s.allowed)
				}
				if !last.Reset.Equal(s.last.Reset) {
					t.Errorf("step %d: Reset %v, want %v", i, last.Reset, s.last.Reset)
				}
				last.Reset, s.last.Reset = time.Time{}, time.Time{}
				if last != s.last {
					t.Errorf("step %d: last decision %+v, want %+v", i, last, s.last)
				}
			}
		})
	}
}

func TestLocalContract(t *testing.T) {
	runContract(t, func(*testing.T) Limiter { return NewLocal(LocalOptions{Metrics: metrics.NewSet()}) })
}

func TestRedisContract(t *testing.T) {
	srv := devdbtest.NewRedis(t)
	runContract(t, func(t *testing.T) Limiter {
		h := mustRedis(t, srv.URL, RedisOptions{Timeout: 2 * time.Second}, probeInterval)
		t.Cleanup(func() {
			if calls := h.events.calls(); len(calls) != 0 {
				t.Errorf("OnFallback calls %v on a healthy Redis", calls)
			}
		})
		return h
	})
}
