package delivery_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/listgate/listgate/origin/api"
	"github.com/listgate/listgate/origin/delivery"
	"github.com/listgate/listgate/origin/leads"
	"github.com/listgate/listgate/origin/store"
	"github.com/listgate/listgate/origin/store/storetest"
	"github.com/listgate/listgate/pkg/apikey"
	"github.com/listgate/listgate/pkg/devdb/devdbtest"
	"github.com/listgate/listgate/pkg/model"
	"github.com/listgate/listgate/pkg/webhook"
)

func TestMain(m *testing.M) { os.Exit(devdbtest.RunTests(m)) }

const internalToken = "0123456789abcdef0123456789abcdef-delivery"

var secretKey = []byte("0123456789abcdef0123456789abcdef-test-key")

// fixture is a site with a leads:write key on a database of the test's
// own, the leads API in front of it, and a webhook receiver.
type fixture struct {
	db     *store.DB
	site   string
	keyID  string
	leads  http.Handler
	recv   *receiver
	server *httptest.Server
}

// receiver records what it is sent; answer, when set, decides its answers.
type receiver struct {
	mu     sync.Mutex
	got    []received
	answer func(n int, r *http.Request) (int, http.Header)
	notify chan struct{}
}

type received struct {
	header http.Header
	body   []byte
	at     time.Time
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	rc.mu.Lock()
	rc.got = append(rc.got, received{header: r.Header.Clone(), body: b, at: time.Now()})
	n := len(rc.got)
	answer := rc.answer
	rc.mu.Unlock()
	status := 200
	if answer != nil {
		var h http.Header
		status, h = answer(n, r)
		for k, v := range h {
			w.Header()[k] = v
		}
	}
	w.WriteHeader(status)
	_, _ = io.WriteString(w, "thanks")
	select {
	case rc.notify <- struct{}{}:
	default:
	}
}

// wait waits until the receiver has got n requests.
func (rc *receiver) wait(tb testing.TB, n int) []received {
	tb.Helper()
	deadline := time.After(30 * time.Second)
	for {
		rc.mu.Lock()
		got := append([]received(nil), rc.got...)
		rc.mu.Unlock()
		if len(got) >= n {
			return got
		}
		select {
		case <-rc.notify:
		case <-deadline:
			tb.Fatalf("the receiver got %d requests, want %d", len(got), n)
		}
	}
}

func newFixture(tb testing.TB) *fixture {
	tb.Helper()
	db := storetest.NewDB(tb)
	ctx := context.Background()
	s, err := db.CreateSite(ctx, "Delivery Realty", model.Professional, "")
	if err != nil {
		tb.Fatal(err)
	}
	k, _, err := db.CreateKey(ctx, store.NewKey{SiteID: s.ID, Name: "forms", Scopes: apikey.LeadsWrite, Source: store.SourceCLI})
	if err != nil {
		tb.Fatal(err)
	}
	f := &fixture{db: db, site: s.ID, keyID: k.ID, recv: &receiver{notify: make(chan struct{}, 1)}}
	log := slog.New(slog.DiscardHandler)
	f.leads = api.New(api.Config{Ready: db.Ping, Unavailable: store.IsUnavailable, Log: log, InternalToken: internalToken,
		Mounts: []api.Mounter{leads.New(leads.Config{DB: db, Log: log})}}).Handler()
	f.server = httptest.NewServer(f.recv)
	tb.Cleanup(f.server.Close)
	return f
}

// worker starts a worker that may send to loopback, stopped at cleanup.
func (f *fixture) worker(tb testing.TB, mod func(*delivery.Config)) {
	tb.Helper()
	cfg := delivery.Config{DB: f.db, SecretKey: secretKey, PublicURL: "https://api.example.com",
		Client:       webhook.NewClient(delivery.ClientOptions("loopback", 5*time.Second)),
		Timeout:      5 * time.Second,
		PollInterval: 50 * time.Millisecond}
	if os.Getenv("DELIVERY_TEST_LOG") != "" {
		cfg.Log = slog.New(slog.NewTextHandler(os.Stderr, nil))
	} else {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if mod != nil {
		mod(&cfg)
	}
	w, err := delivery.New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); w.Run(ctx) }()
	tb.Cleanup(func() { cancel(); <-done })
}

func (f *fixture) endpoint(tb testing.TB, events ...string) store.WebhookEndpoint {
	tb.Helper()
	ep, err := f.db.CreateWebhookEndpoint(context.Background(), f.site, f.server.URL+"/hooks?token=t0k3n", events)
	if err != nil {
		tb.Fatal(err)
	}
	return ep
}

// lead submits a lead through the leads API and returns its id.
func (f *fixture) lead(tb testing.TB, body string) int64 {
	tb.Helper()
	req := httptest.NewRequest("POST", "/v1/leads", strings.NewReader(body))
	req.Header.Set(api.HeaderInternalToken, internalToken)
	req.Header.Set(api.HeaderSite, f.site)
	req.Header.Set(api.HeaderKeyID, f.keyID)
	req.Header.Set(api.HeaderScopes, "leads:write")
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	f.leads.ServeHTTP(rec, req)
	if rec.Code != 201 {
		tb.Fatalf("POST /v1/leads: %d %s", rec.Code, rec.Body)
	}
	var out struct {
		LeadID int64 `json:"lead_id"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		tb.Fatal(err)
	}
	return out.LeadID
}

func (f *fixture) scalar(tb testing.TB, dst any, q string, args ...any) {
	tb.Helper()
	if err := f.db.Pool.QueryRow(context.Background(), q, args...).Scan(dst); err != nil {
		tb.Fatalf("%s: %v", q, err)
	}
}

// A new lead reaches the endpoint once, signed as Standard Webhooks says,
// with the lead in its body; the attempt is logged.
func TestWebhookDelivered(t *testing.T) {
	f := newFixture(t)
	ep := f.endpoint(t, "lead.created")
	f.worker(t, nil)
	id := f.lead(t, `{"name":"Sam Buyer","email":"sam@example.com","phone":"0412 345 678","message":"Is it still available?","type":"inquiry","metadata":{"utm_source":"portal"}}`)
	got := f.recv.wait(t, 1)[0]
	secret := webhook.DeriveSecret(secretKey, ep.ID, 1)
	if err := webhook.Verify(secret, got.header, got.body, time.Minute, time.Now()); err != nil {
		t.Errorf("signature: %v (headers %v)", err, got.header)
	}
	if other := webhook.DeriveSecret(secretKey, ep.ID, 2); webhook.Verify(other, got.header, got.body, time.Minute, time.Now()) == nil {
		t.Error("another secret verifies the message too")
	}
	if !strings.HasPrefix(got.header.Get("webhook-id"), "msg_") || got.header.Get("Content-Type") != "application/json" {
		t.Errorf("headers %v", got.header)
	}
	var p delivery.Payload
	if err := json.Unmarshal(got.body, &p); err != nil {
		t.Fatalf("body %s: %v", got.body, err)
	}
	if p.Type != "lead.created" || p.SiteID != f.site || p.Data.LeadID != id || p.Data.Name != "Sam Buyer" ||
		p.Data.Email == nil || *p.Data.Email != "sam@example.com" || p.Data.Status != "new" ||
		!strings.Contains(string(p.Data.Metadata), "portal") || p.Timestamp.IsZero() ||
		!strings.HasSuffix(p.Data.DashboardURL, "/dashboard/sites/"+f.site+"/leads/"+jsonNumber(id)) {
		t.Errorf("payload %s", got.body)
	}
	// The log has the attempt, and the delivery is done.
	waitState(t, f, id, "delivered")
	log, err := f.db.DeliveryLog(context.Background(), f.site, ep.ID, 10)
	if err != nil || len(log) != 1 || log[0].Status != 200 || log[0].Attempt != 1 || log[0].Response != "thanks" {
		t.Errorf("log %+v %v", log, err)
	}
	// Another site cannot read it.
	if other, _ := f.db.DeliveryLog(context.Background(), "00000000-0000-0000-0000-000000000000", ep.ID, 10); len(other) != 0 {
		t.Errorf("another site reads the log: %+v", other)
	}
}

func jsonNumber(n int64) string { b, _ := json.Marshal(n); return string(b) }

// waitState waits until every delivery of a lead is in state.
func waitState(tb testing.TB, f *fixture, leadID int64, state string) {
	tb.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var n, in int
		f.scalar(tb, &n, `SELECT count(*) FROM deliveries WHERE lead_id = $1`, leadID)
		f.scalar(tb, &in, `SELECT count(*) FROM deliveries WHERE lead_id = $1 AND state = $2`, leadID, state)
		if n > 0 && n == in {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("lead %d: %d of %d deliveries %s", leadID, in, n, state)
		}
		time.Sleep(20 * time.Millisecond) // polling the database: no event to wait on
	}
}

// A failing receiver gets the same message again, same id and body, after
// a backoff or its Retry-After, until it answers 2xx.
func TestRetriesKeepTheMessage(t *testing.T) {
	f := newFixture(t)
	f.recv.answer = func(n int, _ *http.Request) (int, http.Header) {
		switch n {
		case 1:
			return 503, http.Header{"Retry-After": {"1"}}
		case 2:
			return 302, http.Header{"Location": {"http://127.0.0.1:1/elsewhere"}}
		}
		return 200, nil
	}
	ep := f.endpoint(t, "lead.created")
	f.worker(t, nil)
	id := f.lead(t, `{"name":"Ray Retry","email":"ray@example.com","type":"inquiry"}`)
	got := f.recv.wait(t, 3)
	for i := 1; i < len(got); i++ {
		if got[i].header.Get("webhook-id") != got[0].header.Get("webhook-id") || string(got[i].body) != string(got[0].body) {
			t.Errorf("attempt %d differs: %v %s vs %v %s", i+1, got[i].header, got[i].body, got[0].header, got[0].body)
		}
	}
	if d := got[1].at.Sub(got[0].at); d < 900*time.Millisecond {
		t.Errorf("second attempt %v after the first, before Retry-After: 1", d)
	}
	waitState(t, f, id, "delivered")
	log, _ := f.db.DeliveryLog(context.Background(), f.site, ep.ID, 10)
	if len(log) != 3 || log[2].Status != 503 || log[1].Status != 302 || !strings.Contains(log[1].Error, "redirect") || log[0].Status != 200 {
		t.Errorf("log %+v", log)
	}
	var failures int
	f.scalar(t, &failures, `SELECT failures FROM webhook_endpoints WHERE id = $1`, ep.ID)
	if failures != 0 {
		t.Errorf("failures %d after a success", failures)
	}
}

// A duplicate submission and a status change are delivered to the
// endpoints that subscribe to them, each with its own webhook-id.
func TestDuplicateAndUpdatedEvents(t *testing.T) {
	f := newFixture(t)
	f.endpoint(t, "lead.duplicate", "lead.updated")
	f.worker(t, nil)
	body := `{"name":"Dee Dupe","email":"dee@example.com","type":"inquiry","message":"first"}`
	id := f.lead(t, body)
	if again := f.lead(t, strings.Replace(body, "first", "second", 1)); again != id {
		t.Fatalf("the second submission made lead %d, not a duplicate of %d", again, id)
	}
	if err := f.db.SetLeadStatus(context.Background(), f.site, id, "contacted"); err != nil {
		t.Fatal(err)
	}
	// Setting the same status again is no event.
	if err := f.db.SetLeadStatus(context.Background(), f.site, id, "contacted"); err != nil {
		t.Fatal(err)
	}
	got := f.recv.wait(t, 2)
	types := map[string]delivery.Payload{}
	for _, g := range got {
		var p delivery.Payload
		if err := json.Unmarshal(g.body, &p); err != nil {
			t.Fatal(err)
		}
		types[p.Type] = p
	}
	dup, upd := types["lead.duplicate"], types["lead.updated"]
	if dup.Data.Submission == nil || dup.Data.Submission.Message == nil || *dup.Data.Submission.Message != "second" ||
		dup.Data.LeadID != id {
		t.Errorf("lead.duplicate %+v", dup.Data)
	}
	if upd.Data.PreviousStatus != "new" || upd.Data.Status != "contacted" || upd.Data.Submission != nil {
		t.Errorf("lead.updated %+v", upd.Data)
	}
	if got[0].header.Get("webhook-id") == got[1].header.Get("webhook-id") {
		t.Error("two events share a webhook-id")
	}
	// No lead.created was subscribed: nothing else arrives.
	var n int
	f.scalar(t, &n, `SELECT count(*) FROM deliveries`)
	if n != 2 {
		t.Errorf("%d deliveries, want 2", n)
	}
}

// Events for a disabled endpoint are held, not sent; a replay sends them,
// and sends again what was delivered, under the same webhook-ids.
func TestHeldAndReplayed(t *testing.T) {
	f := newFixture(t)
	ep := f.endpoint(t, "lead.created")
	f.worker(t, nil)
	ctx := context.Background()
	first := f.lead(t, `{"name":"Ann One","email":"ann@example.com","type":"inquiry"}`)
	f.recv.wait(t, 1)
	waitState(t, f, first, "delivered")
	if _, err := f.db.SetWebhookEnabled(ctx, f.site, ep.ID, false); err != nil {
		t.Fatal(err)
	}
	second := f.lead(t, `{"name":"Bob Two","email":"bob@example.com","type":"inquiry"}`)
	waitState(t, f, second, "held")
	if _, err := f.db.SetWebhookEnabled(ctx, f.site, ep.ID, true); err != nil {
		t.Fatal(err)
	}
	// Another site cannot replay it.
	if _, err := f.db.ReplayWebhooks(ctx, "00000000-0000-0000-0000-000000000000", ep.ID, time.Now().Add(-time.Hour)); !store.IsNotFound(err) {
		t.Errorf("replay from another site: %v", err)
	}
	n, err := f.db.ReplayWebhooks(ctx, f.site, ep.ID, time.Now().Add(-time.Hour))
	if err != nil || n != 2 {
		t.Fatalf("replay queued %d, %v; want 2 (one held, one delivered)", n, err)
	}
	got := f.recv.wait(t, 3)
	ids := map[string]int{}
	for _, g := range got {
		ids[g.header.Get("webhook-id")]++
	}
	if len(ids) != 2 {
		t.Errorf("webhook-ids %v: want the first lead's twice and the second's once", ids)
	}
	// Send again one delivery.
	var delID int64
	f.scalar(t, &delID, `SELECT id FROM deliveries WHERE lead_id = $1 ORDER BY id LIMIT 1`, second)
	waitState(t, f, second, "delivered")
	if _, err := f.db.ResendDelivery(ctx, f.site, delID); err != nil {
		t.Fatal(err)
	}
	if _, err := f.db.ResendDelivery(ctx, "00000000-0000-0000-0000-000000000000", delID); !store.IsNotFound(err) {
		t.Errorf("resend from another site: %v", err)
	}
	got = f.recv.wait(t, 4)
	if got[3].header.Get("webhook-id") != got[2].header.Get("webhook-id") && got[3].header.Get("webhook-id") != got[1].header.Get("webhook-id") {
		t.Errorf("resent with a new webhook-id %q", got[3].header.Get("webhook-id"))
	}
}

// An endpoint that has failed for more than DisableAfter, at least
// DisableAfterAttempts times in a row, is disabled by its next failure.
func TestFailingEndpointDisabled(t *testing.T) {
	f := newFixture(t)
	f.recv.answer = func(int, *http.Request) (int, http.Header) { return 500, nil }
	ep := f.endpoint(t, "lead.created")
	ctx := context.Background()
	if _, err := f.db.Pool.Exec(ctx, `UPDATE webhook_endpoints SET failures = $2, failing_since = now() - interval '25 hours'
		WHERE id = $1`, ep.ID, store.DisableAfterAttempts-1); err != nil {
		t.Fatal(err)
	}
	f.worker(t, nil)
	id := f.lead(t, `{"name":"Fay Fail","email":"fay@example.com","type":"inquiry"}`)
	f.recv.wait(t, 1)
	deadline := time.Now().Add(30 * time.Second)
	for {
		e, err := f.db.WebhookEndpoint(ctx, f.site, ep.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !e.Enabled {
			if e.DisabledReason != "failing" || e.DisabledAt == nil {
				t.Errorf("disabled as %+v", e)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("still enabled after a failure past the threshold: %+v", e)
		}
		time.Sleep(20 * time.Millisecond) // polling the database
	}
	// Its retry finds it disabled: held, not sent.
	waitState(t, f, id, "held")
}

// A target on a loopback address is refused when the operator has not
// allowed it, at connection time.
func TestPrivateTargetRefused(t *testing.T) {
	f := newFixture(t)
	ep := f.endpoint(t, "lead.created")
	f.worker(t, func(c *delivery.Config) {
		c.Client = webhook.NewClient(delivery.ClientOptions("public", 2*time.Second))
	})
	f.lead(t, `{"name":"Pat Private","email":"pat@example.com","type":"inquiry"}`)
	deadline := time.Now().Add(30 * time.Second)
	for {
		log, err := f.db.DeliveryLog(context.Background(), f.site, ep.ID, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(log) > 0 && log[0].Attempt > 0 {
			if log[0].Status != 0 || log[0].Error == "" {
				t.Errorf("attempt %+v", log[0])
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no attempt logged")
		}
		time.Sleep(20 * time.Millisecond) // polling the database
	}
	f.recv.mu.Lock()
	defer f.recv.mu.Unlock()
	if len(f.recv.got) != 0 {
		t.Errorf("the loopback receiver got %d requests", len(f.recv.got))
	}
}

// Two workers (two origins) share the deliveries: every lead is delivered,
// and no message twice when every attempt succeeds.
func TestTwoWorkersShare(t *testing.T) {
	f := newFixture(t)
	f.endpoint(t, "lead.created")
	f.worker(t, nil)
	f.worker(t, nil)
	const leads = 60
	for i := range leads {
		f.lead(t, `{"name":"Lee `+jsonNumber(int64(i))+`","email":"lee`+jsonNumber(int64(i))+`@example.com","type":"inquiry"}`)
	}
	got := f.recv.wait(t, leads)
	ids := map[string]int{}
	for _, g := range got {
		ids[g.header.Get("webhook-id")]++
	}
	if len(ids) != leads || len(got) != leads {
		t.Errorf("%d requests with %d webhook-ids, want %d each", len(got), len(ids), leads)
	}
}

// A claim whose worker died is taken again when its lease ends, with the
// same webhook-id.
func TestLeaseTakenOver(t *testing.T) {
	f := newFixture(t)
	f.endpoint(t, "lead.created")
	id := f.lead(t, `{"name":"Lou Lease","email":"lou@example.com","type":"inquiry"}`)
	// A worker claims it and dies before sending. The lease runs from the
	// claim's now(), after claimedAt however long the call takes.
	claimedAt := time.Now()
	ds, err := f.db.ClaimDeliveries(context.Background(), true, 10, 2*time.Second, nil)
	if err != nil || len(ds) != 1 {
		t.Fatalf("claimed %d, %v", len(ds), err)
	}
	f.worker(t, nil)
	got := f.recv.wait(t, 1)
	if d := got[0].at.Sub(claimedAt); d < 1500*time.Millisecond {
		t.Errorf("sent %v after the claim, inside its 2 s lease", d)
	}
	if got[0].header.Get("webhook-id") != delivery.MessageID(ds[0].EventID) {
		t.Errorf("webhook-id %q, want %q", got[0].header.Get("webhook-id"), delivery.MessageID(ds[0].EventID))
	}
	waitState(t, f, id, "delivered")
	var attempts int
	f.scalar(t, &attempts, `SELECT attempts FROM deliveries WHERE lead_id = $1`, id)
	if attempts != 2 {
		t.Errorf("attempts %d, want 2 (the dead claim and the delivery)", attempts)
	}
}
