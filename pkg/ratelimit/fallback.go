package ratelimit

import (
	"context"
	"fmt"
	"time"
)

// probeKey is the counter the probe runs the script on, with limit 0: the
// script only reads it and never writes.
const probeKey = keyPrefix + "listgate-probe}:0"

// enterFallback switches the limiter to local decisions because of cause:
// one log line, one OnFallback(true), the metrics, and a probe goroutine
// that switches back. Only the first of concurrent failures does anything.
func (r *Redis) enterFallback(cause error) {
	if r.down.Load() {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.down.Load() || r.closed.Load() {
		return
	}
	r.down.Store(true)
	r.metrics.fallbacks.Inc()
	r.metrics.fallbackActive.Inc()
	r.log.Warn("ratelimit: Redis unavailable, deciding locally at limit/expected_edges until it answers again",
		"addr", r.addr, "timeout", r.timeout, "expected_edges", r.edges, "err", cause)
	if r.onFallback != nil {
		r.onFallback(true)
	}
	r.probes.Add(1)
	go r.probe()
}

// probe checks Redis every probeEvery until it answers, then switches the
// limiter back to Redis; it ends then or at Close. Failed checks are logged
// at debug level only.
func (r *Redis) probe() {
	defer r.probes.Done()
	tick := time.NewTicker(r.probeEvery)
	defer tick.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-tick.C:
		}
		if err := r.check(); err != nil {
			r.log.Debug("ratelimit: Redis probe failed", "addr", r.addr, "err", err)
			continue
		}
		r.exitFallback()
		return
	}
}

// check reports whether Redis is usable again: connected (a new client if
// there was none), answering PING, and running the script within the
// request timeout. The script (with limit 0, so it writes nothing) catches a
// server that answers PING but holds scripts, as CLIENT PAUSE WRITE does,
// which would otherwise make the limiter flap. Only the probe goroutine
// calls check, and only while down is set.
func (r *Redis) check() error {
	ctx, cancel := context.WithTimeout(context.Background(), connectTimeout)
	defer cancel()
	if r.client == nil {
		client, err := r.connect(ctx)
		if err != nil {
			return err
		}
		r.client = client
	}
	if err := r.client.Do(ctx, r.client.B().Ping().Build()).Error(); err != nil {
		return fmt.Errorf("ping: %w", err)
	}
	if _, err := r.eval(probeKey, 0, r.timeout); err != nil {
		return fmt.Errorf("script: %w", err)
	}
	return nil
}

// exitFallback switches the limiter back to Redis: one log line, one
// OnFallback(false), the gauge.
func (r *Redis) exitFallback() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed.Load() {
		return
	}
	r.down.Store(false)
	r.metrics.fallbackActive.Dec()
	r.log.Info("ratelimit: Redis answers again, deciding in Redis", "addr", r.addr)
	if r.onFallback != nil {
		r.onFallback(false)
	}
}
