package webhook

import (
	"math/rand/v2"
	"net/http"
	"strings"
	"time"
)

// The retry schedule. After failed attempt n (n ≥ 1) the next one waits
// Backoff(n): a delay d = min(BaseDelay·2^(n-1), MaxDelay), jittered into
// [d/2, d]. A Retry-After from the receiver (on 429 or 503) lengthens the
// wait, up to MaxRetryAfter. No attempt starts later than RetryFor after
// the event was created.
const (
	// BaseDelay is the delay after the first failed attempt, before jitter.
	BaseDelay = time.Second
	// MaxDelay bounds the delay between attempts, before jitter and apart
	// from Retry-After: reached after the 13th failed attempt.
	MaxDelay = time.Hour
	// RetryFor is how long after an event's creation its delivery is tried.
	RetryFor = 72 * time.Hour
	// MaxRetryAfter caps the delay a Retry-After header can ask for, so a
	// receiver cannot hold a delivery for longer than a day with one answer.
	MaxRetryAfter = 24 * time.Hour
)

// Backoff returns how long to wait after failed attempt attempt (1 for the
// first attempt) before the next: d/2 plus a uniformly random duration in
// [0, d/2], where d = min(BaseDelay·2^(attempt-1), MaxDelay). An attempt
// below 1 counts as 1. The jitter spreads the retries of many deliveries
// that failed together (a receiver that was down). It is safe for
// concurrent use.
func Backoff(attempt int) time.Duration {
	return backoff(attempt, rand.Int64N)
}

// backoff is Backoff with the random source randN(n), which returns a
// number in [0, n).
func backoff(attempt int, randN func(n int64) int64) time.Duration {
	d := BaseDelay
	for i := 1; i < attempt && d < MaxDelay; i++ {
		d *= 2
	}
	d = min(d, MaxDelay)
	return d/2 + time.Duration(randN(int64(d/2)+1))
}

// NextAttempt returns when to try a delivery again after failed attempt
// attempt, made at now, of an event created at created: now plus
// Backoff(attempt), or plus retryAfter (from ParseRetryAfter; zero when
// there was none) when that is longer. ok is false when that time is more
// than RetryFor after created: the delivery has failed for good.
func NextAttempt(created, now time.Time, attempt int, retryAfter time.Duration) (next time.Time, ok bool) {
	wait := max(Backoff(attempt), min(retryAfter, MaxRetryAfter))
	next = now.Add(wait)
	return next, !next.After(created.Add(RetryFor))
}

// ParseRetryAfter reads a Retry-After header value (RFC 9110 §10.2.3):
// delay-seconds (digits only) or an HTTP-date (IMF-fixdate, or the obsolete
// RFC 850 and asctime forms), surrounding white space ignored. It returns
// the delay from now, capped at MaxRetryAfter (a larger delay-seconds,
// however many digits, gives MaxRetryAfter), and true; a date in the past
// gives 0 and true. A value that is empty, negative, fractional, signed or
// anything else gives 0 and false.
func ParseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.Trim(v, " \t")
	if v == "" {
		return 0, false
	}
	if isDigits(v) {
		const maxSeconds = int64(MaxRetryAfter / time.Second)
		var n int64
		for i := 0; i < len(v); i++ {
			n = n*10 + int64(v[i]-'0')
			if n > maxSeconds {
				return MaxRetryAfter, true
			}
		}
		return time.Duration(n) * time.Second, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	return min(max(t.Sub(now), 0), MaxRetryAfter), true
}

// isDigits reports whether s is one or more ASCII digits.
func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}
