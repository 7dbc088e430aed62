package leads_test

import (
	"bytes"
	"context"
	"sync/atomic"
	"testing"

	"github.com/listgate/listgate/origin/leads"
	"github.com/listgate/listgate/origin/leads/rules"
	"github.com/listgate/listgate/origin/store"
	"github.com/listgate/listgate/origin/store/storetest"
)

// countingStore counts the calls the service makes of the database.
type countingStore struct {
	*store.DB
	refs, submits, claims atomic.Int32
}

func (s *countingStore) ClaimIdempotencyKey(ctx context.Context, req store.IdempotencyRequest) (store.IdempotencyResult, error) {
	s.claims.Add(1)
	return s.DB.ClaimIdempotencyKey(ctx, req)
}

func (s *countingStore) LeadRefFacts(ctx context.Context, site string, q store.LeadRefQuery) (rules.RefFacts, error) {
	s.refs.Add(1)
	return s.DB.LeadRefFacts(ctx, site, q)
}

func (s *countingStore) SubmitLead(ctx context.Context, nl store.NewLead) (store.LeadOutcome, error) {
	s.submits.Add(1)
	return s.DB.SubmitLead(ctx, nl)
}

// A lead that names no listing and no agent is stored in one call of the
// database (one round trip), with its Idempotency-Key or without; one that
// names them is looked up first.
func TestLeadWithoutReferencesIsOneCall(t *testing.T) {
	db := storetest.NewDB(t)
	cs := &countingStore{DB: db}
	f := newFixtureOn(t, db, leads.Config{DB: cs})
	f.mustListings(t)
	for _, tc := range []struct {
		body, key             string
		refs, submits, claims int32
	}{
		{`{"name":"Ann","email":"ann@example.com","phone":"0412 345 678","message":"Hello"}`, "", 0, 1, 0},
		{`{"name":"Ann","email":"ann2@example.com"}`, "form-1", 0, 1, 0},
		{`{"name":"Ann","email":"ann2@example.com"}`, "form-1", 0, 1, 0}, // replayed
		{`{"name":"Bob","email":"bob@example.com","listing_id":"L1"}`, "", 1, 1, 0},
		{`{"name":"Bob","email":"bob2@example.com","listing_id":"L1"}`, "form-2", 1, 1, 0},
		{`{"name":"Cy","email":"cy@example.com","agent_email":"bea@agency.example"}`, "", 1, 1, 0},
		{`{"name":"Di","email":"di@example.com","listing_id":"NONE"}`, "", 1, 0, 0}, // 422
	} {
		cs.refs.Store(0)
		cs.submits.Store(0)
		cs.claims.Store(0)
		var hdr map[string]string
		if tc.key != "" {
			hdr = map[string]string{leads.IdempotencyHeader: tc.key}
		}
		f.post(t, tc.body, hdr)
		if cs.refs.Load() != tc.refs || cs.submits.Load() != tc.submits || cs.claims.Load() != tc.claims {
			t.Errorf("%s (key %q): %d look-ups, %d submissions and %d claims, want %d, %d and %d", tc.body, tc.key,
				cs.refs.Load(), cs.submits.Load(), cs.claims.Load(), tc.refs, tc.submits, tc.claims)
		}
	}
}

// A request with an Idempotency-Key that was stored is replayed, whatever
// became of the listing it named since; one whose first attempt never
// stored anything is refused as any other.
func TestIdempotencyReplayOutlivesTheListing(t *testing.T) {
	f := newFixture(t, leads.Config{})
	f.mustListings(t)
	const body = `{"name":"Ann","email":"ann@example.com","listing_id":"L2"}`
	key := map[string]string{leads.IdempotencyHeader: "form-48"}
	first := f.post(t, body, key)
	if first.status != 201 {
		t.Fatalf("first: %d %s", first.status, first.body)
	}
	f.mustExec(t, `UPDATE listings SET status = 'deleted' WHERE unique_id = 'L2'`)
	again := f.post(t, body, key)
	if again.status != 201 || !bytes.Equal(again.body, first.body) || again.header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("replay after the listing went: %d %s, want %s", again.status, again.body, first.body)
	}
	if r := f.post(t, `{"name":"Bob","email":"bob@example.com","listing_id":"L2"}`, key); r.status != 422 {
		t.Errorf("same key, other body: %d %s", r.status, r.body)
	}
	if r := f.post(t, `{"name":"Bob","email":"bob@example.com","listing_id":"L2"}`,
		map[string]string{leads.IdempotencyHeader: "form-49"}); r.status != 422 {
		t.Errorf("new key, listing gone: %d %s", r.status, r.body)
	}
}
