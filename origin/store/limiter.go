package store

import (
	"context"
	"crypto/sha256"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/listgate/listgate/pairing"
)

// limiterTimeout bounds one call of a WindowLimiter to Postgres.
const limiterTimeout = 2 * time.Second

// WindowLimiter is pairing.Limiter in Postgres, so that every origin of a
// deployment counts the same events: at most Limit events per key in fixed
// windows of Window, starting at a key's first event (the semantics of
// ratelimit.WindowLimiter, which is per process). Keys are stored as SHA-256.
// When Postgres cannot answer within 2 s the limiter admits (the action it
// guards needs Postgres too, and fails on its own). Safe for concurrent use.
type WindowLimiter struct {
	db     *DB
	scope  string
	limit  int
	window time.Duration
}

var _ pairing.Limiter = (*WindowLimiter)(nil)

// NewWindowLimiter returns a limiter of limit events per window per key,
// its counts kept under scope (one scope per kind of event). limit below 1
// is treated as 1.
func (db *DB) NewWindowLimiter(scope string, limit int, window time.Duration) *WindowLimiter {
	return &WindowLimiter{db: db, scope: scope, limit: max(limit, 1), window: window}
}

// Allow implements pairing.Limiter.
func (l *WindowLimiter) Allow(key string, now time.Time) (bool, time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), limiterTimeout)
	defer cancel()
	h := sha256.Sum256([]byte(key))
	var started time.Time
	var n int
	err := l.db.Pool.QueryRow(ctx, `SELECT started_at, n FROM limit_windows WHERE scope = $1 AND key_hash = $2`,
		l.scope, h[:]).Scan(&started, &n)
	if errors.Is(err, pgx.ErrNoRows) || err != nil || now.Sub(started) >= l.window || n < l.limit {
		return true, 0
	}
	return false, max(started.Add(l.window).Sub(now), time.Second)
}

// Add implements pairing.Limiter: it counts one event of key at now, in
// the key's window, or in a new one from now when that has run out.
func (l *WindowLimiter) Add(key string, now time.Time) {
	ctx, cancel := context.WithTimeout(context.Background(), limiterTimeout)
	defer cancel()
	h := sha256.Sum256([]byte(key))
	// A failure loses one count, which only ever admits more.
	l.db.Pool.Exec(ctx, `INSERT INTO limit_windows AS w (scope, key_hash, started_at, expires_at, n)
		VALUES ($1, $2, $3, $4, 1)
		ON CONFLICT (scope, key_hash) DO UPDATE SET
			n          = CASE WHEN w.expires_at <= $3 THEN 1 ELSE w.n + 1 END,
			started_at = CASE WHEN w.expires_at <= $3 THEN $3 ELSE w.started_at END,
			expires_at = CASE WHEN w.expires_at <= $3 THEN $4 ELSE w.expires_at END`,
		l.scope, h[:], now, now.Add(l.window))
}
