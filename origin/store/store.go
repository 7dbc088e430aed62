// Package store is the origin's Postgres adapter: the connection pool, the
// embedded schema migrations, the process's liveness lock, and the SQL of
// every table but those of origin/listings, origin/ingest and origin/events
// (docs/architecture.md, "Where SQL lives"), sorted by table. It
// returns *apierror.Error for conditions a client can cause (not found,
// invalid input) and wrapped errors for everything else.
package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/puddle/v2"
	"go.opentelemetry.io/otel/trace"

	"github.com/listgate/listgate/pkg/promtext"
)

// DB is the origin's connection pool. Safe for concurrent use.
type DB struct {
	Pool *pgxpool.Pool
	// live is the process's liveness lock, nil unless Options.Liveness.
	live *liveness
	// leadGroups gathers concurrent lead submissions into one transaction
	// (leads_batch.go).
	leadGroups leadGroups
}

// Options tune Open. The zero value uses the defaults.
type Options struct {
	// MaxConns caps the pool. Zero: 20.
	MaxConns int32
	// ConnectTimeout bounds each new connection. Zero: 5 s.
	ConnectTimeout time.Duration
	// Liveness makes the DB hold a liveness lock for its life, on one more
	// connection outside the pool, so that the Idempotency-Key claims it
	// makes name it as their owner and can be taken over at once when the
	// process is gone (see ClaimIdempotencyKey). Processes that serve
	// POST /v1/leads set it. Default false: claims have no owner and are
	// taken over only after their lease.
	Liveness bool
	// Log receives the liveness lock's losses and reacquisitions. Nil:
	// discarded.
	Log *slog.Logger
	// LeadBatch is the most lead submissions that SubmitLead stores in one
	// transaction when they arrive together (group commit). Zero:
	// DefaultLeadBatch; 1: each alone.
	LeadBatch int
	// StatementTimeout, when positive, is the statement_timeout of every
	// connection of the pool: Postgres ends a statement that runs longer
	// (SQLSTATE 57014, which IsUnavailable and IsTimeout report). Work that
	// runs longer by design raises it for its transaction with SET LOCAL;
	// Migrate lifts it for its connection. Zero: none (the server's
	// setting).
	StatementTimeout time.Duration
	// Tracer, when set, traces the queries made within a traced request
	// and tags their connections' application_name with its trace id
	// (trace.go). Nil: no tracing.
	Tracer trace.Tracer
}

// Open connects to the database at url and checks that it answers. The
// returned error never contains the password of url.
func Open(ctx context.Context, url string, opts Options) (*DB, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		// pgx redacts the password in its parse errors.
		return nil, fmt.Errorf("store: database url: %w", err)
	}
	cfg.MaxConns = 20
	if opts.MaxConns > 0 {
		cfg.MaxConns = opts.MaxConns
	}
	cfg.ConnConfig.ConnectTimeout = 5 * time.Second
	if opts.ConnectTimeout > 0 {
		cfg.ConnConfig.ConnectTimeout = opts.ConnectTimeout
	}
	cfg.HealthCheckPeriod = 10 * time.Second
	cfg.ConnConfig.RuntimeParams["application_name"] = AppName
	if opts.Tracer != nil {
		cfg.ConnConfig.Tracer = &queryTracer{tracer: opts.Tracer}
		cfg.PrepareConn = tagConn
	}
	// The liveness lock's connection (a copy made before) has no
	// statement_timeout: its statements are its own.
	liveCfg := cfg.ConnConfig.Copy()
	if opts.StatementTimeout > 0 {
		cfg.ConnConfig.RuntimeParams["statement_timeout"] = strconv.FormatInt(max(1, opts.StatementTimeout.Milliseconds()), 10)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("store: connect: %w", err)
	}
	db := &DB{Pool: pool}
	db.leadGroups.max = DefaultLeadBatch
	if opts.LeadBatch > 0 {
		db.leadGroups.max = opts.LeadBatch
	}
	if err := db.Ping(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	if opts.Liveness {
		log := opts.Log
		if log == nil {
			log = slog.New(slog.DiscardHandler)
		}
		if db.live, err = startLiveness(ctx, liveCfg, log); err != nil {
			pool.Close()
			return nil, err
		}
	}
	return db, nil
}

// Ping checks that the database answers a query.
func (db *DB) Ping(ctx context.Context) error {
	var one int
	if err := db.Pool.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil {
		return fmt.Errorf("store: ping: %w", err)
	}
	return nil
}

func init() {
	promtext.Describe("listgate_origin_db_pool_acquired_connections", "Connections of the origin's Postgres pool in use now.")
	promtext.Describe("listgate_origin_db_pool_idle_connections", "Connections of the origin's Postgres pool idle now.")
	promtext.Describe("listgate_origin_db_pool_max_connections", "Size of the origin's Postgres pool (LISTGATE_DATABASE_MAX_CONNS).")
}

// WritePoolMetrics writes the pool's gauges in the Prometheus text format,
// each with its HELP and TYPE lines:
// listgate_origin_db_pool_acquired_connections,
// listgate_origin_db_pool_idle_connections and
// listgate_origin_db_pool_max_connections (api.Config.Metrics).
func (db *DB) WritePoolMetrics(w io.Writer) {
	st := db.Pool.Stat()
	promtext.WriteFamily(w, "listgate_origin_db_pool_acquired_connections", "gauge", promtext.Sample{Value: float64(st.AcquiredConns())})
	promtext.WriteFamily(w, "listgate_origin_db_pool_idle_connections", "gauge", promtext.Sample{Value: float64(st.IdleConns())})
	promtext.WriteFamily(w, "listgate_origin_db_pool_max_connections", "gauge", promtext.Sample{Value: float64(st.MaxConns())})
}

// Close closes every connection of the pool, waiting for connections in
// use to be released, and then gives up the liveness lock, if any.
func (db *DB) Close() {
	db.Pool.Close()
	db.live.close()
}

// InTx runs fn in a transaction, committing when fn returns nil and rolling
// back otherwise.
func (db *DB) InTx(ctx context.Context, fn func(pgx.Tx) error) error {
	return pgx.BeginFunc(ctx, db.Pool, fn)
}

// isUniqueViolation reports whether err is a unique constraint violation,
// optionally of the named constraint.
func isUniqueViolation(err error, constraint string) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "23505" &&
		(constraint == "" || pgErr.ConstraintName == constraint)
}

// isInvalidText reports whether err is Postgres rejecting a malformed value:
// a string that is not a UUID (22P02, invalid_text_representation), or one
// no text can hold, with a NUL or bytes that are not UTF-8 (22021,
// character_not_in_repertoire). Either way no row has it.
func isInvalidText(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "22P02" || pgErr.Code == "22021")
}

// isForeignKeyViolation reports whether err is a foreign key violation.
func isForeignKeyViolation(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "23503"
}

// IsTimeout reports whether err is a statement that ran out of time: one
// Postgres cancelled (SQLSTATE 57014, query_canceled: statement_timeout,
// or the cancel request pgx sends when a query's context ends), or a
// context deadline reached while waiting for the database.
func IsTimeout(err error) bool {
	if pgErr, ok := errors.AsType[*pgconn.PgError](err); ok {
		return pgErr.Code == "57014"
	}
	return errors.Is(err, context.DeadlineExceeded)
}

// IsUnavailable reports whether err means the database could not be
// reached or gave up on the work — connection refused, reset or closed, the
// pool closed, a timeout, the server shutting down or out of resources, a
// serialization failure or deadlock — rather than a bug: the answer is a
// 503 and the same request may succeed when retried.
func IsUnavailable(err error) bool {
	if err == nil {
		return false
	}
	if pgErr, ok := errors.AsType[*pgconn.PgError](err); ok {
		switch pgErr.Code[:min(2, len(pgErr.Code))] {
		case "08", // connection exception
			"40", // transaction rollback: serialization failure, deadlock
			"53", // insufficient resources: too many connections, disk full
			"57", // operator intervention: admin/crash shutdown, cannot connect now, query canceled
			"58": // system error: I/O
			return true
		}
		return false
	}
	if _, ok := errors.AsType[*pgconn.ConnectError](err); ok {
		return true
	}
	if _, ok := errors.AsType[net.Error](err); ok {
		return true
	}
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, context.DeadlineExceeded) || errors.Is(err, puddle.ErrClosedPool) ||
		pgconn.Timeout(err) || pgconn.SafeToRetry(err)
}
