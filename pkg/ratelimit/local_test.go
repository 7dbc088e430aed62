package ratelimit

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/VictoriaMetrics/metrics"
)

func newTestLocal() *Local { return NewLocal(LocalOptions{Metrics: metrics.NewSet()}) }

func TestLocalConcurrentAdmitsExactlyLimit(t *testing.T) {
	for _, tc := range []struct {
		name  string
		limit int
	}{
		{"starter", 60},
		{"professional", 600},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := newTestLocal()
			for w := range 3 { // each window admits exactly limit again
				now := minute(w).Add(17 * time.Second)
				if got := countAdmitted([]Limiter{l}, 64, 50, "site", tc.limit, now); got != tc.limit {
					t.Errorf("window %d: %d admitted by 64 goroutines × 50 requests, want %d", w, got, tc.limit)
				}
			}
		})
	}
}

func TestLocalClockSteppingBackDoesNotResetTheCount(t *testing.T) {
	l := newTestLocal()
	ctx := context.Background()
	l.Allow(ctx, "a", 60, minute(1).Add(10*time.Second))
	d := l.Allow(ctx, "a", 60, minute(1).Add(-10*time.Second))
	if want := ok(60, 58, minute(2)); d != want {
		t.Fatalf("after a step back: %+v, want %+v (counted in the newer window)", d, want)
	}
}

func TestLocalShardsOption(t *testing.T) {
	for _, tc := range []struct {
		shards, want int
	}{
		{0, defaultShards},
		{-3, defaultShards},
		{1, 1},
		{3, 4},
		{64, 64},
		{maxShards + 1, maxShards},
	} {
		t.Run(fmt.Sprint(tc.shards), func(t *testing.T) {
			l := NewLocal(LocalOptions{Shards: tc.shards, Metrics: metrics.NewSet()})
			if len(l.shards) != tc.want {
				t.Errorf("%d shards, want %d", len(l.shards), tc.want)
			}
			if d := l.Allow(context.Background(), "a", 2, t0); d != ok(2, 1, minute(1)) {
				t.Errorf("decision %+v", d)
			}
		})
	}
}

// TestLocalWindowGC checks that a shard reached in a new window drops the
// counters not used in that window or the one before, and keeps the others.
func TestLocalWindowGC(t *testing.T) {
	l := NewLocal(LocalOptions{Shards: 16, Metrics: metrics.NewSet()})
	ctx := context.Background()
	for i := range 1000 {
		l.Allow(ctx, fmt.Sprint("old-", i), 60, minute(0))
	}
	for i := range 10 {
		l.Allow(ctx, fmt.Sprint("recent-", i), 60, minute(1))
	}
	if n := l.len(); n != 1010 {
		t.Fatalf("%d counters before the sweep, want 1010", n)
	}
	// One request in window 2 reaching every shard: "old-" was last used
	// two windows back and goes, "recent-" was used in the previous window
	// and stays.
	touched := 0
	for i := 0; touched < len(l.shards); i++ {
		site := fmt.Sprint("sweeper-", i)
		sh := &l.shards[l.shardIndex(site)]
		if sh.latest == windowStart(minute(2)) {
			continue
		}
		l.Allow(ctx, site, 60, minute(2))
		touched++
	}
	if n := l.len(); n != 10+len(l.shards) {
		t.Fatalf("%d counters after the sweep, want %d (recent sites and sweepers)", n, 10+len(l.shards))
	}
	if d := l.Allow(ctx, "recent-3", 60, minute(2)); d != ok(60, 59, minute(3)) {
		t.Errorf("a kept counter in a new window: %+v, want a fresh count", d)
	}
	if d := l.Allow(ctx, "old-3", 60, minute(2)); d != ok(60, 59, minute(3)) {
		t.Errorf("a swept site: %+v, want a fresh count", d)
	}
}

func TestLocalAllowDoesNotAllocate(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		limit int
		// now returns the time of run i; i = 0 is the warm-up request.
		now func(i int) time.Time
	}{
		{"admitted", 1 << 30, func(int) time.Time { return t0 }},
		{"rejected", 1, func(int) time.Time { return t0 }},
		{"unlimited", 0, func(int) time.Time { return t0 }},
		{"negative limit", -1, func(int) time.Time { return t0 }},
		{"each run in a new window", 60, func(i int) time.Time { return t0.Add(time.Duration(i) * Window) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := newTestLocal()
			site := "site-" + tc.name
			i := 0
			l.Allow(ctx, site, tc.limit, tc.now(i))
			allocs := testing.AllocsPerRun(1000, func() {
				i++
				l.Allow(ctx, site, tc.limit, tc.now(i))
			})
			if allocs != 0 {
				t.Errorf("%v allocations per Allow, want 0", allocs)
			}
		})
	}
}

func TestLocalMetrics(t *testing.T) {
	set := metrics.NewSet()
	l := NewLocal(LocalOptions{Metrics: set})
	ctx := context.Background()
	for range 5 {
		l.Allow(ctx, "a", 3, t0)
	}
	l.Allow(ctx, "a", 0, t0)
	for name, want := range map[string]uint64{
		`listgate_edge_ratelimit_decisions_total{backend="local",result="allowed"}`:  4,
		`listgate_edge_ratelimit_decisions_total{backend="local",result="rejected"}`: 2,
	} {
		if got := set.GetOrCreateCounter(name).Get(); got != want {
			t.Errorf("%s = %d, want %d", name, got, want)
		}
	}
}

func TestWindowStart(t *testing.T) {
	for _, tc := range []struct {
		name string
		now  time.Time
		want int64
	}{
		{"minute start", minute(0), minute(0).Unix()},
		{"mid minute", t0, minute(0).Unix()},
		{"last nanosecond", minute(1).Add(-1), minute(0).Unix()},
		{"zone does not matter", t0.In(time.FixedZone("ACST", 9*3600+1800)), minute(0).Unix()},
		{"epoch", time.Unix(0, 0), 0},
		{"before the epoch", time.Unix(-1, 0), -60},
		{"a minute before the epoch", time.Unix(-60, 0), -60},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := windowStart(tc.now); got != tc.want {
				t.Errorf("windowStart(%v) = %d, want %d", tc.now, got, tc.want)
			}
		})
	}
}

func TestLocalUsedCountsNothing(t *testing.T) {
	l := NewLocal(LocalOptions{})
	now := time.Date(2026, 11, 25, 10, 0, 30, 0, time.UTC)
	for i := 0; i < 3; i++ {
		l.Allow(context.Background(), "a", 10, now)
	}
	for i := 0; i < 2; i++ {
		if n := l.Used("a", now); n != 3 {
			t.Fatalf("Used = %d, want 3", n)
		}
	}
	if n := l.Used("b", now); n != 0 {
		t.Errorf("unknown key: Used = %d", n)
	}
	if n := l.Used("a", now.Add(time.Minute)); n != 0 {
		t.Errorf("next window: Used = %d", n)
	}
}
