package store_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/listgate/listgate/origin/leads/rules"
	"github.com/listgate/listgate/origin/store"
	"github.com/listgate/listgate/origin/store/storetest"
	"github.com/listgate/listgate/pkg/apikey"
	"github.com/listgate/listgate/pkg/model"
)

// The errors of a database that is down or gave up are "unavailable" (503);
// those of a bug are not (500).
func TestIsUnavailable(t *testing.T) {
	ctx := context.Background()
	_, refused := pgx.Connect(ctx, "postgres://nobody@127.0.0.1:1/none?sslmode=disable&connect_timeout=2")
	closedPool := storetest.NewDB(t)
	closedPool.Close()
	_, poolClosed := closedPool.Pool.Exec(ctx, "SELECT 1")
	conn, err := pgx.Connect(ctx, storetest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	conn.Close(ctx)
	_, connClosed := conn.Exec(ctx, "SELECT 1")
	pg := func(code string) error { return fmt.Errorf("store: x: %w", &pgconn.PgError{Code: code}) }
	for name, tc := range map[string]struct {
		err  error
		want bool
	}{
		"nil":                   {nil, false},
		"connection refused":    {refused, true},
		"pool closed":           {poolClosed, true},
		"connection closed":     {connClosed, true},
		"reset by peer":         {fmt.Errorf("x: %w", &net.OpError{Op: "read", Err: errors.New("connection reset by peer")}), true},
		"unexpected EOF":        {fmt.Errorf("x: %w", io.ErrUnexpectedEOF), true},
		"deadline":              {fmt.Errorf("x: %w", context.DeadlineExceeded), true},
		"admin shutdown":        {pg("57P01"), true},
		"statement timeout":     {pg("57014"), true},
		"connection failure":    {pg("08006"), true},
		"too many connections":  {pg("53300"), true},
		"serialization failure": {pg("40001"), true},
		"deadlock":              {pg("40P01"), true},
		"unique violation":      {pg("23505"), false},
		"syntax error":          {pg("42601"), false},
		"no rows":               {pgx.ErrNoRows, false},
		"plain error":           {errors.New("scan: wrong type"), false},
		"claim lost":            {store.ErrClaimLost, false},
	} {
		t.Run(name, func(t *testing.T) {
			if tc.err == nil && name != "nil" {
				t.Fatal("no error to test")
			}
			if got := store.IsUnavailable(tc.err); got != tc.want {
				t.Errorf("IsUnavailable(%v) = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
}

func mustKeyID(tb testing.TB, db *store.DB, site string) string {
	tb.Helper()
	k, _, err := db.CreateKey(context.Background(), store.NewKey{SiteID: site, Name: "k", Scopes: apikey.LeadsWrite, Source: store.SourceCLI})
	if err != nil {
		tb.Fatal(err)
	}
	return k.ID
}

// An Idempotency-Key's life: claimed, in flight, done and replayed, bound
// to its body, released on failure, taken over when abandoned, replaced
// when expired.
func TestIdempotencyKeyClaims(t *testing.T) {
	ctx := context.Background()
	db := storetest.NewDB(t)
	site := mustSite(t, db, model.Starter).ID
	keyID := mustKeyID(t, db, site)
	req := func(key, body string) store.IdempotencyRequest {
		return store.IdempotencyRequest{SiteID: site, KeyID: keyID, Key: key, BodyHash: []byte(body),
			TTL: 24 * time.Hour, Lease: time.Minute}
	}
	claim := func(r store.IdempotencyRequest, want store.IdempotencyState) store.IdempotencyResult {
		t.Helper()
		res, err := db.ClaimIdempotencyKey(ctx, r)
		if err != nil || res.State != want {
			t.Fatalf("claim %s: %+v %v, want state %d", r.Key, res, err, want)
		}
		return res
	}
	first := claim(req("k1", "body"), store.IdempotencyClaimed)
	claim(req("k1", "body"), store.IdempotencyInFlight)
	claim(req("k1", "other"), store.IdempotencyMismatch)

	// Released: the key is free again, and releasing an old claim does not
	// touch the new one.
	if err := db.ReleaseIdempotencyKey(ctx, *first.Claim); err != nil {
		t.Fatal(err)
	}
	second := claim(req("k1", "body"), store.IdempotencyClaimed)
	if err := db.ReleaseIdempotencyKey(ctx, *first.Claim); err != nil {
		t.Fatal(err)
	}
	claim(req("k1", "body"), store.IdempotencyInFlight)

	// Abandoned past the lease: taken over; the old claim cannot finish.
	if _, err := db.Pool.Exec(ctx, `UPDATE idempotency_keys SET created_at = now() - interval '2 minutes'`); err != nil {
		t.Fatal(err)
	}
	third := claim(req("k1", "body"), store.IdempotencyClaimed)
	if third.Claim.ClaimID == second.Claim.ClaimID {
		t.Fatal("takeover kept the claim id")
	}

	// Done through a lead: replayed as stored.
	nl := store.NewLead{SiteID: site, KeyID: keyID, Type: "general", Priority: "warm", Name: "Ann",
		Email: "a@example.com", EmailNorm: "a@example.com", Metadata: []byte("{}"), Payload: []byte(`{"name":"Ann"}`),
		DuplicateWindow: time.Hour, Idempotency: second.Claim}
	if _, err := db.SubmitLead(ctx, nl); !errors.Is(err, store.ErrClaimLost) {
		t.Fatalf("finishing a lost claim: %v", err)
	}
	var leads int
	db.Pool.QueryRow(ctx, `SELECT count(*) FROM leads`).Scan(&leads)
	if leads != 0 {
		t.Fatalf("a lost claim stored %d leads", leads)
	}
	nl.Idempotency = third.Claim
	out, err := db.SubmitLead(ctx, nl)
	if err != nil {
		t.Fatal(err)
	}
	res := claim(req("k1", "body"), store.IdempotencyReplay)
	want := rules.Response{LeadID: out.LeadID, Status: out.Status, AssignedTo: out.AssignedTo}.Encode()
	if res.Status != 201 || string(res.Body) != string(want) || string(out.Response) != string(want) {
		t.Errorf("replay %d %s, outcome's response %s; want 201 %s", res.Status, res.Body, out.Response, want)
	}
	claim(req("k1", "other"), store.IdempotencyMismatch)
	if err := db.ReleaseIdempotencyKey(ctx, *third.Claim); err != nil {
		t.Fatal(err)
	}
	claim(req("k1", "body"), store.IdempotencyReplay) // a done key is not released

	// Expired: a new key, whatever the body.
	if _, err := db.Pool.Exec(ctx, `UPDATE idempotency_keys SET expires_at = now() - interval '1 second'`); err != nil {
		t.Fatal(err)
	}
	claim(req("k1", "other"), store.IdempotencyClaimed)
	// Keys are per API key.
	other := mustKeyID(t, db, site)
	r := req("k1", "body")
	r.KeyID = other
	claim(r, store.IdempotencyClaimed)
}

// The duplicate search reads the leads with the submission's e-mail or
// numbers, not every lead of the site within the window: with the site's
// thousands of leads analyzed, and the statement run often enough on its
// connection for Postgres to consider a generic plan. (Before statistics
// catch up with a table that grew from empty, any plan may read them all:
// that is the first minute of a new database, until autovacuum analyzes.)
func TestDuplicateSearchReadsOnlyMatches(t *testing.T) {
	ctx := context.Background()
	// One connection, so every submission runs on the one whose plans
	// are cached, and the statistics flushes below are its own.
	db, err := store.Open(ctx, storetest.URL(t), store.Options{MaxConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	site := mustSite(t, db, model.Professional).ID
	n := 0
	submit := func() {
		t.Helper()
		n++
		email := fmt.Sprintf("buyer%d@example.com", n)
		phone := fmt.Sprintf("+614%08d", n)
		out, err := db.SubmitLead(ctx, store.NewLead{SiteID: site, Type: "inquiry", Priority: "warm", Name: "Buyer",
			Email: email, EmailNorm: email, Phone: phone, PhoneE164: phone, Phones: []string{phone},
			Metadata: []byte("{}"), Payload: []byte("{}"), DuplicateWindow: 24 * time.Hour})
		if err != nil || out.Duplicate {
			t.Fatalf("lead %d: %+v %v", n, out, err)
		}
	}
	for range 10 {
		submit()
	}
	if _, err := db.Pool.Exec(ctx, `INSERT INTO leads (site_id, type, priority, name, email, email_norm, phone, phone_e164)
		SELECT $1, 'inquiry', 'warm', 'Earlier', 'e' || i || '@example.com', 'e' || i || '@example.com',
			'+6193' || lpad(i::text, 6, '0'), '+6193' || lpad(i::text, 6, '0')
		FROM generate_series(1, 3000) i`, site); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Pool.Exec(ctx, `ANALYZE leads`); err != nil {
		t.Fatal(err)
	}
	for range 10 {
		submit()
	}
	// Rows of leads read by one more submission, from this connection's
	// statistics, flushed before and after it.
	read := func() int64 {
		t.Helper()
		if _, err := db.Pool.Exec(ctx, `SELECT pg_stat_force_next_flush()`); err != nil {
			t.Fatal(err)
		}
		var rows int64
		if err := db.Pool.QueryRow(ctx, `SELECT coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0)
			FROM pg_stat_user_tables WHERE relname = 'leads'`).Scan(&rows); err != nil {
			t.Fatal(err)
		}
		return rows
	}
	before := read()
	submit()
	if got := read() - before; got > 20 {
		t.Errorf("one submission read %d rows of leads (the site has %d)", got, 3000+n)
	}
}
