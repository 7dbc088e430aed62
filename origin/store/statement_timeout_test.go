package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/listgate/listgate/origin/store"
	"github.com/listgate/listgate/pkg/devdb/devdbtest"
)

// migrateLock is store's advisory lock of migrations ("LGMIGR").
const migrateLock = 0x4c47_4d49_4752

// The pool's statement_timeout ends a statement that runs longer, and
// IsTimeout and IsUnavailable say so.
func TestStatementTimeoutEndsASlowStatement(t *testing.T) {
	ctx := context.Background()
	db, err := store.Open(ctx, devdbtest.NewDatabase(t, nil), store.Options{StatementTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	start := time.Now()
	_, err = db.Pool.Exec(ctx, "SELECT pg_sleep(5)")
	if err == nil {
		t.Fatal("pg_sleep(5) ran to its end under a 100 ms statement_timeout")
	}
	if !store.IsTimeout(err) || !store.IsUnavailable(err) {
		t.Errorf("IsTimeout = %v, IsUnavailable = %v for %v; want both", store.IsTimeout(err), store.IsUnavailable(err), err)
	}
	if d := time.Since(start); d > 4*time.Second {
		t.Errorf("ended after %v", d)
	}
}

// Migrate is not held to the pool's statement_timeout: it waits for
// another origin's migrations (the lock held here longer than the
// timeout), and its connection has the pool's timeout again after.
func TestMigrateLiftsTheStatementTimeout(t *testing.T) {
	ctx := context.Background()
	url := devdbtest.NewDatabase(t, nil)
	db, err := store.Open(ctx, url, store.Options{MaxConns: 1, StatementTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	other, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close(ctx)
	if _, err := other.Exec(ctx, "SELECT pg_advisory_lock($1)", int64(migrateLock)); err != nil {
		t.Fatal(err)
	}
	// Released once Migrate waits for it, for longer than the timeout.
	released := make(chan struct{})
	defer func() { <-released }()
	go func() {
		defer close(released)
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			var waiting bool
			if err := other.QueryRow(ctx, `SELECT count(*) > 0 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted`).Scan(&waiting); err != nil {
				break
			}
			if waiting {
				time.Sleep(300 * time.Millisecond)
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		other.Exec(ctx, "SELECT pg_advisory_unlock($1)", int64(migrateLock))
	}()
	if _, err := db.Migrate(ctx); err != nil {
		t.Fatalf("Migrate under a 100 ms statement_timeout: %v", err)
	}
	var st string
	if err := db.Pool.QueryRow(ctx, "SHOW statement_timeout").Scan(&st); err != nil {
		t.Fatal(err)
	}
	if st != "100ms" {
		t.Errorf("the pool's connection has statement_timeout %q after Migrate, want 100ms", st)
	}
}
