package upload

import (
	"time"

	"github.com/listgate/listgate/pkg/ratelimit"
)

// Limiter counts failed client authentications per client IP and says when
// an IP has had its share (ratelimit.WindowLimiter in memory,
// store.WindowLimiter in Postgres). Implementations must be safe for
// concurrent use.
type Limiter interface {
	// Allow reports whether key may try at now; when it may not, how long
	// until it may (at least a second).
	Allow(key string, now time.Time) (ok bool, retryAfter time.Duration)
	// Add counts one failure of key at now.
	Add(key string, now time.Time)
}

var _ Limiter = (*ratelimit.WindowLimiter)(nil)
