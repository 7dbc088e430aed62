package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/listgate/listgate/origin/store/storetest"
	"github.com/listgate/listgate/pkg/model"
)

func TestSweep(t *testing.T) {
	ctx := context.Background()
	db := storetest.NewDB(t)
	site := mustSite(t, db, model.Starter)
	now := time.Now().UTC().Truncate(time.Second)
	past, future := now.Add(-time.Minute), now.Add(time.Hour)
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.Pool.Exec(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	// Expired and live rows of every kind Sweep handles.
	for i, exp := range []time.Time{past, past, past, future} {
		exec(`INSERT INTO idempotency_keys (site_id, key_id, idem_key, body_hash, state, expires_at)
			VALUES ($1, gen_random_uuid(), $2, '\x00', 'done', $3)`, site.ID, string(rune('a'+i)), exp)
	}
	exec(`INSERT INTO accounts (name) VALUES ('Sweep Realty')`)
	exec(`INSERT INTO users (account_id, email, password_hash) SELECT id, 'sweep@example.com', 'x' FROM accounts`)
	for i, exp := range []time.Time{past, future, future} {
		exec(`INSERT INTO dashboard_sessions (token_hash, user_id, csrf_token, expires_at)
			SELECT sha256($1), id, 'csrf', $2 FROM users`, []byte{byte(i)}, exp)
	}
	exec(`INSERT INTO oauth_clients (site_id, client_id, secret_hash, name) VALUES ($1, 'feed', sha256('s'), 'Feed')`, site.ID)
	for i, exp := range []time.Time{past, past, future} {
		exec(`INSERT INTO oauth_tokens (token_hash, site_id, client_id, scope, expires_at)
			VALUES (sha256($1), $2, 'feed', 'feeds:write', $3)`, []byte{byte(i)}, site.ID, exp)
	}
	for _, age := range []time.Duration{72 * time.Hour, 49 * time.Hour, time.Hour} {
		exec(`INSERT INTO usage_minutes (site_id, minute, requests) VALUES ($1, date_trunc('minute', $2::timestamptz), 1)`,
			site.ID, now.Add(-age))
	}

	for _, age := range []time.Duration{31 * 24 * time.Hour, 29 * 24 * time.Hour} {
		exec(`INSERT INTO feed_jobs (site_id, status, finished_at) VALUES ($1, 'done', $2)`, site.ID, now.Add(-age))
	}
	exec(`INSERT INTO feed_jobs (site_id, status) VALUES ($1, 'queued')`, site.ID)

	got, err := db.Sweep(ctx, now, 48*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if got.IdempotencyKeys != 3 || got.Sessions != 1 || got.Usage != 2 || got.FeedJobs != 1 || got.Total() != 7 {
		t.Fatalf("swept %+v; want 3 idempotency keys, 1 session, 2 usage rows, 1 feed job", got)
	}
	for table, want := range map[string]int{"idempotency_keys": 1, "dashboard_sessions": 2, "oauth_tokens": 3, "usage_minutes": 1, "feed_jobs": 2} {
		var n int
		if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM `+table).Scan(&n); err != nil || n != want {
			t.Errorf("%s: %d rows left, %v; want %d", table, n, err, want)
		}
	}
	// A second sweep finds nothing.
	if again, err := db.Sweep(ctx, now, 48*time.Hour); err != nil || again.Total() != 0 {
		t.Fatalf("second sweep: %+v, %v", again, err)
	}
}
