package devdb_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/listgate/listgate/pkg/devdb"
	"github.com/listgate/listgate/pkg/devdb/devdbtest"
)

// execSQL runs sql on a new connection to url.
func execSQL(ctx context.Context, url, sql string) error {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, sql)
	return err
}

func TestClusterCloseRemovesDirectory(t *testing.T) {
	pg := devdbtest.NewCluster(t)
	if _, err := os.Stat(devdb.PostgresDir(pg)); err != nil {
		t.Fatal(err)
	}
	if err := pg.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(devdb.PostgresDir(pg)); !os.IsNotExist(err) {
		t.Errorf("data directory still there after Close: %v", err)
	}
	if err := execSQL(context.Background(), pg.URL, "SELECT 1"); err == nil {
		t.Error("server still answers after Close")
	}
}

func TestMissingBinaryNamesPackage(t *testing.T) {
	_, err := devdb.StartPostgres(context.Background(), devdb.PostgresOptions{BinDir: t.TempDir()})
	if err == nil || !errors.Is(err, devdb.ErrMissingBinary) {
		t.Fatalf("err = %v, want devdb.ErrMissingBinary", err)
	}
	t.Setenv("PATH", t.TempDir())
	_, err = devdb.StartRedis(context.Background())
	if err == nil || !errors.Is(err, devdb.ErrMissingBinary) || !strings.Contains(err.Error(), "apt-get install redis-server") {
		t.Fatalf("err = %v, want a missing redis-server error naming the package", err)
	}
}

func TestRedisAnswersKillAndRestart(t *testing.T) {
	r := devdbtest.NewRedis(t)
	ctx := context.Background()
	if err := devdb.Ping(ctx, r); err != nil {
		t.Fatal(err)
	}
	r.Kill()
	if err := devdb.Ping(ctx, r); err == nil {
		t.Fatal("redis still answers after Kill")
	}
	if err := r.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	if err := devdb.Ping(ctx, r); err != nil {
		t.Fatalf("no answer after Restart on %s: %v", r.Addr, err)
	}
	if err := r.Restart(ctx); err == nil {
		t.Fatal("Restart of a running server succeeded")
	}
}

func TestPostgresStopAndRestartKeepData(t *testing.T) {
	pg := devdbtest.NewCluster(t)
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

// Settings override the defaults, and stay through a restart.
func TestPostgresSettings(t *testing.T) {
	pg := devdbtest.NewCluster(t, "shared_buffers=64MB", "work_mem=7MB")
	ctx := context.Background()
	check := func(when string) {
		conn, err := pgx.Connect(ctx, pg.URL)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		var buffers, workMem string
		if err := conn.QueryRow(ctx, "SELECT current_setting('shared_buffers'), current_setting('work_mem')").Scan(&buffers, &workMem); err != nil {
			t.Fatal(err)
		}
		if buffers != "64MB" || workMem != "7MB" {
			t.Errorf("%s: shared_buffers %s, work_mem %s; want 64MB and 7MB", when, buffers, workMem)
		}
	}
	check("started")
	if err := pg.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	check("restarted")
}
