package pairinghttp_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
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
	"github.com/listgate/listgate/pkg/devdb/devdbtest"
	"github.com/listgate/listgate/pkg/model"
	"github.com/listgate/listgate/pkg/syncbuf"
)

func TestMain(m *testing.M) { os.Exit(devdbtest.RunTests(m)) }

const (
	internalToken = "0123456789abcdef0123456789abcdef-pairing"
	publicURL     = "https://api.listgate.example"
	clientIP      = "203.0.113.7"
)

// clock is the service's clock, moved by the test. Safe for concurrent use.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// env is the origin's API with the pairing routes on a database of its
// own, behind the contract check, with one site.
type env struct {
	db    *store.DB
	svc   *pairing.Service
	clock *clock
	h     http.Handler
	site  string
	logs  *syncbuf.Buffer
}

func newEnv(tb testing.TB, tune ...func(*pairing.Config)) *env {
	tb.Helper()
	db := storetest.NewDB(tb)
	site, err := db.CreateSite(context.Background(), "Harbour Realty", model.Professional, "")
	if err != nil {
		tb.Fatal(err)
	}
	logs := &syncbuf.Buffer{}
	log := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	c := &clock{now: time.Now().UTC().Truncate(time.Millisecond)}
	cfg := pairing.Config{Store: db.Pairings(), PublicURL: publicURL + "/", Log: log, Now: c.Now}
	for _, f := range tune {
		f(&cfg)
	}
	svc, err := pairing.New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	ph, err := pairinghttp.New(pairinghttp.Config{Service: svc})
	if err != nil {
		tb.Fatal(err)
	}
	srv := api.New(api.Config{Ready: db.Ping, Unavailable: store.IsUnavailable, Metrics: db.WritePoolMetrics,
		Log: log, InternalToken: internalToken, Mounts: []api.Mounter{ph}})
	e := &env{db: db, svc: svc, clock: c, h: contract.Wrap(tb, srv.Handler()), site: site.ID, logs: logs}
	tb.Cleanup(func() {
		if tb.Failed() {
			tb.Logf("logs:\n%s", logs)
		}
	})
	return e
}

// request is one request as the edge forwards it.
type request struct {
	method, path, body string
	contentType        string            // "" for application/json; "-" for none
	ip                 string            // the client IP the edge vouches for; "" for clientIP
	key                *store.Key        // the identity the edge vouches for; nil for none
	header             map[string]string // more headers
}

type response struct {
	status int
	header http.Header
	body   []byte
}

// json decodes the body as an object.
func (r response) json(tb testing.TB) map[string]any {
	tb.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		tb.Fatalf("body %q: %v", r.body, err)
	}
	return m
}

func (e *env) do(tb testing.TB, rq request) response {
	tb.Helper()
	if rq.method == "" {
		rq.method = "POST"
	}
	req := httptest.NewRequest(rq.method, rq.path, strings.NewReader(rq.body))
	switch rq.contentType {
	case "":
		req.Header.Set("Content-Type", "application/json")
	case "-":
	default:
		req.Header.Set("Content-Type", rq.contentType)
	}
	if rq.ip == "" {
		rq.ip = clientIP
	}
	req.Header.Set(api.HeaderInternalToken, internalToken)
	req.Header.Set(api.HeaderClientIP, rq.ip)
	if rq.key != nil {
		req.Header.Set(api.HeaderSite, rq.key.SiteID)
		req.Header.Set(api.HeaderKeyID, rq.key.ID)
		req.Header.Set(api.HeaderScopes, strings.Join(rq.key.ScopeNames, ","))
	}
	for k, v := range rq.header {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	e.h.ServeHTTP(rec, req)
	return response{status: rec.Code, header: rec.Header(), body: rec.Body.Bytes()}
}

// started is the device endpoint's answer.
type started struct {
	DeviceCode              string `json:"device_code"`
	UserCode                string `json:"user_code"`
	VerificationURI         string `json:"verification_uri"`
	VerificationURIComplete string `json:"verification_uri_complete"`
	ExpiresIn               int    `json:"expires_in"`
	Interval                int    `json:"interval"`
}

// mustStart starts a pairing of homeURL.
func (e *env) mustStart(tb testing.TB, homeURL string) started {
	tb.Helper()
	r := e.do(tb, request{path: "/v1/pairing/device", body: `{"home_url":"` + homeURL + `","site_name":"Agency Realty","plugin_version":"1.0.0"}`})
	if r.status != 200 {
		tb.Fatalf("start: %d %s", r.status, r.body)
	}
	var s started
	if err := json.Unmarshal(r.body, &s); err != nil {
		tb.Fatal(err)
	}
	return s
}

// poll polls with deviceCode and returns the status and the body.
func (e *env) poll(tb testing.TB, deviceCode string) response {
	tb.Helper()
	return e.do(tb, request{path: "/v1/pairing/token",
		body: `{"grant_type":"urn:ietf:params:oauth:grant-type:device_code","device_code":"` + deviceCode + `"}`})
}

// pollError polls and returns the RFC 6749 error, failing unless the
// answer is one.
func (e *env) pollError(tb testing.TB, deviceCode string) string {
	tb.Helper()
	r := e.poll(tb, deviceCode)
	if r.status != 400 || r.header.Get("Cache-Control") != "no-store" {
		tb.Fatalf("poll: %d %v %s", r.status, r.header, r.body)
	}
	m := r.json(tb)
	if d, _ := m["error_description"].(string); d == "" {
		tb.Errorf("no error_description in %s", r.body)
	}
	s, _ := m["error"].(string)
	return s
}

// delivered is the token endpoint's success.
type delivered struct {
	APIKey   string   `json:"api_key"`
	KeyID    string   `json:"key_id"`
	SiteID   string   `json:"site_id"`
	Scopes   []string `json:"scopes"`
	BaseURL  string   `json:"base_url"`
	BeaconID string   `json:"beacon_id"`
}

// mustDeliver polls once the interval has passed and expects the key.
func (e *env) mustDeliver(tb testing.TB, deviceCode string) delivered {
	tb.Helper()
	e.clock.Advance(time.Minute)
	r := e.poll(tb, deviceCode)
	if r.status != 200 {
		tb.Fatalf("poll after approval: %d %s", r.status, r.body)
	}
	if r.header.Get("Cache-Control") != "no-store" {
		tb.Errorf("Cache-Control %q", r.header.Get("Cache-Control"))
	}
	var d delivered
	if err := json.Unmarshal(r.body, &d); err != nil {
		tb.Fatal(err)
	}
	return d
}

// mustPair starts, approves for site and delivers a pairing of homeURL.
func (e *env) mustPair(tb testing.TB, homeURL, site string) delivered {
	tb.Helper()
	s := e.mustStart(tb, homeURL)
	if _, err := e.svc.Approve(context.Background(), s.UserCode, site, pairing.Actor{}); err != nil {
		tb.Fatalf("approve: %v", err)
	}
	return e.mustDeliver(tb, s.DeviceCode)
}

// mustKey returns the stored key of secret.
func (e *env) mustKey(tb testing.TB, secret string) store.Key {
	tb.Helper()
	k, err := e.db.KeyByHash(context.Background(), apikey.Hash(secret))
	if err != nil {
		tb.Fatalf("key by hash: %v", err)
	}
	return k
}

// pairingsByKey returns the site's pairings by their key's id.
func (e *env) pairingsByKey(tb testing.TB, site string) map[string]pairing.Pairing {
	tb.Helper()
	ps, err := e.svc.List(context.Background(), site)
	if err != nil {
		tb.Fatal(err)
	}
	m := map[string]pairing.Pairing{}
	for _, p := range ps {
		m[p.KeyID] = p
	}
	return m
}

// revokedEvents returns the key ids of the key.revoked events written.
func (e *env) revokedEvents(tb testing.TB) map[string]string {
	tb.Helper()
	rows, err := e.db.Pool.Query(context.Background(),
		`SELECT payload->>'key_id', payload->>'key_hash' FROM events WHERE type = 'key.revoked'`)
	if err != nil {
		tb.Fatal(err)
	}
	defer rows.Close()
	m := map[string]string{}
	for rows.Next() {
		var id, hash string
		if err := rows.Scan(&id, &hash); err != nil {
			tb.Fatal(err)
		}
		m[id] = hash
	}
	return m
}
