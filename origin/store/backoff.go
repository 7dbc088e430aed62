package store

import (
	"context"
	"crypto/sha256"
	"errors"
	"math"
	"time"

	"github.com/jackc/pgx/v5"
)

// Backoff is the policy of a BackoffLimiter. The zero value of a field
// takes the default named.
type Backoff struct {
	// Free is how many attempts a key makes before it must wait. Default 5.
	Free int
	// First is the wait after the Free-th attempt; each further attempt
	// doubles it. Default 1 s.
	First time.Duration
	// Max caps the wait. Default 15 minutes.
	Max time.Duration
	// Forget is how long after its last attempt a key's count is
	// forgotten. Default 1 hour; never below Max.
	Forget time.Duration
}

// maxDoublings bounds the exponent of Backoff.Delay (2^30 × First is far
// past any Max).
const maxDoublings = 30

func (b Backoff) withDefaults() Backoff {
	if b.Free <= 0 {
		b.Free = 5
	}
	if b.First <= 0 {
		b.First = time.Second
	}
	if b.Max <= 0 {
		b.Max = 15 * time.Minute
	}
	b.Max = max(b.Max, b.First)
	if b.Forget <= 0 {
		b.Forget = time.Hour
	}
	b.Forget = max(b.Forget, b.Max)
	return b
}

// Delay is how long after its last attempt a key that has made n attempts
// must wait: nothing below Free, then First, 2×First, 4×First … up to Max.
// Defaults apply to zero fields.
func (b Backoff) Delay(n int) time.Duration {
	b = b.withDefaults()
	if n < b.Free {
		return 0
	}
	d := float64(b.First) * math.Pow(2, float64(min(n-b.Free, maxDoublings)))
	return time.Duration(min(d, float64(b.Max)))
}

// BackoffLimiter makes a key wait longer and longer between attempts: after
// Backoff.Free attempts, each further one waits Backoff.Delay(n) from the
// key's last attempt. Attempt counts an attempt and checks its wait in one
// statement, so concurrent attempts cannot slip past the count; Reset
// forgets a key (after a success). A key's count is forgotten Forget after
// its last attempt. Kept in Postgres (limit_windows, keys as SHA-256) so
// that every origin counts the same attempts; when Postgres cannot answer
// within 2 s the limiter admits (the action it guards needs Postgres too).
// Safe for concurrent use.
type BackoffLimiter struct {
	db     *DB
	scope  string
	policy Backoff
}

// NewBackoffLimiter returns a limiter whose counts are kept under scope
// (one scope per kind of attempt), with policy's zero fields defaulted.
func (db *DB) NewBackoffLimiter(scope string, policy Backoff) *BackoffLimiter {
	return &BackoffLimiter{db: db, scope: scope, policy: policy.withDefaults()}
}

// Policy returns the limiter's policy, defaults applied.
func (l *BackoffLimiter) Policy() Backoff { return l.policy }

// Attempt counts one attempt of key at now and reports true when the key
// may make it; otherwise it counts nothing and reports how long until it
// may (whole seconds, at least one).
func (l *BackoffLimiter) Attempt(key string, now time.Time) (bool, time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), limiterTimeout)
	defer cancel()
	h := sha256.Sum256([]byte(key))
	p := l.policy
	// The update happens only when the key's count has run out, is below
	// Free, or its wait from the last attempt is over; otherwise no row
	// comes back and the attempt is refused.
	var n int
	err := l.db.Pool.QueryRow(ctx, `INSERT INTO limit_windows AS w (scope, key_hash, started_at, last_at, expires_at, n)
		VALUES ($1, $2, $3, $3, $4, 1)
		ON CONFLICT (scope, key_hash) DO UPDATE SET
			n          = CASE WHEN w.expires_at <= $3 THEN 1 ELSE w.n + 1 END,
			started_at = CASE WHEN w.expires_at <= $3 THEN $3 ELSE w.started_at END,
			last_at    = $3,
			expires_at = $4
		WHERE w.expires_at <= $3 OR w.n < $5 OR w.last_at IS NULL
			OR w.last_at + make_interval(secs => least($6 * power(2::float8, least(w.n - $5, $8)), $7)) <= $3
		RETURNING n`,
		l.scope, h[:], now, now.Add(p.Forget), p.Free, p.First.Seconds(), p.Max.Seconds(), maxDoublings).Scan(&n)
	if err == nil {
		return true, 0
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return true, 0 // Postgres did not answer: admit.
	}
	var last time.Time
	err = l.db.Pool.QueryRow(ctx, `SELECT n, last_at FROM limit_windows WHERE scope = $1 AND key_hash = $2`,
		l.scope, h[:]).Scan(&n, &last)
	if err != nil {
		return true, 0
	}
	return false, wholeSeconds(last.Add(p.Delay(n)).Sub(now))
}

// Reset forgets key's attempts.
func (l *BackoffLimiter) Reset(key string) {
	ctx, cancel := context.WithTimeout(context.Background(), limiterTimeout)
	defer cancel()
	h := sha256.Sum256([]byte(key))
	// A failure keeps the count, which only ever makes the key wait.
	l.db.Pool.Exec(ctx, `DELETE FROM limit_windows WHERE scope = $1 AND key_hash = $2`, l.scope, h[:])
}

// wholeSeconds rounds d up to whole seconds, at least one.
func wholeSeconds(d time.Duration) time.Duration {
	return max(((d+time.Second-1)/time.Second)*time.Second, time.Second)
}

// RecentKeys remembers keys for a time after they were last marked (the
// addresses a user signed in from). Kept in Postgres (limit_windows, keys
// as SHA-256), shared by every origin. When Postgres cannot answer within
// 2 s, a key is not recent. Safe for concurrent use.
type RecentKeys struct {
	db    *DB
	scope string
	ttl   time.Duration
}

// NewRecentKeys returns a set that remembers a key for ttl after it was
// last marked, under scope.
func (db *DB) NewRecentKeys(scope string, ttl time.Duration) *RecentKeys {
	return &RecentKeys{db: db, scope: scope, ttl: ttl}
}

// Mark remembers key from now for the set's ttl.
func (k *RecentKeys) Mark(key string, now time.Time) {
	ctx, cancel := context.WithTimeout(context.Background(), limiterTimeout)
	defer cancel()
	h := sha256.Sum256([]byte(key))
	// A failure forgets the key, which only ever admits less.
	k.db.Pool.Exec(ctx, `INSERT INTO limit_windows AS w (scope, key_hash, started_at, last_at, expires_at, n)
		VALUES ($1, $2, $3, $3, $4, 1)
		ON CONFLICT (scope, key_hash) DO UPDATE SET last_at = $3, expires_at = greatest(w.expires_at, $4)`,
		k.scope, h[:], now, now.Add(k.ttl))
}

// Recent reports whether key was marked within the ttl before now.
func (k *RecentKeys) Recent(key string, now time.Time) bool {
	ctx, cancel := context.WithTimeout(context.Background(), limiterTimeout)
	defer cancel()
	h := sha256.Sum256([]byte(key))
	var ok bool
	err := k.db.Pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM limit_windows
		WHERE scope = $1 AND key_hash = $2 AND expires_at > $3)`, k.scope, h[:], now).Scan(&ok)
	return err == nil && ok
}
