package main

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/listgate/listgate/origin/api"
	"github.com/listgate/listgate/origin/store"
	"github.com/listgate/listgate/origin/store/storetest"
	"github.com/listgate/listgate/pkg/apikey"
	"github.com/listgate/listgate/pkg/model"
)

// An origin killed (SIGKILL) while its lead, holding an Idempotency-Key,
// is under way does not hold up the retry on another origin: the key is
// claimed in the lead's own transaction (submit_lead), so the retry waits
// for that transaction alone — never for a lease — and replays its answer
// once it commits; the lead is stored once.
func TestServeProcessKilledHoldingAClaim(t *testing.T) {
	bin, dbURL, ctx := mustBuildOrigin(t), storetest.URL(t), context.Background()
	db := mustOpenStore(t, dbURL)
	site, err := db.CreateSite(ctx, "Crash Realty", model.Starter, "")
	if err != nil {
		t.Fatal(err)
	}
	key, _, err := db.CreateKey(ctx, store.NewKey{SiteID: site.ID, Name: "k", Scopes: apikey.LeadsWrite, Source: store.SourceCLI})
	if err != nil {
		t.Fatal(err)
	}
	post := func(addr string) (int, error) {
		req, _ := http.NewRequest("POST", "http://"+addr+"/v1/leads", strings.NewReader(`{"name":"Ann","email":"ann@example.com"}`))
		for k, v := range map[string]string{api.HeaderInternalToken: testToken, api.HeaderSite: site.ID, api.HeaderKeyID: key.ID,
			api.HeaderScopes: "leads:write", "Content-Type": "application/json", "Idempotency-Key": "form-1"} {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	victim, victimAddr, _ := startServeProcess(t, bin, dbURL)
	_, survivorAddr, _ := startServeProcess(t, bin, dbURL)
	lockWaiters := func(n int) func() bool {
		return func() bool {
			var waiting int
			db.Pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
				WHERE wait_event_type = 'Lock' AND query ILIKE '%submit_lead%'`).Scan(&waiting)
			return waiting == n
		}
	}

	// The victim's lead, its key claimed, waits on the table lock.
	tx, err := db.Pool.BeginTx(ctx, pgx.TxOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `LOCK TABLE lead_submissions`); err != nil {
		t.Fatal(err)
	}
	go post(victimAddr)
	waitUntil(t, 10*time.Second, "the victim's lead waits on the lock", lockWaiters(1))
	victim.Process.Kill()
	victim.Wait()
	var inFlight int
	db.Pool.QueryRow(ctx, `SELECT count(*) FROM idempotency_keys`).Scan(&inFlight)
	if inFlight != 0 {
		t.Errorf("%d idempotency keys visible while the lead's transaction is open: a claim was committed on its own", inFlight)
	}

	// The retry waits for the victim's transaction (the key's row), not
	// for a lease, and replays what it stored.
	retried := make(chan int, 1)
	go func() {
		status, err := post(survivorAddr)
		if err != nil {
			t.Errorf("retry: %v", err)
		}
		retried <- status
	}()
	waitUntil(t, 10*time.Second, "the retry waits on the victim's key", lockWaiters(2))
	tx.Rollback(ctx)
	select {
	case status := <-retried:
		if status != http.StatusCreated {
			t.Fatalf("retry answered %d, want 201", status)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("the retry was not answered within 3 s of the victim's transaction ending")
	}
	var leads int
	if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM leads`).Scan(&leads); err != nil || leads != 1 {
		t.Fatalf("%d leads (%v), want 1", leads, err)
	}
}

func mustOpenStore(tb testing.TB, url string) *store.DB {
	tb.Helper()
	db, err := store.Open(context.Background(), url, store.Options{MaxConns: 2})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(db.Close)
	return db
}

// waitUntil polls cond every 20 ms until it holds, failing after d.
func waitUntil(tb testing.TB, d time.Duration, what string, cond func() bool) {
	tb.Helper()
	for deadline := time.Now().Add(d); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			tb.Fatalf("not within %s: %s", d, what)
		}
	}
}
