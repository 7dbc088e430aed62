package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/listgate/listgate/origin/store"
	"github.com/listgate/listgate/origin/store/storetest"
	"github.com/listgate/listgate/pkg/model"
)

// claimsFixture is a site and API key, with helpers to claim keys of it
// from any DB of the test's database.
type claimsFixture struct {
	site, keyID string
	check       *store.DB // an origin that never claims
}

func newClaimsFixture(tb testing.TB, url string) *claimsFixture {
	tb.Helper()
	check := mustOpen(tb, url)
	site := mustSite(tb, check, model.Starter).ID
	return &claimsFixture{site: site, keyID: mustKeyID(tb, check, site), check: check}
}

func (f *claimsFixture) req(key string) store.IdempotencyRequest {
	return store.IdempotencyRequest{SiteID: f.site, KeyID: f.keyID, Key: key, BodyHash: []byte("body"),
		TTL: 24 * time.Hour, Lease: time.Hour}
}

func (f *claimsFixture) mustClaim(tb testing.TB, db *store.DB, key string, want store.IdempotencyState) store.IdempotencyResult {
	tb.Helper()
	res, err := db.ClaimIdempotencyKey(context.Background(), f.req(key))
	if err != nil || res.State != want {
		tb.Fatalf("claim %s: %+v %v, want state %d", key, res, err, want)
	}
	return res
}

// owner is the owner recorded for key, 0 for none.
func (f *claimsFixture) owner(tb testing.TB, key string) int32 {
	tb.Helper()
	var owner *int32
	if err := f.check.Pool.QueryRow(context.Background(), `SELECT owner FROM idempotency_keys
		WHERE site_id = $1 AND key_id = $2 AND idem_key = $3`, f.site, f.keyID, key).Scan(&owner); err != nil {
		tb.Fatal(err)
	}
	if owner == nil {
		return 0
	}
	return *owner
}

// submit stores a lead completing claim.
func (f *claimsFixture) submit(db *store.DB, claim *store.IdempotencyClaim) error {
	_, err := db.SubmitLead(context.Background(), store.NewLead{SiteID: f.site, KeyID: f.keyID, Type: "general",
		Priority: "warm", Name: "Ann", Email: "a@example.com", EmailNorm: "a@example.com", Metadata: []byte("{}"),
		Payload: []byte("{}"), DuplicateWindow: time.Hour, Idempotency: claim})
	return err
}

// A claim whose owner process is gone is taken over at once by a retry
// with the same key and body, and its first request cannot store its lead;
// a claim whose owner is alive stays in flight, however long.
func TestIdempotencyClaimOfAGoneOwner(t *testing.T) {
	url := storetest.URL(t)
	f := newClaimsFixture(t, url)
	gone, live, retry := mustOpenLive(t, url), mustOpenLive(t, url), mustOpenLive(t, url)

	first := f.mustClaim(t, gone, "k1", store.IdempotencyClaimed)
	if got, want := f.owner(t, "k1"), gone.LivenessOwner(); got != want {
		t.Fatalf("claim owner %d, want the claimant's instance %d", got, want)
	}
	f.mustClaim(t, live, "k2", store.IdempotencyClaimed)
	f.mustClaim(t, retry, "k1", store.IdempotencyInFlight) // its owner is alive
	gone.Close()
	second := f.mustClaim(t, retry, "k1", store.IdempotencyClaimed)
	if second.Claim.ClaimID == first.Claim.ClaimID {
		t.Fatal("takeover kept the claim id")
	}
	if got, want := f.owner(t, "k1"), retry.LivenessOwner(); got != want {
		t.Errorf("taken-over claim's owner %d, want the new claimant's %d", got, want)
	}
	// The first request, were it still running, cannot store its lead.
	if err := f.submit(live, first.Claim); !errors.Is(err, store.ErrClaimLost) {
		t.Fatalf("finishing a taken-over claim: %v", err)
	}
	if n := mustCount(t, f.check, `SELECT count(*) FROM leads`); n != 0 {
		t.Fatalf("a taken-over claim stored %d leads", n)
	}
	if err := f.submit(retry, second.Claim); err != nil {
		t.Fatal(err)
	}
	f.mustClaim(t, live, "k1", store.IdempotencyReplay)

	// A live owner's claim stays in flight, and an owner's own retries
	// see it in flight too.
	for _, db := range []*store.DB{retry, live} {
		f.mustClaim(t, db, "k2", store.IdempotencyInFlight)
	}
	// The retries' own tries took no lock that outlived their statements:
	// the live owner's lock is the only one of its instance.
	if n := mustCount(t, f.check, `SELECT count(*) `+livenessLocks+` AND objid = $2::int8::oid`,
		store.LivenessClass, live.LivenessOwner()); n != 1 {
		t.Errorf("%d advisory locks on the live owner's instance, want its own", n)
	}
	if n := mustCount(t, f.check, `SELECT count(*) `+livenessLocks, store.LivenessClass); n != 2 {
		t.Errorf("%d liveness locks held, want 2 (live and retry)", n)
	}
}

// A process whose liveness connection dies (Postgres restarted, the
// connection cut) loses its claims to retries, records no dead owner on the
// claims it makes before it notices, and takes the lock again under a new
// instance id.
func TestIdempotencyLivenessConnectionLost(t *testing.T) {
	url := storetest.URL(t)
	f := newClaimsFixture(t, url)
	cut, retry := mustOpenLive(t, url), mustOpenLive(t, url)
	old := cut.LivenessOwner()
	f.mustClaim(t, cut, "k1", store.IdempotencyClaimed)
	mustTerminateLiveness(t, f.check, old)
	// Claimed before the process notices: no owner that looks dead.
	f.mustClaim(t, cut, "k2", store.IdempotencyClaimed)
	if got := f.owner(t, "k2"); got == old {
		t.Errorf("claimed with the lost lock's instance %d as owner", got)
	}
	f.mustClaim(t, retry, "k1", store.IdempotencyClaimed)
	f.mustClaim(t, retry, "k2", store.IdempotencyInFlight)

	mustWaitForNewOwner(t, cut, old)
	f.mustClaim(t, cut, "k3", store.IdempotencyClaimed)
	if got, want := f.owner(t, "k3"), cut.LivenessOwner(); got != want {
		t.Errorf("owner %d after the lock was taken again, want %d", got, want)
	}
	f.mustClaim(t, retry, "k3", store.IdempotencyInFlight)
}

// A claim without an owner (an origin without a liveness lock) is taken
// over only after its lease, whatever became of its process.
func TestIdempotencyClaimWithoutOwnerWaitsForTheLease(t *testing.T) {
	ctx := context.Background()
	url := storetest.URL(t)
	f := newClaimsFixture(t, url)
	plain, retry := mustOpen(t, url), mustOpenLive(t, url)
	f.mustClaim(t, plain, "k1", store.IdempotencyClaimed)
	if got := f.owner(t, "k1"); got != 0 {
		t.Fatalf("owner %d, want none", got)
	}
	plain.Close()
	f.mustClaim(t, retry, "k1", store.IdempotencyInFlight)
	if _, err := f.check.Pool.Exec(ctx, `UPDATE idempotency_keys SET created_at = now() - interval '2 hours'`); err != nil {
		t.Fatal(err)
	}
	f.mustClaim(t, retry, "k1", store.IdempotencyClaimed)
}
