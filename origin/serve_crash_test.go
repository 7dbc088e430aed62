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

// An origin killed (SIGKILL) while it holds an Idempotency-Key claim does
// not hold up the retry on another origin: it is taken over at once, not
// after the lease (the lead timeout + 5 s), and the lead is stored once.
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

	// The victim's lead waits on the table lock after claiming the key.
	tx, err := db.Pool.BeginTx(ctx, pgx.TxOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `LOCK TABLE lead_submissions`); err != nil {
		t.Fatal(err)
	}
	go post(victimAddr)
	waitUntil(t, 10*time.Second, "the victim claimed the key", func() bool {
		var n int
		db.Pool.QueryRow(ctx, `SELECT count(*) FROM idempotency_keys WHERE state = 'in_flight'`).Scan(&n)
		return n == 1
	})
	victim.Process.Kill()
	victim.Wait()
	tx.Rollback(ctx)

	// The claim's owner is gone: the retry goes ahead at once (its 409s
	// last only until Postgres sees the victim's liveness connection close).
	waitUntil(t, 3*time.Second, "the retry was answered 201", func() bool {
		status, err := post(survivorAddr)
		if err != nil || status != http.StatusCreated && status != http.StatusConflict {
			t.Fatalf("retry: %d %v", status, err)
		}
		return status == http.StatusCreated
	})
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
