package leads_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/listgate/listgate/origin/leads"
	"github.com/listgate/listgate/origin/store"
	"github.com/listgate/listgate/pkg/devdb/devdbtest"
)

// Submissions while the database's connections are killed again and again:
// every 201 has its lead and submission once the database is back, every
// failure is a 503 with Retry-After (never a 500), and retrying the failures
// stores each enquiry exactly once.
func TestNothingLostWhenConnectionsAreKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("chaos test")
	}
	f := newFixture(t, leads.Config{})
	ctx := context.Background()

	// The killer terminates every other connection to the test's database.
	var kills atomic.Int64
	stop := make(chan struct{})
	killerDone := make(chan struct{})
	killer, err := pgx.Connect(ctx, f.db.Pool.Config().ConnConfig.ConnString())
	if err != nil {
		t.Fatal(err)
	}
	defer killer.Close(ctx)
	go func() {
		defer close(killerDone)
		for {
			select {
			case <-stop:
				return
			case <-time.After(time.Duration(50+rand.IntN(100)) * time.Millisecond):
			}
			var n int64
			if err := killer.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
				WHERE datname = current_database() AND pid <> pg_backend_pid()`).Scan(&n); err == nil {
				kills.Add(n)
			}
		}
	}()

	type outcome struct {
		body string
		r    reply
	}
	var (
		mu       sync.Mutex
		outcomes []outcome
		next     atomic.Int64
		wg       sync.WaitGroup
	)
	deadline := time.Now().Add(15 * time.Second)
	var ok201, failed503 atomic.Int64
	for range 8 {
		wg.Go(func() {
			for time.Now().Before(deadline) {
				i := next.Add(1)
				if i > 600 || (i > 150 && ok201.Load() > 10 && failed503.Load() > 10) {
					return
				}
				body := fmt.Sprintf(`{"name":"Buyer %d","email":"buyer%d@example.com","message":"enquiry %d"}`, i, i, i)
				r := send(f.handler, "POST", "/v1/leads", strings.NewReader(body), f.identity())
				switch r.status {
				case http.StatusCreated:
					ok201.Add(1)
				case http.StatusServiceUnavailable:
					failed503.Add(1)
				}
				mu.Lock()
				outcomes = append(outcomes, outcome{body, r})
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	close(stop)
	<-killerDone
	t.Logf("%d requests: %d created, %d unavailable; %d connections killed", len(outcomes), ok201.Load(), failed503.Load(), kills.Load())
	if ok201.Load() == 0 || failed503.Load() == 0 || kills.Load() == 0 {
		t.Fatalf("the chaos did not bite: %d created, %d unavailable, %d kills", ok201.Load(), failed503.Load(), kills.Load())
	}

	// The database is back; the connections the last kill left dead in the
	// pool go too. Check every answer.
	f.db.Pool.Reset()
	var retry []string
	for _, o := range outcomes {
		switch o.r.status {
		case http.StatusCreated:
			c := mustCreated(t, o.r.body)
			email := emailOf(o.body)
			if n := f.count(t, `SELECT count(*) FROM leads WHERE id = $1 AND email = $2`, c.LeadID, email); n != 1 {
				t.Errorf("201 for %s (lead %d) but no such lead", email, c.LeadID)
			}
			if n := f.count(t, `SELECT count(*) FROM lead_submissions WHERE lead_id = $1 AND payload->>'email' = $2`, c.LeadID, email); n != 1 {
				t.Errorf("201 for %s (lead %d) but %d submissions", email, c.LeadID, n)
			}
		case http.StatusServiceUnavailable:
			e := mustEnvelope(t, o.r)
			if e.Error.Code != "SERVICE_UNAVAILABLE" || o.r.header.Get("Retry-After") == "" {
				t.Errorf("503 without its code or Retry-After: %v %s", o.r.header, o.r.body)
			}
			retry = append(retry, o.body)
		default:
			t.Errorf("status %d under a failing database: %s", o.r.status, o.r.body)
		}
	}
	// A client retrying its failures: each is stored now, and at most once.
	for _, body := range retry {
		r := f.post(t, body, nil)
		if r.status != http.StatusCreated {
			t.Fatalf("retry after recovery: %d %s", r.status, r.body)
		}
	}
	if n := f.count(t, `SELECT count(*) FROM leads`); n != len(outcomes) {
		t.Errorf("%d leads for %d distinct enquiries", n, len(outcomes))
	}
	if n := f.count(t, `SELECT count(DISTINCT email) FROM leads`); n != len(outcomes) {
		t.Errorf("%d distinct enquiries stored, want %d", n, len(outcomes))
	}
}

func emailOf(body string) string {
	_, rest, _ := strings.Cut(body, `"email":"`)
	email, _, _ := strings.Cut(rest, `"`)
	return email
}

// A database that goes away entirely (its server stopped): every request
// gets a 503 with Retry-After, never a 201 and never a 500.
func TestDatabaseDownIs503(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cluster of its own")
	}
	ctx := context.Background()
	pg := devdbtest.NewCluster(t)
	conn, err := pgx.Connect(ctx, pg.URL)
	if err != nil {
		t.Fatal(err)
	}
	_, err = conn.Exec(ctx, "CREATE DATABASE leads")
	conn.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(ctx, pg.DatabaseURL("leads"), store.Options{MaxConns: 4, ConnectTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	if _, err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	f := newFixtureOn(t, db, leads.Config{Timeout: 3 * time.Second})
	key := map[string]string{leads.IdempotencyHeader: "down-1"}
	f.mustCreate(t, `{"name":"Ann","email":"ann@example.com"}`, nil)

	// Requests in flight while the server stops, then requests after it.
	var wg sync.WaitGroup
	replies := make(chan reply, 64)
	for i := range 8 {
		wg.Go(func() {
			for j := range 4 {
				body := fmt.Sprintf(`{"name":"Buyer","email":"b%d-%d@example.com"}`, i, j)
				replies <- send(f.handler, "POST", "/v1/leads", strings.NewReader(body), f.identity())
			}
		})
	}
	if err := pg.Close(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	for _, hdr := range []map[string]string{nil, key} {
		replies <- f.post(t, `{"name":"Bob","email":"bob@example.com"}`, hdr)
	}
	close(replies)
	unavailable := 0
	for r := range replies {
		switch r.status {
		case http.StatusCreated: // committed before the server went: allowed
		case http.StatusServiceUnavailable:
			unavailable++
			if e := mustEnvelope(t, r); e.Error.Code != "SERVICE_UNAVAILABLE" || r.header.Get("Retry-After") != "2" {
				t.Errorf("503: %v %s", r.header, r.body)
			}
		default:
			t.Errorf("database down: %d %s", r.status, r.body)
		}
	}
	if unavailable < 2 {
		t.Errorf("only %d requests saw the database down", unavailable)
	}
}
