package devdb

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
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
	pg       *Postgres
	pgErr    error
	prepared map[string]error
	seq      int
}

// RunTests runs m and then stops whatever the tests started through this
// package. Call it from TestMain in every package that uses
// NewTestDatabase or NewTestRedis:
//
//	func TestMain(m *testing.M) { os.Exit(devdb.RunTests(m)) }
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
	if errors.Is(err, ErrMissingBinary) && os.Getenv("CI") == "" {
		tb.Skip(err)
	}
	tb.Fatal(err)
}

// sharedPostgres starts the test binary's one cluster on first use.
func sharedPostgres(tb testing.TB) *Postgres {
	tb.Helper()
	if !shared.running.Load() {
		tb.Fatal("devdb: call devdb.RunTests from TestMain so the test servers are stopped")
	}
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.pg == nil && shared.pgErr == nil {
		shared.pg, shared.pgErr = StartPostgres(context.Background(), PostgresOptions{})
	}
	if shared.pgErr != nil {
		unavailable(tb, shared.pgErr)
	}
	return shared.pg
}

// NewTestDatabase creates an empty database (or a copy of tmpl, when not
// nil) on a cluster shared by the test binary, and returns its URL. The
// database is dropped when the test ends.
func NewTestDatabase(tb testing.TB, tmpl *Template) string {
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
			tb.Fatalf("devdb: template %s: %v", tmpl.Name, err)
		}
		from = tmpl.Name
	}
	// CREATE DATABASE … TEMPLATE needs the template unused: serialise.
	err := execSQL(ctx, pg.URL, fmt.Sprintf("CREATE DATABASE %s TEMPLATE %s", name, from))
	shared.mu.Unlock()
	if err != nil {
		tb.Fatalf("devdb: create database: %v", err)
	}
	tb.Cleanup(func() {
		if err := execSQL(ctx, pg.URL, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			tb.Errorf("devdb: drop database %s: %v", name, err)
		}
	})
	return pg.DatabaseURL(name)
}

// NewTestCluster starts a cluster of the test's own, for tests that stop or
// restart the server; it is closed when the test ends.
func NewTestCluster(tb testing.TB) *Postgres {
	tb.Helper()
	pg, err := StartPostgres(context.Background(), PostgresOptions{})
	if err != nil {
		unavailable(tb, err)
	}
	tb.Cleanup(func() { pg.Close() })
	return pg
}

func prepareTemplate(ctx context.Context, pg *Postgres, tmpl *Template) error {
	if err := execSQL(ctx, pg.URL, "CREATE DATABASE "+tmpl.Name); err != nil {
		return err
	}
	return tmpl.Prepare(ctx, pg.DatabaseURL(tmpl.Name))
}

// NewTestRedis starts a Redis server for this test; it is stopped when the
// test ends.
func NewTestRedis(tb testing.TB) *Redis {
	tb.Helper()
	r, err := StartRedis(context.Background())
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
