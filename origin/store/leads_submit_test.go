package store_test

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/listgate/listgate/origin/leads/rules"
	"github.com/listgate/listgate/origin/store"
	"github.com/listgate/listgate/origin/store/storetest"
	"github.com/listgate/listgate/pkg/model"
)

// The answer submit_lead stores with a claim is, byte for byte, the one
// rules.Response encodes: a replay repeats the first answer exactly
// whatever the assignee's address holds.
func TestLeadResponseMatchesRules(t *testing.T) {
	db := storetest.NewDB(t)
	var every strings.Builder
	for r := rune(1); r < 0x80; r++ { // all but NUL, which text cannot hold
		every.WriteRune(r)
	}
	for name, assigned := range map[string]*string{
		"nobody":            nil,
		"plain":             ptr("agent@agency.example"),
		"empty":             ptr(""),
		"every ASCII":       ptr(every.String()),
		"quotes":            ptr(`a"b\c/d`),
		"HTML":              ptr("<a href='x'>&amp;</a>"),
		"line separators":   ptr("a\u2028b\u2029c"),
		"non-ASCII":         ptr("agent@bücher.example ✉ 😀 é"),
		"control and DEL":   ptr("\b\f\n\r\t\x01\x1f\x7f"),
		"unicode non-chars": ptr("\ufeff\ufffd\u00a0"),
	} {
		t.Run(name, func(t *testing.T) {
			for _, dup := range []bool{false, true} {
				want := rules.Response{LeadID: 9007199254740993, Status: "contacted", Duplicate: dup, AssignedTo: assigned}.Encode()
				var got []byte
				if err := db.Pool.QueryRow(t.Context(), `SELECT lead_response($1, $2, $3, $4)`,
					int64(9007199254740993), "contacted", dup, assigned).Scan(&got); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("lead_response = %q, rules.Response = %q", got, want)
				}
			}
		})
	}
}

func ptr(s string) *string { return &s }

// leadsFixture is a site with one agent, and leads to submit to it.
type leadsFixture struct {
	db          *store.DB
	url         string
	site, keyID string
}

func newLeadsFixture(tb testing.TB) *leadsFixture {
	tb.Helper()
	u := storetest.URL(tb)
	db := mustOpen(tb, u)
	f := &leadsFixture{db: db, url: u}
	f.site = mustSite(tb, db, model.Professional).ID
	f.keyID = mustKeyID(tb, db, f.site)
	if _, err := db.Pool.Exec(context.Background(), `INSERT INTO agents (site_id, name, email) VALUES ($1, 'Al', 'al@agency.example')`, f.site); err != nil {
		tb.Fatal(err)
	}
	return f
}

// lead is a submission from email, locking lockKey.
func (f *leadsFixture) lead(email string, lockKey int64) store.NewLead {
	return store.NewLead{SiteID: f.site, KeyID: f.keyID, Type: "inquiry", Priority: "warm", Name: "Ann",
		Email: email, EmailNorm: email, Metadata: []byte("{}"), Payload: []byte(`{"name":"Ann"}`),
		LockKeys: []int64{lockKey}, DuplicateWindow: time.Hour}
}

// counts are the rows a site's submissions left.
type counts struct{ leads, submissions, assignments, events int }

func (f *leadsFixture) counts(tb testing.TB) counts {
	tb.Helper()
	var c counts
	if err := f.db.Pool.QueryRow(context.Background(), `SELECT
		(SELECT count(*) FROM leads WHERE site_id = $1), (SELECT count(*) FROM lead_submissions WHERE site_id = $1),
		(SELECT count(*) FROM lead_assignments WHERE site_id = $1),
		(SELECT count(*) FROM events WHERE site_id = $1 AND type LIKE 'lead.%')`, f.site).
		Scan(&c.leads, &c.submissions, &c.assignments, &c.events); err != nil {
		tb.Fatal(err)
	}
	return c
}

// mustHoldLock takes the advisory lock key on a connection of its own and
// returns its release.
func (f *leadsFixture) mustHoldLock(tb testing.TB, key int64) (release func()) {
	tb.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, f.url)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, key); err != nil {
		tb.Fatal(err)
	}
	var once sync.Once
	release = func() { once.Do(func() { conn.Close(ctx) }) }
	tb.Cleanup(release)
	return release
}

// mustWaitForLockWaiter waits until a backend other than those in skip waits
// for an advisory lock, and returns its pid.
func (f *leadsFixture) mustWaitForLockWaiter(tb testing.TB, skip ...int32) int32 {
	tb.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		var pid int32
		err := f.db.Pool.QueryRow(context.Background(), `SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND NOT granted
			AND database = (SELECT oid FROM pg_database WHERE datname = current_database()) AND pid <> ALL ($1)`, append([]int32{}, skip...)).Scan(&pid)
		if err == nil {
			return pid
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			tb.Fatal(err)
		}
	}
	tb.Fatal("no submission waits for its lock")
	return 0
}

// A call the database drops before it commits (its backend terminated
// while it waits for the submission's lock) is made again, and the
// submission is stored once.
func TestSubmitLeadRetriedWhenDroppedBeforeCommit(t *testing.T) {
	f := newLeadsFixture(t)
	release := f.mustHoldLock(t, 42)
	type result struct {
		out store.LeadOutcome
		err error
	}
	done := make(chan result, 1)
	go func() {
		out, err := f.db.SubmitLead(context.Background(), f.lead("ann@example.com", 42))
		done <- result{out, err}
	}()
	first := f.mustWaitForLockWaiter(t)
	if _, err := f.db.Pool.Exec(context.Background(), `SELECT pg_terminate_backend($1, 5000)`, first); err != nil {
		t.Fatal(err)
	}
	f.mustWaitForLockWaiter(t, first) // the second try, on another connection
	release()
	r := <-done
	if r.err != nil {
		t.Fatalf("submission after a dropped call: %v", r.err)
	}
	if r.out.Repeated || r.out.Duplicate || r.out.Reason != store.AssignedByRoundRobin {
		t.Errorf("outcome %+v, want a new lead the second try stored", r.out)
	}
	if got, want := f.counts(t), (counts{1, 1, 1, 1}); got != want {
		t.Errorf("rows %+v, want %+v", got, want)
	}
}

// dropProxy forwards connections to Postgres, and cuts the first one that
// sends marker once armed, as the answer to that message arrives: the
// server has committed the call, and its client never hears of it.
type dropProxy struct {
	ln      net.Listener
	target  atomic.Pointer[string] // Postgres's address, set before the first connection
	marker  []byte
	armed   atomic.Bool
	dropped atomic.Int32
}

func newDropProxy(tb testing.TB, target string, marker string) *dropProxy {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	p := &dropProxy{ln: ln, marker: []byte(marker)}
	p.target.Store(&target)
	tb.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.forward(c)
		}
	}()
	return p
}

func (p *dropProxy) forward(client net.Conn) {
	server, err := net.Dial("tcp", *p.target.Load())
	if err != nil {
		client.Close()
		return
	}
	defer server.Close()
	defer client.Close()
	var cut atomic.Bool
	go func() {
		buf := make([]byte, 64<<10)
		for {
			n, err := client.Read(buf)
			if n > 0 {
				if bytes.Contains(buf[:n], p.marker) && p.armed.CompareAndSwap(true, false) {
					cut.Store(true)
				}
				if _, err := server.Write(buf[:n]); err != nil {
					return
				}
			}
			if err != nil {
				server.Close()
				return
			}
		}
	}()
	buf := make([]byte, 64<<10)
	for {
		n, err := server.Read(buf)
		if n > 0 && cut.Load() {
			p.dropped.Add(1)
			return
		}
		if n > 0 {
			if _, err := client.Write(buf[:n]); err != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// openThrough opens the fixture's database through p.
func (f *leadsFixture) openThrough(tb testing.TB, p *dropProxy) *store.DB {
	tb.Helper()
	u, err := url.Parse(f.url)
	if err != nil {
		tb.Fatal(err)
	}
	host := u.Host
	p.target.Store(&host)
	u.Host = p.ln.Addr().String()
	db, err := store.Open(context.Background(), u.String(), store.Options{MaxConns: 2})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(db.Close)
	return db
}

// A call whose answer is lost after it committed is made again, and the
// second call finds what the first stored instead of storing it again: a
// new lead, a duplicate, and a lead completing an Idempotency-Key claim.
func TestSubmitLeadRetriedWhenTheAnswerIsLost(t *testing.T) {
	f := newLeadsFixture(t)
	p := newDropProxy(t, "", "cut-after-commit@example.com")
	through := f.openThrough(t, p)
	ctx := context.Background()
	submit := func(nl store.NewLead) store.LeadOutcome {
		t.Helper()
		p.armed.Store(true)
		out, err := through.SubmitLead(ctx, nl)
		if err != nil {
			t.Fatalf("submission whose answer was lost: %v", err)
		}
		if p.dropped.Load() != 1 || p.armed.Load() {
			t.Fatalf("the proxy cut %d answers (armed %v), want 1", p.dropped.Load(), p.armed.Load())
		}
		p.dropped.Store(0)
		if !out.Repeated {
			t.Errorf("outcome %+v, want the first call's, repeated", out)
		}
		return out
	}

	nl := f.lead("cut-after-commit@example.com", 7)
	created := submit(nl)
	if created.Duplicate || created.Reason != store.AssignedByRoundRobin || created.AssignedTo == nil {
		t.Errorf("new lead: %+v", created)
	}
	if got, want := f.counts(t), (counts{1, 1, 1, 1}); got != want {
		t.Fatalf("after a new lead: rows %+v, want %+v", got, want)
	}

	dup := submit(nl)
	if !dup.Duplicate || dup.LeadID != created.LeadID {
		t.Errorf("duplicate: %+v, want lead %d", dup, created.LeadID)
	}
	if got, want := f.counts(t), (counts{1, 2, 1, 2}); got != want {
		t.Fatalf("after a duplicate: rows %+v, want %+v", got, want)
	}

	claim, err := f.db.ClaimIdempotencyKey(ctx, store.IdempotencyRequest{SiteID: f.site, KeyID: f.keyID, Key: "k1",
		BodyHash: []byte("body"), TTL: time.Hour, Lease: time.Minute})
	if err != nil || claim.State != store.IdempotencyClaimed {
		t.Fatalf("claim: %+v %v", claim, err)
	}
	nl = f.lead("cut-after-commit@example.com", 7)
	nl.Type = "appraisal" // not a duplicate of the inquiry
	nl.Idempotency = claim.Claim
	claimed := submit(nl)
	if claimed.Duplicate || claimed.LeadID == created.LeadID {
		t.Errorf("lead with a claim: %+v", claimed)
	}
	replay, err := f.db.ClaimIdempotencyKey(ctx, store.IdempotencyRequest{SiteID: f.site, KeyID: f.keyID, Key: "k1",
		BodyHash: []byte("body"), TTL: time.Hour, Lease: time.Minute})
	if err != nil || replay.State != store.IdempotencyReplay || !bytes.Equal(replay.Body, claimed.Response) {
		t.Errorf("replay %+v %v, want the answer %q", replay, err, claimed.Response)
	}
	if got, want := f.counts(t), (counts{2, 3, 2, 3}); got != want {
		t.Errorf("after a lead with a claim: rows %+v, want %+v", got, want)
	}

	// The key claimed in the lead's transaction.
	nl = f.lead("cut-after-commit@example.com", 7)
	nl.Type = "general"
	nl.Key = f.keyReq("k2", "body", time.Minute)
	keyed := submit(nl)
	if keyed.Duplicate || keyed.Key != store.IdempotencyClaimed {
		t.Errorf("lead with its key: %+v", keyed)
	}
	if res, err := f.db.IdempotencyAnswer(ctx, *nl.Key); err != nil || res.State != store.IdempotencyReplay ||
		!bytes.Equal(res.Body, keyed.Response) {
		t.Errorf("the key holds %+v %v, want the answer %q", res, err, keyed.Response)
	}
	if got, want := f.counts(t), (counts{3, 4, 3, 4}); got != want {
		t.Errorf("after a lead with its key: rows %+v, want %+v", got, want)
	}
}

// A request that takes a claim over while the claim's submission is being
// stored (its lease ran out meanwhile) waits for it, then gets its answer
// to replay: the submission is stored, once.
func TestClaimTakeoverWaitsForTheSubmission(t *testing.T) {
	f := newLeadsFixture(t)
	ctx := context.Background()
	req := store.IdempotencyRequest{SiteID: f.site, KeyID: f.keyID, Key: "k1", BodyHash: []byte("body"),
		TTL: time.Hour, Lease: time.Hour}
	claim, err := f.db.ClaimIdempotencyKey(ctx, req)
	if err != nil || claim.State != store.IdempotencyClaimed {
		t.Fatalf("claim: %+v %v", claim, err)
	}
	release := f.mustHoldLock(t, 42)
	nl := f.lead("ann@example.com", 42)
	nl.Idempotency = claim.Claim
	type result struct {
		out store.LeadOutcome
		err error
	}
	submitted := make(chan result, 1)
	go func() {
		out, err := f.db.SubmitLead(ctx, nl)
		submitted <- result{out, err}
	}()
	f.mustWaitForLockWaiter(t) // holding the claim's row

	// To this request the claim's lease is over.
	req.Lease = time.Millisecond
	takeover := make(chan store.IdempotencyResult, 1)
	go func() {
		res, err := f.db.ClaimIdempotencyKey(ctx, req)
		if err != nil {
			t.Error(err)
		}
		takeover <- res
	}()
	select {
	case res := <-takeover:
		t.Fatalf("took the claim over while its submission was being stored: %+v", res)
	case <-time.After(300 * time.Millisecond):
	}
	release()
	r := <-submitted
	if r.err != nil {
		t.Fatalf("submission: %v", r.err)
	}
	res := <-takeover
	if res.State != store.IdempotencyReplay || !bytes.Equal(res.Body, r.out.Response) {
		t.Errorf("takeover got %+v, want the replay of %q", res, r.out.Response)
	}
	if got, want := f.counts(t), (counts{1, 1, 1, 1}); got != want {
		t.Errorf("rows %+v, want %+v", got, want)
	}
}

// A claim lost before the call, or a site deleted, stores nothing.
func TestSubmitLeadStoresNothingWithoutItsClaimOrSite(t *testing.T) {
	f := newLeadsFixture(t)
	ctx := context.Background()
	req := store.IdempotencyRequest{SiteID: f.site, KeyID: f.keyID, Key: "k1", BodyHash: []byte("body"),
		TTL: time.Hour, Lease: time.Hour}
	claim, err := f.db.ClaimIdempotencyKey(ctx, req)
	if err != nil || claim.State != store.IdempotencyClaimed {
		t.Fatalf("claim: %+v %v", claim, err)
	}
	if err := f.db.ReleaseIdempotencyKey(ctx, *claim.Claim); err != nil {
		t.Fatal(err)
	}
	nl := f.lead("ann@example.com", 1)
	nl.Idempotency = claim.Claim
	if _, err := f.db.SubmitLead(ctx, nl); !errors.Is(err, store.ErrClaimLost) {
		t.Errorf("released claim: %v, want ErrClaimLost", err)
	}
	if got := f.counts(t); got != (counts{}) {
		t.Errorf("a lost claim stored %+v", got)
	}

	claim, err = f.db.ClaimIdempotencyKey(ctx, req)
	if err != nil || claim.State != store.IdempotencyClaimed {
		t.Fatalf("claim: %+v %v", claim, err)
	}
	if _, err := f.db.Pool.Exec(ctx, `DELETE FROM sites WHERE id = $1`, f.site); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]*store.IdempotencyClaim{"without a claim": nil, "with a claim": claim.Claim} {
		nl.Idempotency = c
		if _, err := f.db.SubmitLead(ctx, nl); !errors.Is(err, store.ErrSiteGone) {
			t.Errorf("%s, site deleted: %v, want ErrSiteGone", name, err)
		}
	}
	nl.Idempotency, nl.Key = nil, &req
	if _, err := f.db.SubmitLead(ctx, nl); !errors.Is(err, store.ErrSiteGone) {
		t.Errorf("with its key, site deleted: %v, want ErrSiteGone", err)
	}
}

// keyReq is an Idempotency-Key of the fixture's API key.
func (f *leadsFixture) keyReq(key, body string, lease time.Duration) *store.IdempotencyRequest {
	return &store.IdempotencyRequest{SiteID: f.site, KeyID: f.keyID, Key: key, BodyHash: []byte(body),
		TTL: time.Hour, Lease: lease}
}

func (f *leadsFixture) mustSubmit(tb testing.TB, nl store.NewLead) store.LeadOutcome {
	tb.Helper()
	out, err := f.db.SubmitLead(context.Background(), nl)
	if err != nil {
		tb.Fatalf("submit: %v", err)
	}
	return out
}

// An Idempotency-Key claimed in the lead's transaction: stored with the
// lead's answer, replayed for the same body, refused for another, left to
// a live claim in flight until its lease is over, replaced once expired.
func TestSubmitLeadClaimsItsKey(t *testing.T) {
	f := newLeadsFixture(t)
	ctx := context.Background()
	nl := f.lead("ann@example.com", 1)
	nl.Key = f.keyReq("k1", "body", time.Hour)
	first := f.mustSubmit(t, nl)
	if first.Key != store.IdempotencyClaimed || first.Duplicate || first.LeadID == 0 {
		t.Fatalf("first: %+v", first)
	}
	var state string
	var code int
	var body []byte
	if err := f.db.Pool.QueryRow(ctx, `SELECT state, response_code, response_body FROM idempotency_keys
		WHERE site_id = $1 AND idem_key = 'k1'`, f.site).Scan(&state, &code, &body); err != nil {
		t.Fatal(err)
	}
	if state != "done" || code != rules.ResponseStatus || !bytes.Equal(body, first.Response) {
		t.Errorf("key row %s %d %q, want done %d %q", state, code, body, rules.ResponseStatus, first.Response)
	}

	again := f.mustSubmit(t, nl)
	if again.Key != store.IdempotencyReplay || again.ResponseStatus != rules.ResponseStatus ||
		!bytes.Equal(again.Response, first.Response) {
		t.Errorf("same key and body: %+v, want the replay of %q", again, first.Response)
	}
	other := nl
	other.Key = f.keyReq("k1", "other body", time.Hour)
	if out := f.mustSubmit(t, other); out.Key != store.IdempotencyMismatch {
		t.Errorf("same key, other body: %+v", out)
	}
	if got, want := f.counts(t), (counts{1, 1, 1, 1}); got != want {
		t.Fatalf("after a replay and a mismatch: rows %+v, want %+v", got, want)
	}

	// A request that claimed k2 on its own, alive (no owner: within the
	// lease), holds it.
	claim, err := f.db.ClaimIdempotencyKey(ctx, *f.keyReq("k2", "body", time.Hour))
	if err != nil || claim.State != store.IdempotencyClaimed {
		t.Fatalf("claim: %+v %v", claim, err)
	}
	nl = f.lead("bob@example.com", 2)
	nl.Key = f.keyReq("k2", "body", time.Hour)
	if out := f.mustSubmit(t, nl); out.Key != store.IdempotencyInFlight {
		t.Errorf("key claimed in flight: %+v", out)
	}
	// Its lease over, the claim is abandoned.
	if _, err := f.db.Pool.Exec(ctx, `UPDATE idempotency_keys SET created_at = now() - interval '2 hours'
		WHERE site_id = $1 AND idem_key = 'k2'`, f.site); err != nil {
		t.Fatal(err)
	}
	if out := f.mustSubmit(t, nl); out.Key != store.IdempotencyClaimed || out.Duplicate {
		t.Errorf("abandoned claim: %+v", out)
	}
	if _, err := f.db.SubmitLead(ctx, store.NewLead{SiteID: f.site, KeyID: f.keyID, Type: "general", Priority: "warm",
		Name: "Ann", Email: "a@example.com", EmailNorm: "a@example.com", Metadata: []byte("{}"), Payload: []byte("{}"),
		DuplicateWindow: time.Hour, Idempotency: claim.Claim}); !errors.Is(err, store.ErrClaimLost) {
		t.Errorf("the claim taken over: %v, want ErrClaimLost", err)
	}

	// Expired: a new key, whatever the body.
	if _, err := f.db.Pool.Exec(ctx, `UPDATE idempotency_keys SET expires_at = now() - interval '1 second'
		WHERE site_id = $1 AND idem_key = 'k1'`, f.site); err != nil {
		t.Fatal(err)
	}
	other = f.lead("cy@example.com", 3)
	other.Key = f.keyReq("k1", "other body", time.Hour)
	if out := f.mustSubmit(t, other); out.Key != store.IdempotencyClaimed {
		t.Errorf("expired key: %+v", out)
	}
	if got, want := f.counts(t), (counts{3, 3, 3, 3}); got != want {
		t.Errorf("rows %+v, want %+v", got, want)
	}
}

// A key claimed in the lead's transaction is never seen in flight: a
// request with the same key, claiming on its own meanwhile, waits for the
// transaction, then replays its answer. A submission dropped before its
// commit leaves no claim behind, and its retry stores it once.
func TestSubmitLeadKeyIsNeverInFlight(t *testing.T) {
	f := newLeadsFixture(t)
	ctx := context.Background()
	release := f.mustHoldLock(t, 42)
	nl := f.lead("ann@example.com", 42)
	nl.Key = f.keyReq("k1", "body", time.Hour)
	type result struct {
		out store.LeadOutcome
		err error
	}
	submitted := make(chan result, 1)
	go func() {
		out, err := f.db.SubmitLead(ctx, nl)
		submitted <- result{out, err}
	}()
	first := f.mustWaitForLockWaiter(t) // the key claimed, not committed
	if res, err := f.db.IdempotencyAnswer(ctx, *nl.Key); err != nil || res.State != 0 {
		t.Fatalf("the key seen while its submission runs: %+v %v", res, err)
	}
	// Dropped before its commit: nothing stays, and the retry waits again.
	if _, err := f.db.Pool.Exec(ctx, `SELECT pg_terminate_backend($1, 5000)`, first); err != nil {
		t.Fatal(err)
	}
	f.mustWaitForLockWaiter(t, first)
	claimed := make(chan store.IdempotencyResult, 1)
	go func() {
		res, err := f.db.ClaimIdempotencyKey(ctx, *nl.Key)
		if err != nil {
			t.Error(err)
		}
		claimed <- res
	}()
	select {
	case res := <-claimed:
		t.Fatalf("claimed on its own while the submission runs: %+v", res)
	case <-time.After(300 * time.Millisecond):
	}
	release()
	r := <-submitted
	if r.err != nil || r.out.Key != store.IdempotencyClaimed || r.out.Repeated {
		t.Fatalf("submission: %+v %v", r.out, r.err)
	}
	if res := <-claimed; res.State != store.IdempotencyReplay || !bytes.Equal(res.Body, r.out.Response) {
		t.Errorf("the other request got %+v, want the replay of %q", res, r.out.Response)
	}
	if got, want := f.counts(t), (counts{1, 1, 1, 1}); got != want {
		t.Errorf("rows %+v, want %+v", got, want)
	}
}
