// Package devdbtest gives tests throwaway databases and Redis servers from
// [devdb]: one PostgreSQL cluster per test binary, shared by its tests, with a
// database of each test's own ([NewDatabase], optionally copied from a
// prepared [Template]); a cluster of the test's own for tests that stop it
// ([NewCluster]); and a Redis server per test ([NewRedis]). Everything is
// removed when the test (or, for the shared cluster, [RunTests]) ends.
//
// When the server binaries are missing, a test is skipped, except when the
// CI environment variable is set: there it fails, so that CI cannot pass by
// skipping.
//
// It imports testing, so only tests and test helpers may import it; the
// programs use [devdb] directly.
package devdbtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/listgate/listgate/pkg/devdb"
)

// Template is a database prepared once per test binary (for example,
// migrated) and copied for each test with CREATE DATABASE … TEMPLATE, which
// is much faster than preparing every test's database from scratch.
type Template struct {
	// Name is the template database's name; it must be a plain identifier.
	Name string
	// Prepare fills the template database at url.
	Prepare func(ctx context.Context, url string) error
}

var shared struct {
	running  atomic.Bool
	mu       sync.Mutex
	pg       *devdb.Postgres
	pgErr    error
	prepared map[string]error
	seq      int
}

// RunTests runs m and then stops the cluster the tests shared. Call it from
// TestMain in every package that uses NewDatabase, directly or through a
// helper such as storetest:
//
//	func TestMain(m *testing.M) { os.Exit(devdbtest.RunTests(m)) }
func RunTests(m *testing.M) int {
	shared.running.Store(true)
	code := m.Run()
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.pg != nil {
		shared.pg.Close()
	}
	return code
}

// unavailable skips the test when a server binary is missing, except when
// the CI environment variable is set: there a missing server fails.
func unavailable(tb testing.TB, err error) {
	tb.Helper()
	if errors.Is(err, devdb.ErrMissingBinary) && os.Getenv("CI") == "" {
		tb.Skip(err)
	}
	tb.Fatal(err)
}

// sharedPostgres starts the test binary's one cluster on first use.
func sharedPostgres(tb testing.TB) *devdb.Postgres {
	tb.Helper()
	if !shared.running.Load() {
		tb.Fatal("devdbtest: call devdbtest.RunTests from TestMain so the shared cluster is stopped")
	}
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.pg == nil && shared.pgErr == nil {
		shared.pg, shared.pgErr = devdb.StartPostgres(context.Background(), devdb.PostgresOptions{})
	}
	if shared.pgErr != nil {
		unavailable(tb, shared.pgErr)
	}
	return shared.pg
}

// NewDatabase creates an empty database (or a copy of tmpl, when not nil) on
// the cluster shared by the test binary, started on first use, and returns
// its URL. The database is dropped when the test ends. It fails tb when
// TestMain does not call RunTests. Safe for parallel tests.
func NewDatabase(tb testing.TB, tmpl *Template) string {
	tb.Helper()
	pg := sharedPostgres(tb)
	ctx := context.Background()

	shared.mu.Lock()
	shared.seq++
	name := fmt.Sprintf("test_%d", shared.seq)
	from := "template0"
	if tmpl != nil {
		if shared.prepared == nil {
			shared.prepared = map[string]error{}
		}
		err, done := shared.prepared[tmpl.Name]
		if !done {
			err = prepareTemplate(ctx, pg, tmpl)
			shared.prepared[tmpl.Name] = err
		}
		if err != nil {
			shared.mu.Unlock()
			tb.Fatalf("devdbtest: template %s: %v", tmpl.Name, err)
		}
		from = tmpl.Name
	}
	// CREATE DATABASE … TEMPLATE needs the template unused: serialise.
	err := execSQL(ctx, pg.URL, fmt.Sprintf("CREATE DATABASE %s TEMPLATE %s", name, from))
	shared.mu.Unlock()
	if err != nil {
		tb.Fatalf("devdbtest: create database: %v", err)
	}
	tb.Cleanup(func() {
		if err := execSQL(ctx, pg.URL, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			tb.Errorf("devdbtest: drop database %s: %v", name, err)
		}
	})
	return pg.DatabaseURL(name)
}

// NewCluster starts a cluster of the test's own, for tests that stop or
// restart the server, with settings over the defaults (name=value); it is
// closed when the test ends. It needs no RunTests.
func NewCluster(tb testing.TB, settings ...string) *devdb.Postgres {
	tb.Helper()
	pg, err := devdb.StartPostgres(context.Background(), devdb.PostgresOptions{Settings: settings})
	if err != nil {
		unavailable(tb, err)
	}
	tb.Cleanup(func() { pg.Close() })
	return pg
}

func prepareTemplate(ctx context.Context, pg *devdb.Postgres, tmpl *Template) error {
	if err := execSQL(ctx, pg.URL, "CREATE DATABASE "+tmpl.Name); err != nil {
		return err
	}
	return tmpl.Prepare(ctx, pg.DatabaseURL(tmpl.Name))
}

// NewRedis starts a Redis server for this test; it is stopped when the test
// ends. It needs no RunTests.
func NewRedis(tb testing.TB) *devdb.Redis {
	tb.Helper()
	r, err := devdb.StartRedis(context.Background())
	if err != nil {
		unavailable(tb, err)
	}
	tb.Cleanup(func() { r.Close() })
	return r
}

func execSQL(ctx context.Context, url, sql string) error {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, sql)
	return err
}
