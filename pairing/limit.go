package pairing

import (
	"fmt"
	"time"

	"github.com/listgate/listgate/pkg/ratelimit"
)

// Limiter counts events per key — a client IP, a dashboard account — and
// says when a key has had its share. The service uses three (Config):
// pairing starts per IP, wrong user codes per IP, and wrong user codes per
// dashboard account. Implementations must be safe for concurrent use.
//
// The per-account one is the dashboard's hook: there are no accounts yet
// (approval is an operator's CLI command, which no limit applies to). The
// dashboard passes its signed-in account as Actor.Account, and may replace
// the in-memory default (ratelimit.WindowLimiter) with a limiter shared by
// every origin (store.WindowLimiter).
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

var _ Limiter = (*ratelimit.WindowLimiter)(nil)
