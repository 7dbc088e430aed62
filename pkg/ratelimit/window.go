package ratelimit

import (
	"sync"
	"time"
)

// WindowLimiter counts events per key — a client IP, a dashboard account —
// in memory and says when a key has had its share: at most Limit events
// per key in fixed windows of Window, starting at a key's first event (not
// aligned to the clock, unlike the plan limits). It serves the origin's
// abuse limits: pairing starts and wrong user codes (pairing.Limiter),
// failed OAuth client authentications (upload.Limiter); store.WindowLimiter
// is the same in Postgres, shared by every origin.
//
// It is per process: several origins each allow Limit. Memory is bounded:
// with 100,000 keys tracked, expired windows are dropped, and if none has
// expired, every count is. Safe for concurrent use.
type WindowLimiter struct {
	limit  int
	window time.Duration
	maxKey int

	mu   sync.Mutex
	keys map[string]*keyWindow
}

// keyWindow is one key's current window.
type keyWindow struct {
	start time.Time
	n     int
}

// NewWindowLimiter returns a limiter of limit events per window per key.
// limit below 1 is treated as 1.
func NewWindowLimiter(limit int, per time.Duration) *WindowLimiter {
	return &WindowLimiter{limit: max(limit, 1), window: per, maxKey: 100_000, keys: map[string]*keyWindow{}}
}

// Allow reports whether key may act at now; when it may not, how long
// until it may (at least a second). It counts nothing: Add does.
func (l *WindowLimiter) Allow(key string, now time.Time) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	w := l.keys[key]
	if w == nil || now.Sub(w.start) >= l.window || w.n < l.limit {
		return true, 0
	}
	return false, max(w.start.Add(l.window).Sub(now), time.Second)
}

// Add counts one event of key at now, in a new window when key has none
// or its window has ended.
func (l *WindowLimiter) Add(key string, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	w := l.keys[key]
	if w == nil || now.Sub(w.start) >= l.window {
		if w == nil && len(l.keys) >= l.maxKey {
			l.prune(now)
		}
		w = &keyWindow{start: now}
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
