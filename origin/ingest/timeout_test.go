package ingest_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/listgate/listgate/origin/ingest"
	"github.com/listgate/listgate/origin/store"
	"github.com/listgate/listgate/origin/store/storetest"
	"github.com/listgate/listgate/pkg/model"
	"github.com/listgate/listgate/pkg/reaxml/reaxmlgen"
)

// An import is not held to the pool's statement_timeout (a request's):
// it waits longer than that for another import of the site and for a
// table another transaction holds, and completes; its connections have
// the pool's timeout again afterwards.
func TestImportOutlivesThePoolsStatementTimeout(t *testing.T) {
	ctx := context.Background()
	url := storetest.URL(t)
	db, err := store.Open(ctx, url, store.Options{StatementTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// The site is made on a pool without the timeout: on a loaded machine
	// its insert alone can take 100 ms.
	plain, err := store.Open(ctx, url, store.Options{MaxConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	site, err := plain.CreateSite(ctx, "Ingest Realty", model.Professional, "")
	plain.Close()
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{db: db, im: ingest.New(db, slog.New(slog.DiscardHandler)), site: site.ID}
	var b strings.Builder
	if err := reaxmlgen.Generate(&b, reaxmlgen.Options{Seed: 9, Listings: 20}); err != nil {
		t.Fatal(err)
	}

	// One connection holds the site's import lock, another the listings
	// table.
	siteLock, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer siteLock.Close(ctx)
	if _, err := siteLock.Exec(ctx, `SELECT pg_advisory_lock(hashtextextended($1, 7))`, f.site); err != nil {
		t.Fatal(err)
	}
	tableLock, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer tableLock.Close(ctx)
	tx, err := tableLock.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `LOCK TABLE listings IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}

	done := importAsync(ctx, f.im, f.site, b.String())
	// awaitWaiter waits for a backend of the import waiting on a lock of
	// locktype, then lets it wait three times the pool's timeout more.
	awaitWaiter := func(locktype string) {
		t.Helper()
		deadline := time.Now().Add(time.Minute)
		for waiting := false; !waiting; {
			if time.Now().After(deadline) {
				t.Fatalf("the import never waited on a lock of type %s", locktype)
			}
			select {
			case o := <-done:
				t.Fatalf("the import ended while waiting on a %s lock: %+v %v", locktype, o.res.Counts, o.err)
			default:
			}
			if err := siteLock.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = $1 AND NOT granted)`,
				locktype).Scan(&waiting); err != nil {
				t.Fatal(err)
			}
		}
		select {
		case o := <-done:
			t.Fatalf("the import ended while waiting on a %s lock: %+v %v", locktype, o.res.Counts, o.err)
		case <-time.After(300 * time.Millisecond):
		}
	}
	awaitWaiter("advisory")
	if _, err := siteLock.Exec(ctx, `SELECT pg_advisory_unlock(hashtextextended($1, 7))`, f.site); err != nil {
		t.Fatal(err)
	}
	awaitWaiter("relation")
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	o := <-done
	if o.err != nil || o.res.Counts.Created != 20 {
		t.Fatalf("import: %v, counts %+v; want 20 created", o.err, o.res.Counts)
	}
	// Every connection of the pool is back to 100 ms.
	conns := db.Pool.AcquireAllIdle(ctx)
	if len(conns) == 0 {
		t.Fatal("no idle connection in the pool after the import")
	}
	defer func() {
		for _, c := range conns {
			c.Release()
		}
	}()
	for _, c := range conns {
		var st string
		if err := c.QueryRow(ctx, "SHOW statement_timeout").Scan(&st); err != nil {
			t.Fatal(err)
		}
		if st != "100ms" {
			t.Errorf("a pool connection has statement_timeout %q after the import, want 100ms", st)
		}
	}
}

// outcome is what an import started by importAsync returned.
type outcome struct {
	res ingest.Result
	err error
}

// importAsync imports feed into site in the background and gives its
// outcome on the channel.
func importAsync(ctx context.Context, im *ingest.Importer, site, feed string) <-chan outcome {
	done := make(chan outcome, 1)
	go func() {
		res, err := im.Import(ctx, site, strings.NewReader(feed), ingest.Options{})
		done <- outcome{res, err}
	}()
	return done
}
