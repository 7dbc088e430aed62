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
