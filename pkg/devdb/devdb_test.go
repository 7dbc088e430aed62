package devdb

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

func TestMain(m *testing.M) { os.Exit(RunTests(m)) }

func TestPostgresDatabasesAreSeparate(t *testing.T) {
	tmpl := &Template{Name: "tmpl_devdb", Prepare: func(ctx context.Context, url string) error {
		return execSQL(ctx, url, "CREATE TABLE marker (v int); INSERT INTO marker VALUES (42)")
	}}
	a := NewTestDatabase(t, tmpl)
	b := NewTestDatabase(t, tmpl)
	if a == b {
		t.Fatalf("two tests got the same database %s", a)
	}
	ctx := context.Background()
	if err := execSQL(ctx, a, "INSERT INTO marker VALUES (7)"); err != nil {
		t.Fatal(err)
	}
	for url, want := range map[string]int{a: 2, b: 1} {
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		var n int
		if err := conn.QueryRow(ctx, "SELECT count(*) FROM marker").Scan(&n); err != nil {
			t.Fatal(err)
		}
		conn.Close(ctx)
		if n != want {
			t.Errorf("%s: %d rows, want %d", url, n, want)
		}
	}
	empty := NewTestDatabase(t, nil)
	if err := execSQL(ctx, empty, "SELECT 1 FROM marker"); err == nil {
		t.Error("an empty database has the template's table")
	}
}

func TestClusterCloseRemovesDirectory(t *testing.T) {
	pg := NewTestCluster(t)
	if _, err := os.Stat(pg.dir); err != nil {
		t.Fatal(err)
	}
	if err := pg.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(pg.dir); !os.IsNotExist(err) {
		t.Errorf("data directory still there after Close: %v", err)
	}
	if err := execSQL(context.Background(), pg.URL, "SELECT 1"); err == nil {
		t.Error("server still answers after Close")
	}
}

func TestMissingBinaryNamesPackage(t *testing.T) {
	_, err := StartPostgres(context.Background(), PostgresOptions{BinDir: t.TempDir()})
	if err == nil || !errors.Is(err, ErrMissingBinary) {
		t.Fatalf("err = %v, want ErrMissingBinary", err)
	}
	t.Setenv("PATH", t.TempDir())
	_, err = StartRedis(context.Background())
	if err == nil || !errors.Is(err, ErrMissingBinary) || !strings.Contains(err.Error(), "apt-get install redis-server") {
		t.Fatalf("err = %v, want a missing redis-server error naming the package", err)
	}
}

func TestRedisAnswersKillAndRestart(t *testing.T) {
	r := NewTestRedis(t)
	ctx := context.Background()
	if err := r.ping(ctx); err != nil {
		t.Fatal(err)
	}
	r.Kill()
	if err := r.ping(ctx); err == nil {
		t.Fatal("redis still answers after Kill")
	}
	if err := r.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if err := r.ping(ctx); err != nil {
		t.Fatalf("no answer after Restart on %s: %v", r.Addr, err)
	}
	if err := r.Restart(ctx); err == nil {
		t.Fatal("Restart of a running server succeeded")
	}
}

func TestPostgresStopAndRestartKeepData(t *testing.T) {
	pg := NewTestCluster(t)
	ctx := context.Background()
	if err := execSQL(ctx, pg.URL, "CREATE TABLE kept (v int); INSERT INTO kept VALUES (42)"); err != nil {
		t.Fatal(err)
	}
	pg.Stop()
	pg.Stop() // stopping a stopped server does nothing
	if err := execSQL(ctx, pg.URL, "SELECT 1"); err == nil {
		t.Fatal("server still answers after Stop")
	}
	port := pg.Port
	if err := pg.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if pg.Port != port {
		t.Fatalf("port changed from %d to %d", port, pg.Port)
	}
	conn, err := pgx.Connect(ctx, pg.URL)
	if err != nil {
		t.Fatal(err)
	}
	var v int
	err = conn.QueryRow(ctx, "SELECT v FROM kept").Scan(&v)
	conn.Close(ctx)
	if err != nil || v != 42 {
		t.Fatalf("after restart: %d, %v; want the row written before the stop", v, err)
	}
	// Restart of a running server stops it first.
	if err := pg.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if err := pg.Close(); err != nil {
		t.Fatal(err)
	}
	if err := pg.Restart(ctx); err == nil {
		t.Error("Restart after Close succeeded")
	}
}
