package upload

import (
	"sync"
	"time"
)

// failLimiter counts failed client authentications per client IP in fixed
// windows, to slow down secret guessing. It is in memory and per process:
// several origins each allow the limit. Safe for concurrent use.
type failLimiter struct {
	limit  int
	window time.Duration
	// maxIPs bounds memory: when this many IPs are tracked, expired
	// windows are dropped, and if none has, every count is.
	maxIPs int

	mu  sync.Mutex
	ips map[string]*failWindow
}

type failWindow struct {
	start    time.Time
	failures int
}

func newFailLimiter(limit int, window time.Duration) *failLimiter {
	return &failLimiter{limit: limit, window: window, maxIPs: 100_000, ips: map[string]*failWindow{}}
}

// blocked reports whether ip has used up its failures in the current
// window, and if so how long until the window ends (at least one second).
func (l *failLimiter) blocked(ip string, now time.Time) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	w := l.ips[ip]
	if w == nil || now.Sub(w.start) >= l.window || w.failures < l.limit {
		return false, 0
	}
	wait := w.start.Add(l.window).Sub(now)
	return true, max(wait, time.Second)
}

// fail counts one failed authentication from ip.
func (l *failLimiter) fail(ip string, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	w := l.ips[ip]
	if w == nil || now.Sub(w.start) >= l.window {
		if w == nil && len(l.ips) >= l.maxIPs {
			l.prune(now)
		}
		w = &failWindow{start: now}
		l.ips[ip] = w
	}
	w.failures++
}

// prune drops expired windows, or all of them when none has expired.
func (l *failLimiter) prune(now time.Time) {
	for ip, w := range l.ips {
		if now.Sub(w.start) >= l.window {
			delete(l.ips, ip)
		}
	}
	if len(l.ips) >= l.maxIPs {
		clear(l.ips)
	}
}
