package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
)

// livenessClass is the first key of the origins' liveness locks, in the
// two-int4 advisory-lock key space (the other advisory locks of the schema
// are single bigints, a separate space). The second key is an origin
// process's instance id.
const livenessClass int32 = 0x4c47_4c56 // "LGLV"

// livenessPing is how often the liveness connection is checked, and how
// long a failed acquisition waits before the next try.
const livenessPing = time.Second

// livenessTries is how many random instance ids one acquisition tries.
const livenessTries = 8

// liveness holds a session-level advisory lock (livenessClass, id) on a
// connection of its own, outside the pool, for the life of the DB: while
// it is held the process is alive, and Postgres releases it the moment the
// connection ends (the process exited or was killed). Claims of an
// Idempotency-Key record the id as their owner, so that a retry can take
// over the claim of a process that is gone (see ClaimIdempotencyKey).
//
// When the connection is lost, the id is dropped at once and the lock taken
// again under a new id; the claims made under the old id may then be taken
// over, and their requests can no longer store their response
// (ErrClaimLost), so nothing is stored twice.
type liveness struct {
	cfg *pgx.ConnConfig
	log *slog.Logger
	// id is the instance id whose lock is held, 0 while none is (ids are
	// never 0).
	id   atomic.Int32
	stop context.CancelFunc
	done chan struct{}
}

// startLiveness takes the liveness lock and keeps it until close. It fails
// when the first acquisition does.
func startLiveness(ctx context.Context, cfg *pgx.ConnConfig, log *slog.Logger) (*liveness, error) {
	cfg = cfg.Copy()
	cfg.RuntimeParams["application_name"] = "listgate-origin-liveness"
	l := &liveness{cfg: cfg, log: log, done: make(chan struct{})}
	conn, err := l.acquire(ctx)
	if err != nil {
		return nil, err
	}
	lctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	l.stop = stop
	go l.run(lctx, conn)
	return l, nil
}

// owner is the instance id to record as a claim's owner: 0 (no owner) while
// the lock is not held.
func (l *liveness) owner() int32 {
	if l == nil {
		return 0
	}
	return l.id.Load()
}

// acquire connects and takes the lock under a random id, trying another id
// while one is taken.
func (l *liveness) acquire(ctx context.Context) (*pgx.Conn, error) {
	conn, err := pgx.ConnectConfig(ctx, l.cfg)
	if err != nil {
		return nil, fmt.Errorf("store: liveness connection: %w", err)
	}
	for range livenessTries {
		id := rand.Int32()
		if id == 0 {
			continue
		}
		var ok bool
		if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1, $2)`, livenessClass, id).Scan(&ok); err != nil {
			closeConn(conn)
			return nil, fmt.Errorf("store: liveness lock: %w", err)
		}
		if ok {
			l.id.Store(id)
			return conn, nil
		}
	}
	closeConn(conn)
	return nil, errors.New("store: liveness lock: every id tried was taken")
}

// run checks the connection every livenessPing and, when it is lost, takes
// the lock again on a new one, until ctx ends; then it releases the lock
// and closes the connection.
func (l *liveness) run(ctx context.Context, conn *pgx.Conn) {
	defer close(l.done)
	t := time.NewTicker(livenessPing)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			if conn != nil {
				l.release(conn)
			}
			return
		case <-t.C:
		}
		if conn != nil {
			pctx, cancel := context.WithTimeout(ctx, l.cfg.ConnectTimeout+livenessPing)
			err := conn.Ping(pctx)
			cancel()
			if err == nil || ctx.Err() != nil {
				continue
			}
			// From here claims record no owner, and fall back on the lease.
			old := l.id.Swap(0)
			closeConn(conn)
			conn = nil
			l.log.Warn("liveness lock lost; taking it again under a new id", "instance", old, "err", err)
		}
		var err error
		if conn, err = l.acquire(ctx); err != nil {
			if ctx.Err() == nil {
				l.log.Warn("liveness lock not taken; trying again", "err", err)
			}
			continue
		}
		l.log.Info("liveness lock taken again", "instance", l.id.Load())
	}
}

// release gives the lock up explicitly, so that it is free once close
// returns (a closed connection's backend ends a moment later), and closes
// the connection.
func (l *liveness) release(conn *pgx.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), livenessPing)
	defer cancel()
	id := l.id.Swap(0)
	if id != 0 {
		conn.Exec(ctx, `SELECT pg_advisory_unlock($1, $2)`, livenessClass, id)
	}
	conn.Close(ctx)
}

// closeConn closes a connection that may be dead without waiting on it for
// more than livenessPing.
func closeConn(conn *pgx.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), livenessPing)
	defer cancel()
	conn.Close(ctx)
}

// close releases the lock and waits for the connection to close.
func (l *liveness) close() {
	if l == nil {
		return
	}
	l.stop()
	<-l.done
}
