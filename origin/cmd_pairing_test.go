package main

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	json "github.com/goccy/go-json"

	"github.com/listgate/listgate/origin/api"
	"github.com/listgate/listgate/origin/openapi/contract"
	"github.com/listgate/listgate/origin/store"
	"github.com/listgate/listgate/origin/store/storetest"
	"github.com/listgate/listgate/pairing"
	"github.com/listgate/listgate/pairing/pairinghttp"
	"github.com/listgate/listgate/pkg/apikey"
)

// pairingOrigin is the origin's API with the pairing routes, on the CLI's
// database, behind the contract check, with a clock the test moves.
type pairingOrigin struct {
	h   http.Handler
	db  *store.DB
	mu  sync.Mutex
	now time.Time
}

func newPairingOrigin(tb testing.TB, dbURL string) *pairingOrigin {
	tb.Helper()
	db, err := store.Open(context.Background(), dbURL, store.Options{MaxConns: 4})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(db.Close)
	o := &pairingOrigin{db: db, now: time.Now()}
	svc, err := pairing.New(pairing.Config{Store: db.Pairings(), PublicURL: "https://api.listgate.example",
		Log: slog.New(slog.DiscardHandler), Now: o.clock})
	if err != nil {
		tb.Fatal(err)
	}
	ph, err := pairinghttp.New(pairinghttp.Config{Service: svc})
	if err != nil {
		tb.Fatal(err)
	}
	srv := api.New(api.Config{Ready: db.Ping, Unavailable: store.IsUnavailable, Metrics: db.WritePoolMetrics,
		Log: slog.New(slog.DiscardHandler), InternalToken: testToken, Mounts: []api.Mounter{ph}})
	o.h = contract.Wrap(tb, srv.Handler())
	return o
}

func (o *pairingOrigin) clock() time.Time {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.now
}

func (o *pairingOrigin) advance(d time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.now = o.now.Add(d)
}

// post sends body to path as the edge forwards a public route, and decodes
// the answer.
func (o *pairingOrigin) post(tb testing.TB, path, body string) (int, http.Header, map[string]any) {
	tb.Helper()
	req := httptest.NewRequest("POST", path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	o.h.ServeHTTP(rec, req)
	var m map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil {
		tb.Fatalf("POST %s: %d %q: %v", path, rec.Code, rec.Body, err)
	}
	return rec.Code, rec.Header(), m
}

func (o *pairingOrigin) poll(tb testing.TB, deviceCode string) (int, http.Header, map[string]any) {
	tb.Helper()
	return o.post(tb, "/v1/pairing/token",
		`{"grant_type":"urn:ietf:params:oauth:grant-type:device_code","device_code":"`+deviceCode+`"}`)
}

// start starts a pairing and returns its device and user codes.
func (o *pairingOrigin) start(tb testing.TB, homeURL string) (device, user string) {
	tb.Helper()
	status, _, m := o.post(tb, "/v1/pairing/device", `{"home_url":"`+homeURL+`","site_name":"Agency Realty"}`)
	if status != 200 {
		tb.Fatalf("start: %d %v", status, m)
	}
	return m["device_code"].(string), m["user_code"].(string)
}

// The flow of API.md through the origin's handler, approved by
// `origin pairing approve`: pending, slow_down, approval, the key exactly
// once, then expired_token (RFC 8628 §3.5: the session has concluded);
// the key is stored as documented.
func TestPairingFlowApprovedByTheCLI(t *testing.T) {
	url := storetest.URL(t)
	c := newCLI(t, url)
	var site struct{ ID string }
	c.mustJSON(&site, "sites", "create", "--name", "Harbour Realty", "--plan", "starter", "--json")
	o := newPairingOrigin(t, url)

	device, user := o.start(t, "https://agency.example/")
	steps := []struct {
		name  string
		wait  time.Duration
		want  string
		after func(t *testing.T)
	}{
		{"first poll", 0, "authorization_pending", nil},
		{"polled too fast", time.Second, "slow_down", func(t *testing.T) {
			// The operator types the code in lower case without the dash.
			code, out, errOut := c.run("pairing", "approve", "--user-code", strings.ToLower(strings.ReplaceAll(user, "-", "")),
				"--site", site.ID)
			if code != 0 || !strings.Contains(out, "https://agency.example") || !strings.Contains(out, site.ID) {
				t.Fatalf("approve: exit %d %q %q", code, out, errOut)
			}
			if code, _, errOut := c.run("pairing", "approve", "--user-code", user, "--site", site.ID); code != 1 ||
				!strings.Contains(errOut, "already") {
				t.Fatalf("second approve: exit %d %q", code, errOut)
			}
		}},
		{"within the grown interval", 9 * time.Second, "slow_down", nil},
	}
	for _, st := range steps {
		o.advance(st.wait)
		status, hdr, m := o.poll(t, device)
		if status != 400 || m["error"] != st.want || hdr.Get("Cache-Control") != "no-store" {
			t.Fatalf("%s: %d %v, want 400 %s", st.name, status, m, st.want)
		}
		if st.after != nil {
			st.after(t)
		}
	}

	o.advance(15 * time.Second)
	status, hdr, m := o.poll(t, device)
	if status != 200 || hdr.Get("Cache-Control") != "no-store" {
		t.Fatalf("poll after approval: %d %v %v", status, hdr, m)
	}
	secret, _ := m["api_key"].(string)
	keyID, _ := m["key_id"].(string)
	if apikey.Check(secret) != nil || m["site_id"] != site.ID || m["base_url"] != "https://api.listgate.example/v1" {
		t.Fatalf("delivered %v", m)
	}
	for range 2 {
		o.advance(time.Minute)
		if status, _, m := o.poll(t, device); status != 400 || m["error"] != "expired_token" {
			t.Fatalf("poll after delivery: %d %v", status, m)
		}
	}

	k, err := o.db.KeyByHash(context.Background(), apikey.Hash(secret))
	if err != nil {
		t.Fatal(err)
	}
	if k.ID != keyID || k.SiteID != site.ID || k.Name != "WordPress: agency.example" || k.Source != "pairing" ||
		strings.Join(k.ScopeNames, ",") != "listings:read,agents:read,stats:read" || k.RevokedAt != nil {
		t.Fatalf("stored key %+v", k)
	}

	var list struct {
		Pairings []struct {
			ID        string `json:"id"`
			Status    string `json:"status"`
			KeyID     string `json:"key_id"`
			HomeURL   string `json:"home_url"`
			DecidedBy string `json:"decided_by"`
		} `json:"pairings"`
	}
	code, out, _ := c.run("pairing", "list", "--site", site.ID, "--json")
	if code != 0 {
		t.Fatalf("list: exit %d", code)
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("list printed %q: %v", out, err)
	}
	if len(list.Pairings) != 1 || list.Pairings[0].Status != "delivered" || list.Pairings[0].KeyID != k.ID ||
		list.Pairings[0].HomeURL != "https://agency.example" || list.Pairings[0].DecidedBy != "operator" {
		t.Fatalf("list %+v", list)
	}
	if strings.Contains(out, secret) || strings.Contains(out, device) || strings.Contains(out, user) {
		t.Error("list shows a secret")
	}
	if code, out, _ := c.run("pairing", "list", "--site", site.ID); code != 0 ||
		!strings.Contains(out, "https://agency.example") || !strings.Contains(out, "delivered") {
		t.Fatalf("text list: exit %d %q", code, out)
	}

	// The operator disconnects it: the key is revoked.
	if code, out, errOut := c.run("pairing", "disconnect", "--site", site.ID, list.Pairings[0].ID); code != 0 ||
		!strings.Contains(out, k.ID) {
		t.Fatalf("disconnect: exit %d %q %q", code, out, errOut)
	}
	if k, _ := o.db.KeyByHash(context.Background(), apikey.Hash(secret)); k.RevokedAt == nil {
		t.Fatal("key works after disconnect")
	}
	if code, _, errOut := c.run("pairing", "disconnect", "--site", site.ID, list.Pairings[0].ID); code != 1 ||
		!strings.Contains(errOut, "not connected") {
		t.Fatalf("second disconnect: exit %d %q", code, errOut)
	}
}

func TestPairingCommands(t *testing.T) {
	url := storetest.URL(t)
	c := newCLI(t, url)
	var site struct{ ID string }
	c.mustJSON(&site, "sites", "create", "--name", "Harbour Realty", "--plan", "starter", "--json")
	o := newPairingOrigin(t, url)
	device, user := o.start(t, "https://denied.example")

	var denied struct {
		ID, Status string
		HomeURL    string `json:"home_url"`
	}
	c.mustJSON(&denied, "pairing", "deny", "--user-code", " "+strings.ToLower(user)+" ", "--json")
	if denied.Status != "denied" || denied.HomeURL != "https://denied.example" || denied.ID == "" {
		t.Fatalf("deny printed %+v", denied)
	}
	if status, _, m := o.poll(t, device); status != 400 || m["error"] != "access_denied" {
		t.Fatalf("poll after deny: %d %v", status, m)
	}
	_, live := o.start(t, "https://live.example")

	other := "6f1c2a8e-0000-4000-8000-000000000000"
	for name, tc := range map[string]struct {
		args []string
		code int
		want string
	}{
		"approve without code":   {[]string{"pairing", "approve", "--site", site.ID}, 2, "--user-code"},
		"approve without site":   {[]string{"pairing", "approve", "--user-code", live}, 2, "--site"},
		"malformed code":         {[]string{"pairing", "approve", "--user-code", "1234-5678", "--site", site.ID}, 2, "XXXX-XXXX"},
		"unknown code":           {[]string{"pairing", "deny", "--user-code", "ZZZZ-ZZZZ"}, 1, "no pairing has this user code"},
		"denied code":            {[]string{"pairing", "approve", "--user-code", user, "--site", site.ID}, 1, "already"},
		"unknown site":           {[]string{"pairing", "approve", "--user-code", live, "--site", other}, 1, "site not found"},
		"list unknown site":      {[]string{"pairing", "list", "--site", other}, 1, "site not found"},
		"list without site":      {[]string{"pairing", "list"}, 2, "--site"},
		"disconnect unknown":     {[]string{"pairing", "disconnect", "--site", site.ID, other}, 1, "no such pairing"},
		"disconnect without arg": {[]string{"pairing", "disconnect", "--site", site.ID}, 2, "takes 1"},
		"unknown subcommand":     {[]string{"pairing", "revoke"}, 2, "unknown command"},
	} {
		t.Run(name, func(t *testing.T) {
			code, _, errOut := c.run(tc.args...)
			if code != tc.code || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, stderr %q; want exit %d mentioning %q", code, errOut, tc.code, tc.want)
			}
		})
	}
	var list struct{ Pairings []any }
	c.mustJSON(&list, "pairing", "list", "--site", site.ID, "--json")
	if len(list.Pairings) != 0 {
		t.Errorf("a denied pairing (no site) is listed: %v", list.Pairings)
	}
	// The live code survived the attempts above (none shared its first group
	// five times) and the unknown site.
	if code, _, errOut := c.run("pairing", "approve", "--user-code", live, "--site", site.ID); code != 0 {
		t.Fatalf("approve the live code: exit %d %q", code, errOut)
	}
}

// `origin serve` mounts the pairing routes, with verification_uri under
// the configured public URL.
func TestServeMountsPairing(t *testing.T) {
	cfg := testServeConfig(t)
	cfg.PublicURL = "https://api.agency-host.example"
	addr, stop := serveInProcess(t, cfg, io.Discard)
	defer func() {
		if err := stop(); err != nil {
			t.Errorf("serve: %v", err)
		}
	}()
	resp, err := http.Post("http://"+addr+"/v1/pairing/device", "application/json",
		strings.NewReader(`{"home_url":"https://agency.example"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil || resp.StatusCode != 200 ||
		m["verification_uri"] != "https://api.agency-host.example/dashboard/pairing" {
		t.Fatalf("POST /v1/pairing/device: %d %v %v", resp.StatusCode, m, err)
	}
	for _, r := range []struct{ method, path string }{{"DELETE", "/v1/pairing"}, {"POST", "/v1/pairing/token"}} {
		req, _ := http.NewRequest(r.method, "http://"+addr+r.path, strings.NewReader("{}"))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 401 && resp.StatusCode != 400 {
			t.Errorf("%s %s = %d", r.method, r.path, resp.StatusCode)
		}
	}
}
