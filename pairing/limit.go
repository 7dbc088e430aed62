package pairing

import (
	"fmt"
	"sync"
	"time"
)

// Limiter counts events per key — a client IP, a dashboard account — and
// says when a key has had its share. The service uses three (Config):
// pairing starts per IP, wrong user codes per IP, and wrong user codes per
// dashboard account. Implementations must be safe for concurrent use.
//
// The per-account one is the dashboard's hook: there are no accounts yet
// (approval is an operator's CLI command, which no limit applies to). The
// dashboard passes its signed-in account as Actor.Account, and may replace
// the in-memory default with a limiter shared by every origin.
type Limiter interface {
	// Allow reports whether key may act at now; when it may not, how long
	// until it may (at least a second).
	Allow(key string, now time.Time) (ok bool, retryAfter time.Duration)
	// Add counts one event of key at now.
	Add(key string, now time.Time)
}

// RateLimitError is the answer when a Limiter said no: 429 with
// Retry-After on HTTP.
type RateLimitError struct {
	// What was limited: "start" or "entry".
	What string
	// RetryAfter is how long until the next attempt may succeed.
	RetryAfter time.Duration
}

func (e *RateLimitError) Error() string {
	return fmt.Sprintf("pairing: too many %s attempts; retry in %s", e.What, e.RetryAfter.Round(time.Second))
}

// WindowLimiter is the in-memory Limiter: at most Limit events per key in
// fixed windows of Window, starting at a key's first event. It is per
// process: several origins each allow Limit. Memory is bounded: with
// 100,000 keys tracked, expired windows are dropped, and if none has
// expired, every count is. Safe for concurrent use.
type WindowLimiter struct {
	limit  int
	window time.Duration
	maxKey int

	mu   sync.Mutex
	keys map[string]*window
}

type window struct {
	start time.Time
	n     int
}

var _ Limiter = (*WindowLimiter)(nil)

// NewWindowLimiter returns a limiter of limit events per window per key.
// limit below 1 is treated as 1.
func NewWindowLimiter(limit int, per time.Duration) *WindowLimiter {
	return &WindowLimiter{limit: max(limit, 1), window: per, maxKey: 100_000, keys: map[string]*window{}}
}

// Allow implements Limiter.
func (l *WindowLimiter) Allow(key string, now time.Time) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	w := l.keys[key]
	if w == nil || now.Sub(w.start) >= l.window || w.n < l.limit {
		return true, 0
	}
	return false, max(w.start.Add(l.window).Sub(now), time.Second)
}

// Add implements Limiter.
func (l *WindowLimiter) Add(key string, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	w := l.keys[key]
	if w == nil || now.Sub(w.start) >= l.window {
		if w == nil && len(l.keys) >= l.maxKey {
			l.prune(now)
		}
		w = &window{start: now}
		l.keys[key] = w
	}
	w.n++
}

// prune drops expired windows, or all of them when none has expired.
func (l *WindowLimiter) prune(now time.Time) {
	for k, w := range l.keys {
		if now.Sub(w.start) >= l.window {
			delete(l.keys, k)
		}
	}
	if len(l.keys) >= l.maxKey {
		clear(l.keys)
	}
}
