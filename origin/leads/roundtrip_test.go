package leads_test

import (
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
	refs, submits atomic.Int32
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
// database (one round trip); one that names them is looked up first.
func TestLeadWithoutReferencesIsOneCall(t *testing.T) {
	db := storetest.NewDB(t)
	cs := &countingStore{DB: db}
	f := newFixtureOn(t, db, leads.Config{DB: cs})
	f.mustListings(t)
	for _, tc := range []struct {
		body          string
		refs, submits int32
	}{
		{`{"name":"Ann","email":"ann@example.com","phone":"0412 345 678","message":"Hello"}`, 0, 1},
		{`{"name":"Bob","email":"bob@example.com","listing_id":"L1"}`, 1, 1},
		{`{"name":"Cy","email":"cy@example.com","agent_email":"bea@agency.example"}`, 1, 1},
		{`{"name":"Di","email":"di@example.com","listing_id":"NONE"}`, 1, 0}, // 422
	} {
		cs.refs.Store(0)
		cs.submits.Store(0)
		f.post(t, tc.body, nil)
		if cs.refs.Load() != tc.refs || cs.submits.Load() != tc.submits {
			t.Errorf("%s: %d look-ups and %d submissions, want %d and %d", tc.body,
				cs.refs.Load(), cs.submits.Load(), tc.refs, tc.submits)
		}
	}
}
