package main

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	json "github.com/goccy/go-json"
	"github.com/jackc/pgx/v5"

	"github.com/listgate/listgate/origin/store"
	"github.com/listgate/listgate/pkg/internalapi"
	"github.com/listgate/listgate/pkg/model"
	"github.com/listgate/listgate/pkg/syncbuf"
)

// A read whose query cannot finish (the listings table is locked by
// another transaction) is answered 503 SERVICE_UNAVAILABLE within the
// request timeout, is logged once with its request id and route, and
// leaves no backend running its query: Postgres ended it.
func TestServeRequestTimeoutCancelsTheQuery(t *testing.T) {
	cfg := testServeConfig(t)
	cfg.RequestTimeout = 300 * time.Millisecond
	var logs syncbuf.Buffer
	addr, _ := serveInProcess(t, cfg, &logs)

	ctx := context.Background()
	db, err := store.Open(ctx, cfg.DatabaseURL, store.Options{MaxConns: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	site, err := db.CreateSite(ctx, "Slow Realty", model.Plan("starter"), "")
	if err != nil {
		t.Fatal(err)
	}
	// The lock holder: every read of listings waits for it.
	locker, err := pgx.Connect(ctx, cfg.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	defer locker.Close(ctx)
	tx, err := locker.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "LOCK TABLE listings IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}

	req, _ := http.NewRequest("GET", "http://"+addr+"/v1/sites/"+site.ID+"/listings", nil)
	req.Header.Set(internalapi.HeaderInternalToken, testToken)
	req.Header.Set(internalapi.HeaderSite, site.ID)
	req.Header.Set(internalapi.HeaderKeyID, "6f1c2a8e-0000-4000-8000-0000000000aa")
	req.Header.Set(internalapi.HeaderScopes, "listings:read")
	req.Header.Set("X-Request-Id", "slow-read-1")
	// Without a deadline the request would wait for the lock: the client
	// gives up well after the bound.
	client := &http.Client{Timeout: 10 * time.Second}
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("no answer: %v", err)
	}
	took := time.Since(start)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("status %d, want 503: %s", resp.StatusCode, body)
	}
	if took > 5*time.Second {
		t.Errorf("answered after %v, far past the 300 ms request timeout", took)
	}
	if resp.Header.Get("Retry-After") == "" {
		t.Error("503 without Retry-After")
	}
	var env struct {
		Error struct {
			Code      string `json:"code"`
			Message   string `json:"message"`
			RequestID string `json:"request_id"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &env); err != nil {
		t.Fatalf("not the error envelope: %s", body)
	}
	if env.Error.Code != "SERVICE_UNAVAILABLE" || env.Error.RequestID != "slow-read-1" ||
		!strings.Contains(env.Error.Message, "took too long") {
		t.Errorf("envelope %s", body)
	}

	// Postgres no longer runs the read: no backend but the lock holder
	// waits on listings.
	var waiting int
	if err := locker.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
		WHERE datname = current_database() AND pid <> pg_backend_pid() AND state = 'active'
		AND query ILIKE '%listings%'`).Scan(&waiting); err != nil {
		t.Fatal(err)
	}
	if waiting != 0 {
		t.Errorf("%d backends still run the read after its answer", waiting)
	}

	var timedOut []map[string]any
	for _, line := range strings.Split(logs.String(), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil && m["msg"] == "request timed out" {
			timedOut = append(timedOut, m)
		}
	}
	if len(timedOut) != 1 {
		t.Fatalf("%d 'request timed out' lines, want 1:\n%s", len(timedOut), logs.String())
	}
	if l := timedOut[0]; l["request_id"] != "slow-read-1" || l["route"] != "/v1/sites/{site}/listings" {
		t.Errorf("log line %v: want request_id slow-read-1 and route /v1/sites/{site}/listings", l)
	}
	if strings.Contains(logs.String(), testToken) {
		t.Error("the internal token is in the logs")
	}
}
