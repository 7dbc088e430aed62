package ratelimit

import (
	"context"
	"time"
)

// Window is the length of a rate-limit window. Windows are aligned to the
// UTC minute: a window starts at hh:mm:00.000 UTC and ends 60 s later.
const Window = 60 * time.Second

const windowSeconds = int64(Window / time.Second)

// Limiter decides whether one more request of a site fits the site's limit
// per [Window]. [*Local] and [*Redis] satisfy it; the edge declares the
// interface it consumes, this one documents the contract.
//
// Allow is safe for concurrent use. site identifies the counter (the edge
// passes the site id; any string works, e.g. a client IP for a per-IP
// limit). limit is the number of requests admitted per window: 0 means
// unlimited, a negative limit rejects every request. now is the time of the
// request; it picks the window, so callers inject it in tests. Allow never
// fails: a backend that cannot decide falls back to a local decision.
type Limiter interface {
	Allow(ctx context.Context, site string, limit int, now time.Time) Decision
}

var (
	_ Limiter = (*Local)(nil)
	_ Limiter = (*Redis)(nil)
)

// Decision is the outcome of one [Limiter.Allow] call and carries what the
// edge needs for the X-RateLimit-* and Retry-After headers.
type Decision struct {
	// Allowed reports whether the request is admitted. An admitted request
	// was counted; a rejected one was not.
	Allowed bool
	// Limit is the limit the caller passed (X-RateLimit-Limit): requests
	// admitted per window. 0 for unlimited and for a negative (invalid)
	// limit.
	Limit int
	// Remaining is what is left in the window after this request
	// (X-RateLimit-Remaining): limit minus the requests admitted so far in
	// the window, this one included. The first request of a window on a
	// limit of 60 shows 59, the last admitted one shows 0, and a rejection
	// shows 0.
	Remaining int
	// Reset is the end of the current window, i.e. the start of the next
	// UTC minute after now (X-RateLimit-Reset is Reset.Unix()). Zero when
	// Unlimited.
	Reset time.Time
	// RetryAfter is set on rejections only (Retry-After): the whole seconds
	// from now to Reset, rounded up and at least 1, so a client that waits
	// that long arrives in the next window. 0 when Allowed.
	RetryAfter int
	// Unlimited is set when the limit is 0: the request is always allowed,
	// nothing is counted and the response carries no rate-limit headers.
	Unlimited bool
}

// windowStart is the Unix second at which the UTC minute holding now
// starts.
func windowStart(now time.Time) int64 {
	s := now.Unix()
	ws := s - s%windowSeconds
	if s < 0 && s%windowSeconds != 0 {
		ws -= windowSeconds
	}
	return ws
}

// unlimited is the decision for a limit of 0.
func unlimited() Decision {
	return Decision{Allowed: true, Unlimited: true}
}

// admitted is the decision for a request that was counted as the n-th of
// the window starting at ws.
func admitted(limit, n int, ws int64) Decision {
	return Decision{Allowed: true, Limit: limit, Remaining: limit - n, Reset: time.Unix(ws+windowSeconds, 0).UTC()}
}

// rejected is the decision for a request that does not fit the window
// starting at ws. A negative limit is reported as 0.
func rejected(limit int, ws int64, now time.Time) Decision {
	reset := time.Unix(ws+windowSeconds, 0).UTC()
	retry := int((reset.Sub(now) + time.Second - 1) / time.Second)
	if retry < 1 {
		retry = 1
	}
	return Decision{Limit: max(limit, 0), Reset: reset, RetryAfter: retry}
}
