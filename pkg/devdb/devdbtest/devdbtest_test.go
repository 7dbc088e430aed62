package devdbtest

import (
	"context"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"
)

func TestMain(m *testing.M) { os.Exit(RunTests(m)) }

func TestDatabasesAreSeparate(t *testing.T) {
	tmpl := &Template{Name: "tmpl_devdb", Prepare: func(ctx context.Context, url string) error {
		return execSQL(ctx, url, "CREATE TABLE marker (v int); INSERT INTO marker VALUES (42)")
	}}
	a := NewDatabase(t, tmpl)
	b := NewDatabase(t, tmpl)
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
	empty := NewDatabase(t, nil)
	if err := execSQL(ctx, empty, "SELECT 1 FROM marker"); err == nil {
		t.Error("an empty database has the template's table")
	}
}
