package leads_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/listgate/listgate/origin/leads"
	"github.com/listgate/listgate/origin/leads/rules"
	"github.com/listgate/listgate/origin/store"
	"github.com/listgate/listgate/origin/store/storetest"
	"github.com/listgate/listgate/pkg/apikey"
)

func TestIdempotencyReplay(t *testing.T) {
	f := newFixture(t, leads.Config{})
	const body = `{"name":"Ann","email":"ann@example.com"}`
	key := map[string]string{leads.IdempotencyHeader: "form-42"}
	first := f.post(t, body, key)
	if first.status != 201 || first.header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("first: %d %s", first.status, first.body)
	}
	// Make a replay distinguishable from a fresh duplicate answer: the lead
	// moved on since.
	f.mustExec(t, `UPDATE leads SET status = 'contacted'`)
	for i := range 3 {
		again := f.post(t, body, key)
		if again.status != 201 || !bytes.Equal(again.body, first.body) || again.header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("replay %d: %d %s, want %s", i, again.status, again.body, first.body)
		}
	}
	if n := f.count(t, `SELECT count(*) FROM lead_submissions`); n != 1 {
		t.Errorf("%d submissions after replays, want 1", n)
	}

	// Same key, other body: 422, and nothing stored.
	r := f.post(t, `{"name":"Bob","email":"bob@example.com"}`, key)
	if e := mustEnvelope(t, r); r.status != 422 || e.Error.Details[leads.IdempotencyHeader] == "" {
		t.Errorf("other body: %d %s", r.status, r.body)
	}
	// The key is per API key: another key of the site may use the same one.
	other := *f
	other.keyID, _ = mustKey(t, f.db, f.site)
	if r := other.post(t, `{"name":"Bob","email":"bob@example.com"}`, key); r.status != 201 {
		t.Errorf("same key from another API key: %d %s", r.status, r.body)
	}
	// Without a key, the same body is a plain duplicate.
	if c := f.mustCreate(t, body, nil); !c.Duplicate {
		t.Errorf("same body without key: %+v", c)
	}
	if n := f.count(t, `SELECT count(*) FROM lead_submissions`); n != 3 {
		t.Errorf("%d submissions, want 3", n)
	}
}

func mustKey(tb testing.TB, db *store.DB, site string) (string, string) {
	tb.Helper()
	k, secret, err := db.CreateKey(context.Background(), store.NewKey{SiteID: site, Name: "second", Scopes: apikey.LeadsWrite, Source: store.SourceCLI})
	if err != nil {
		tb.Fatal(err)
	}
	return k.ID, secret
}

// A key whose first request is still being processed answers 409; an
// abandoned claim (its process died) frees itself after the lease; an
// expired key is a new key.
func TestIdempotencyInFlightAndExpiry(t *testing.T) {
	f := newFixture(t, leads.Config{})
	const body = `{"name":"Ann","email":"ann@example.com"}`
	key := map[string]string{leads.IdempotencyHeader: "form-43"}
	res, err := f.db.ClaimIdempotencyKey(t.Context(), store.IdempotencyRequest{SiteID: f.site, KeyID: f.keyID,
		Key: "form-43", BodyHash: rules.BodyHash([]byte(body)), TTL: rules.IdempotencyTTL, Lease: 10 * time.Minute})
	if err != nil || res.State != store.IdempotencyClaimed {
		t.Fatalf("claim: %+v %v", res, err)
	}
	r := f.post(t, body, key)
	if e := mustEnvelope(t, r); r.status != 409 || e.Error.Code != "CONFLICT" {
		t.Fatalf("in flight: %d %s", r.status, r.body)
	}
	if n := f.count(t, `SELECT count(*) FROM lead_submissions`); n != 0 {
		t.Errorf("409 stored %d submissions", n)
	}
	// The claim's process died an hour ago: the lease is over.
	f.mustExec(t, `UPDATE idempotency_keys SET created_at = now() - interval '1 hour'`)
	if r := f.post(t, body, key); r.status != 201 {
		t.Fatalf("after the lease: %d %s", r.status, r.body)
	}
	// A day later the key is forgotten: another body is welcome.
	f.mustExec(t, `UPDATE idempotency_keys SET expires_at = now() - interval '1 second'`)
	if r := f.post(t, `{"name":"Bob","email":"bob@example.com"}`, key); r.status != 201 {
		t.Fatalf("expired key, other body: %d %s", r.status, r.body)
	}
	if n := f.count(t, `SELECT count(*) FROM idempotency_keys`); n != 1 {
		t.Errorf("%d key rows, want the one replaced", n)
	}
}

// A claim held by another origin answers 409 while that origin is alive,
// and is taken over at once once it is gone (its liveness lock freed), long
// before the lease.
func TestIdempotencyClaimOfAGoneOrigin(t *testing.T) {
	url := storetest.URL(t)
	other := mustOpen(t, url, store.Options{MaxConns: 1, Liveness: true})
	f := newFixtureOn(t, mustOpen(t, url, store.Options{Liveness: true}), leads.Config{})
	const body = `{"name":"Ann","email":"ann@example.com"}`
	res, err := other.ClaimIdempotencyKey(t.Context(), store.IdempotencyRequest{SiteID: f.site, KeyID: f.keyID,
		Key: "form-46", BodyHash: rules.BodyHash([]byte(body)), TTL: rules.IdempotencyTTL, Lease: 10 * time.Minute})
	if err != nil || res.State != store.IdempotencyClaimed {
		t.Fatalf("claim: %+v %v", res, err)
	}
	key := map[string]string{leads.IdempotencyHeader: "form-46"}
	if r := f.post(t, body, key); r.status != 409 {
		t.Fatalf("claim of a live origin: %d %s", r.status, r.body)
	}
	other.Close() // as when its process dies: the lock is freed
	if r := f.post(t, body, key); r.status != 201 {
		t.Fatalf("claim of a gone origin: %d %s", r.status, r.body)
	}
}

// inFlightSignal tells when a claim found the key in flight the first time.
type inFlightSignal struct {
	*store.DB
	once     sync.Once
	inFlight chan struct{}
}

func (s *inFlightSignal) ClaimIdempotencyKey(ctx context.Context, req store.IdempotencyRequest) (store.IdempotencyResult, error) {
	res, err := s.DB.ClaimIdempotencyKey(ctx, req)
	if err == nil && res.State == store.IdempotencyInFlight {
		s.once.Do(func() { close(s.inFlight) })
	}
	return res, err
}

// A retry that finds its key in flight waits a moment before answering
// 409: when the claim is released meanwhile (here its origin dies right
// after the retry first found it), the retry goes ahead and stores the
// lead.
func TestIdempotencyRetryWaitsForAClaimInFlight(t *testing.T) {
	url := storetest.URL(t)
	other := mustOpen(t, url, store.Options{MaxConns: 1, Liveness: true})
	db := mustOpen(t, url, store.Options{Liveness: true})
	sig := &inFlightSignal{DB: db, inFlight: make(chan struct{})}
	f := newFixtureOn(t, db, leads.Config{DB: sig})
	const body = `{"name":"Ann","email":"ann@example.com"}`
	res, err := other.ClaimIdempotencyKey(t.Context(), store.IdempotencyRequest{SiteID: f.site, KeyID: f.keyID,
		Key: "form-47", BodyHash: rules.BodyHash([]byte(body)), TTL: rules.IdempotencyTTL, Lease: 10 * time.Minute})
	if err != nil || res.State != store.IdempotencyClaimed {
		t.Fatalf("claim: %+v %v", res, err)
	}
	go func() {
		<-sig.inFlight
		other.Close()
	}()
	if r := f.post(t, body, map[string]string{leads.IdempotencyHeader: "form-47"}); r.status != 201 {
		t.Fatalf("retry while the claim was released: %d %s", r.status, r.body)
	}
	if n := f.count(t, `SELECT count(*) FROM lead_submissions`); n != 1 {
		t.Errorf("%d submissions stored, want 1", n)
	}
}

func mustOpen(tb testing.TB, url string, opts store.Options) *store.DB {
	tb.Helper()
	db, err := store.Open(context.Background(), url, opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(db.Close)
	return db
}

// flakyStore fails SubmitLead like a dropped connection, as many times as
// failures says; everything else is the real database.
type flakyStore struct {
	*store.DB
	failures atomic.Int32
}

func (s *flakyStore) SubmitLead(ctx context.Context, nl store.NewLead) (store.LeadOutcome, error) {
	if s.failures.Add(-1) >= 0 {
		return store.LeadOutcome{}, fmt.Errorf("store: insert lead: %w", &net.OpError{Op: "read", Net: "tcp", Err: fmt.Errorf("connection reset by peer")})
	}
	return s.DB.SubmitLead(ctx, nl)
}

// When the work fails with a 5xx the claim is released, and the retry with
// the same key goes ahead.
func TestIdempotencyReleasedOnFailure(t *testing.T) {
	db := storetest.NewDB(t)
	flaky := &flakyStore{DB: db}
	flaky.failures.Store(1)
	f := newFixtureOn(t, db, leads.Config{DB: flaky})
	const body = `{"name":"Ann","email":"ann@example.com"}`
	key := map[string]string{leads.IdempotencyHeader: "form-44"}
	r := f.post(t, body, key)
	if e := mustEnvelope(t, r); r.status != 503 || e.Error.Code != "SERVICE_UNAVAILABLE" || r.header.Get("Retry-After") == "" {
		t.Fatalf("failed work: %d %s %v", r.status, r.body, r.header)
	}
	if n := f.count(t, `SELECT count(*) FROM idempotency_keys WHERE site_id = $1`, f.site); n != 0 {
		t.Errorf("claim kept after a failure: %d rows", n)
	}
	if r := f.post(t, body, key); r.status != 201 {
		t.Fatalf("retry: %d %s", r.status, r.body)
	}
}

// Concurrent requests with one key and body: one does the work, the others
// get 409 or, once it is done, its replay.
func TestIdempotencyConcurrent(t *testing.T) {
	f := newFixture(t, leads.Config{})
	const body = `{"name":"Ann","email":"ann@example.com"}`
	replies := make(chan reply, 20)
	for range cap(replies) {
		go func() {
			h := f.identity()
			h[leads.IdempotencyHeader] = "form-45"
			replies <- send(f.handler, "POST", "/v1/leads", bytes.NewReader([]byte(body)), h)
		}()
	}
	var bodies [][]byte
	conflicts := 0
	for range cap(replies) {
		r := <-replies
		switch r.status {
		case 201:
			bodies = append(bodies, r.body)
		case 409:
			conflicts++
		default:
			t.Errorf("%d %s", r.status, r.body)
		}
	}
	for _, b := range bodies {
		if !bytes.Equal(b, bodies[0]) {
			t.Errorf("201 bodies differ: %s vs %s", b, bodies[0])
		}
	}
	if len(bodies) == 0 || f.count(t, `SELECT count(*) FROM leads`) != 1 || f.count(t, `SELECT count(*) FROM lead_submissions`) != 1 {
		t.Errorf("%d created, %d conflicts; want one lead and one submission", len(bodies), conflicts)
	}
}
