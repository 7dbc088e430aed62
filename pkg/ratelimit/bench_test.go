package ratelimit

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/listgate/listgate/pkg/devdb/devdbtest"
)

// benchSites is how many sites the benchmarks spread their requests over.
const benchSites = 64

// benchAllow offers requests from b.RunParallel's goroutines, each cycling
// through benchSites sites under a limit no run reaches, so every request
// takes the admitting path: the steady state of a busy edge. 32 goroutines
// per CPU stand for an edge's many concurrent requests, which is what lets
// the Redis client pipeline.
func benchAllow(b *testing.B, l Limiter) {
	sites := make([]string, benchSites)
	for i := range sites {
		sites[i] = "site-" + strconv.Itoa(i)
	}
	ctx := context.Background()
	now := time.Now()
	var next atomic.Int64
	b.ReportAllocs()
	b.SetParallelism(32)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := int(next.Add(1))
		for pb.Next() {
			if !l.Allow(ctx, sites[i%benchSites], 1<<40, now).Allowed {
				b.Error("rejected")
				return
			}
			i++
		}
	})
}

func BenchmarkLocal(b *testing.B) {
	benchAllow(b, NewLocal(LocalOptions{Metrics: metrics.NewSet()}))
}

func BenchmarkRedis(b *testing.B) {
	srv := devdbtest.NewRedis(b)
	// A generous timeout: a fallback would measure the local limiter.
	h := mustRedis(b, srv.URL, RedisOptions{Timeout: time.Second}, probeInterval)
	benchAllow(b, h)
	if calls := h.events.calls(); len(calls) != 0 {
		b.Fatalf("OnFallback %v during the benchmark", calls)
	}
}
