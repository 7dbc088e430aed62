package store

import (
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Migration is one versioned schema change, embedded in the binary.
type Migration struct {
	Version int
	Name    string
	SQL     string
	Sum     string // hex SHA-256 of SQL
}

// Migrations returns the embedded migrations in version order. File names
// are NNNN_name.sql.
func Migrations() ([]Migration, error) {
	entries, err := fs.ReadDir(migrationFiles, "migrations")
	if err != nil {
		return nil, err
	}
	var ms []Migration
	for _, e := range entries {
		num, name, ok := strings.Cut(strings.TrimSuffix(e.Name(), ".sql"), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("store: migration file %q is not NNNN_name.sql", e.Name())
		}
		b, err := migrationFiles.ReadFile(path.Join("migrations", e.Name()))
		if err != nil {
			return nil, err
		}
		sum := sha256.Sum256(b)
		ms = append(ms, Migration{Version: v, Name: name, SQL: string(b), Sum: hex.EncodeToString(sum[:])})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].Version < ms[j].Version })
	for i, m := range ms {
		if m.Version != i+1 {
			return nil, fmt.Errorf("store: migrations are not numbered 1..n: %d is at place %d", m.Version, i+1)
		}
	}
	return ms, nil
}

// migrateLock is the advisory lock key that serialises concurrent migrations
// (several origins starting with --migrate at once).
const migrateLock = 0x4c47_4d49_4752 // "LGMIGR"

// Migrate applies the embedded migrations the database lacks, each in its own
// transaction, and returns the ones it applied. It refuses to run when an
// applied migration's text differs from the embedded one, or when the
// database is newer than this binary.
func (db *DB) Migrate(ctx context.Context) ([]Migration, error) {
	return db.migrate(ctx, 0)
}

// migrate applies the migrations up to version upTo (0: all of them).
func (db *DB) migrate(ctx context.Context, upTo int) ([]Migration, error) {
	ms, err := Migrations()
	if err != nil {
		return nil, err
	}
	if upTo > 0 && upTo < len(ms) {
		ms = ms[:upTo]
	}
	conn, err := db.Pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("store: migrate: %w", err)
	}
	defer conn.Release()
	// Neither the wait for another origin's migrations nor a migration
	// (an index built on a large table) is held to the pool's
	// statement_timeout, a request's; the connection gets it back after.
	if _, err := conn.Exec(ctx, "SET statement_timeout = 0"); err != nil {
		return nil, fmt.Errorf("store: migrate: %w", err)
	}
	defer conn.Exec(context.WithoutCancel(ctx), "RESET statement_timeout")
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", migrateLock); err != nil {
		return nil, fmt.Errorf("store: migrate lock: %w", err)
	}
	defer conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", migrateLock)

	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version integer PRIMARY KEY, name text NOT NULL, sum text NOT NULL,
		applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		return nil, fmt.Errorf("store: migrate: %w", err)
	}
	applied := map[int]string{}
	rows, _ := conn.Query(ctx, "SELECT version, sum FROM schema_migrations")
	var v int
	var sum string
	if _, err := pgx.ForEachRow(rows, []any{&v, &sum}, func() error { applied[v] = sum; return nil }); err != nil {
		return nil, fmt.Errorf("store: migrate: %w", err)
	}
	for v := range applied {
		if v > len(ms) {
			return nil, fmt.Errorf("store: database schema version %d is newer than this binary (%d)", v, len(ms))
		}
	}
	var done []Migration
	for _, m := range ms {
		if s, ok := applied[m.Version]; ok {
			if s != m.Sum {
				return done, fmt.Errorf("store: migration %04d_%s was changed after it was applied", m.Version, m.Name)
			}
			continue
		}
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, m.SQL); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, "INSERT INTO schema_migrations (version, name, sum) VALUES ($1, $2, $3)",
				m.Version, m.Name, m.Sum)
			return err
		})
		if err != nil {
			return done, fmt.Errorf("store: migration %04d_%s: %w", m.Version, m.Name, err)
		}
		done = append(done, m)
	}
	return done, nil
}

// SchemaVersion returns the highest applied migration, 0 for none.
func (db *DB) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	err := db.Pool.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&v)
	if err != nil {
		return 0, fmt.Errorf("store: schema version: %w", err)
	}
	return v, nil
}
