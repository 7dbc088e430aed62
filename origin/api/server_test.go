package api

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	json "github.com/goccy/go-json"

	"github.com/listgate/listgate/origin/store"
	"github.com/listgate/listgate/origin/store/storetest"
	"github.com/listgate/listgate/pkg/apierror"
	"github.com/listgate/listgate/pkg/apikey"
	"github.com/listgate/listgate/pkg/devdb/devdbtest"
)

func TestMain(m *testing.M) { os.Exit(devdbtest.RunTests(m)) }

const token = "0123456789abcdef0123456789abcdef-test"

// newTestServer returns a server on a fresh migrated database, and its log.
func newTestServer(tb testing.TB) (*Server, *bytes.Buffer) {
	tb.Helper()
	s, _, logs := newTestServerDB(tb)
	return s, logs
}

// newTestServerDB is newTestServer that returns the database too, built as
// the origin builds it.
func newTestServerDB(tb testing.TB) (*Server, *store.DB, *bytes.Buffer) {
	tb.Helper()
	var logs bytes.Buffer
	db := storetest.NewDB(tb)
	s := New(Config{Ready: db.Ping, Unavailable: store.IsUnavailable, Metrics: db.WritePoolMetrics,
		InternalToken: token, Log: slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	return s, db, &logs
}

type envelope struct {
	Error struct {
		Code      string            `json:"code"`
		Message   string            `json:"message"`
		Details   map[string]string `json:"details"`
		RequestID string            `json:"request_id"`
	} `json:"error"`
}

func do(tb testing.TB, h http.Handler, method, path string, hdr map[string]string) (*http.Response, []byte) {
	tb.Helper()
	req := httptest.NewRequest(method, path, nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	resp := rec.Result()
	body, _ := io.ReadAll(resp.Body)
	return resp, body
}

func TestErrorsAreEnvelopes(t *testing.T) {
	s, _ := newTestServer(t)
	for name, tc := range map[string]struct {
		method, path string
		status       int
		code, allow  string
	}{
		"unknown path":  {"GET", "/v1/nothing", 404, "NOT_FOUND", ""},
		"root":          {"GET", "/", 404, "NOT_FOUND", ""},
		"wrong method":  {"DELETE", "/healthz", 405, "METHOD_NOT_ALLOWED", "GET, HEAD"},
		"post to ready": {"POST", "/readyz", 405, "METHOD_NOT_ALLOWED", "GET, HEAD"},
	} {
		t.Run(name, func(t *testing.T) {
			resp, body := do(t, s.Handler(), tc.method, tc.path, nil)
			var env envelope
			if err := json.Unmarshal(body, &env); err != nil {
				t.Fatalf("body %q: %v", body, err)
			}
			if resp.StatusCode != tc.status || env.Error.Code != tc.code || resp.Header.Get("Allow") != tc.allow {
				t.Errorf("%d %s Allow=%q; want %d %s %q", resp.StatusCode, env.Error.Code, resp.Header.Get("Allow"), tc.status, tc.code, tc.allow)
			}
			if env.Error.RequestID == "" || env.Error.RequestID != resp.Header.Get("X-Request-Id") {
				t.Errorf("request id %q in body, %q in header", env.Error.RequestID, resp.Header.Get("X-Request-Id"))
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/json; charset=utf-8" {
				t.Errorf("Content-Type %q", ct)
			}
		})
	}
	if resp, _ := do(t, s.Handler(), "HEAD", "/healthz", nil); resp.StatusCode != 200 {
		t.Errorf("HEAD /healthz = %d", resp.StatusCode)
	}
}

func TestRequestID(t *testing.T) {
	s, logs := newTestServer(t)
	resp, _ := do(t, s.Handler(), "GET", "/healthz", map[string]string{"X-Request-Id": "edge-abc.123"})
	if got := resp.Header.Get("X-Request-Id"); got != "edge-abc.123" {
		t.Errorf("kept request id %q", got)
	}
	for _, bad := range []string{"has space", strings.Repeat("x", 65), "new\nline", "<script>"} {
		resp, _ := do(t, s.Handler(), "GET", "/healthz", map[string]string{"X-Request-Id": bad})
		if got := resp.Header.Get("X-Request-Id"); got == bad || len(got) != 24 {
			t.Errorf("request id %q replaced by %q", bad, got)
		}
	}
	if !strings.Contains(logs.String(), `"request_id":"edge-abc.123"`) {
		t.Errorf("request id not in the log: %s", logs)
	}
}

func TestIdentityNeedsInternalToken(t *testing.T) {
	s, _ := newTestServer(t)
	var got *Identity
	var sawHeaders []string
	s.handle("GET /v1/whoami", func(w http.ResponseWriter, r *http.Request) error {
		got = nil
		if id, ok := IdentityFrom(r.Context()); ok {
			got = &id
		}
		sawHeaders = nil
		for _, h := range []string{HeaderSite, HeaderKeyID, HeaderScopes, HeaderInternalToken} {
			if r.Header.Get(h) != "" {
				sawHeaders = append(sawHeaders, h)
			}
		}
		return nil
	})
	forged := map[string]string{HeaderSite: "site-1", HeaderKeyID: "key-1", HeaderScopes: "leads:write"}
	for name, tc := range map[string]struct {
		token   string
		trusted bool
	}{
		"no token":    {"", false},
		"wrong token": {strings.Repeat("x", len(token)), false},
		"prefix":      {token[:10], false},
		"good token":  {token, true},
	} {
		t.Run(name, func(t *testing.T) {
			hdr := map[string]string{HeaderInternalToken: tc.token}
			for k, v := range forged {
				hdr[k] = v
			}
			do(t, s.Handler(), "GET", "/v1/whoami", hdr)
			if len(sawHeaders) != 0 {
				t.Errorf("handler saw identity headers %v", sawHeaders)
			}
			if tc.trusted != (got != nil) {
				t.Fatalf("identity %+v, want trusted=%v", got, tc.trusted)
			}
			if got != nil && (got.SiteID != "site-1" || got.KeyID != "key-1" || got.Scopes != apikey.LeadsWrite) {
				t.Errorf("identity %+v", *got)
			}
		})
	}
}

func TestPanicBecomes500(t *testing.T) {
	s, logs := newTestServer(t)
	s.handle("GET /v1/boom", func(w http.ResponseWriter, r *http.Request) error { panic("secret detail") })
	resp, body := do(t, s.Handler(), "GET", "/v1/boom", nil)
	if resp.StatusCode != 500 || strings.Contains(string(body), "secret detail") || !strings.Contains(string(body), "INTERNAL_ERROR") {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	if !strings.Contains(logs.String(), "secret detail") {
		t.Error("panic not logged")
	}
}

func TestReadyzFollowsDatabase(t *testing.T) {
	s, db, _ := newTestServerDB(t)
	if resp, body := do(t, s.Handler(), "GET", "/readyz", nil); resp.StatusCode != 200 {
		t.Fatalf("readyz %d %s", resp.StatusCode, body)
	}
	db.Close()
	resp, body := do(t, s.Handler(), "GET", "/readyz", nil)
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" || !strings.Contains(string(body), "SERVICE_UNAVAILABLE") {
		t.Fatalf("readyz with the database closed: %d %s", resp.StatusCode, body)
	}
}

func TestMetricsCountRequests(t *testing.T) {
	s, _ := newTestServer(t)
	do(t, s.Handler(), "GET", "/v1/missing-for-metrics", nil)
	// A request from the edge is counted by its route too (identify hands
	// the mux a copy of the request).
	do(t, s.Handler(), "HEAD", "/healthz", map[string]string{HeaderInternalToken: token})
	_, body := do(t, s.Handler(), "GET", "/metrics", map[string]string{HeaderInternalToken: token})
	for _, want := range []string{`listgate_origin_http_requests_total{route="unmatched",method="GET",status="404"}`,
		`listgate_origin_http_requests_total{route="/healthz",method="HEAD",status="200"}`, "go_goroutines", "listgate_origin_db_pool_max_connections"} {
		if !bytes.Contains(body, []byte(want)) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

// /metrics and /debug/pprof/ answer operators alone: the internal token
// (its header, or as a bearer token as Prometheus sends it) or a loopback
// peer; anyone else gets 404 as for a path that does not exist.
func TestMetricsForOperatorsOnly(t *testing.T) {
	s, _ := newTestServer(t)
	for name, tc := range map[string]struct {
		remote string
		hdr    map[string]string
		want   int
	}{
		"internal token":       {"192.0.2.7:4000", map[string]string{HeaderInternalToken: token}, 200},
		"bearer token":         {"192.0.2.7:4000", map[string]string{"Authorization": "Bearer " + token}, 200},
		"loopback":             {"127.0.0.1:4000", nil, 200},
		"loopback IPv6":        {"[::1]:4000", nil, 200},
		"nothing":              {"192.0.2.7:4000", nil, 404},
		"wrong token":          {"192.0.2.7:4000", map[string]string{HeaderInternalToken: strings.Repeat("x", 40)}, 404},
		"wrong bearer":         {"192.0.2.7:4000", map[string]string{"Authorization": "Bearer " + strings.Repeat("x", 40)}, 404},
		"token as basic":       {"192.0.2.7:4000", map[string]string{"Authorization": "Basic " + token}, 404},
		"forwarded loopback":   {"192.0.2.7:4000", map[string]string{"X-Forwarded-For": "127.0.0.1"}, 404},
		"client ip claim only": {"192.0.2.7:4000", map[string]string{HeaderClientIP: "127.0.0.1"}, 404},
	} {
		for _, path := range []string{"/metrics", "/debug/pprof/", "/debug/pprof/cmdline"} {
			req := httptest.NewRequest("GET", path, nil)
			req.RemoteAddr = tc.remote
			for k, v := range tc.hdr {
				req.Header.Set(k, v)
			}
			rec := httptest.NewRecorder()
			s.Handler().ServeHTTP(rec, req)
			if rec.Code != tc.want {
				t.Errorf("%s: GET %s = %d, want %d", name, path, rec.Code, tc.want)
			}
			if tc.want == 404 && !strings.Contains(rec.Body.String(), `"NOT_FOUND"`) {
				t.Errorf("%s: GET %s: %s", name, path, rec.Body)
			}
		}
	}
}

// Errors Config.Unavailable recognises are 503 with Retry-After; others
// stay 500, and an *apierror.Error is answered as it says. Without Ready
// and Unavailable the server is always ready and every other error is 500.
func TestUnavailableIsTheBuildersChoice(t *testing.T) {
	errDown := errors.New("backend down")
	for name, tc := range map[string]struct {
		cfg    Config
		err    error
		status int
	}{
		"recognised":          {Config{Unavailable: func(err error) bool { return errors.Is(err, errDown) }}, fmt.Errorf("query: %w", errDown), 503},
		"not recognised":      {Config{Unavailable: func(err error) bool { return false }}, fmt.Errorf("query: %w", errDown), 500},
		"api error kept":      {Config{Unavailable: func(error) bool { return true }}, apierror.NotFound("no such lead"), 404},
		"no classifier":       {Config{}, fmt.Errorf("query: %w", errDown), 500},
		"recognised, wrapped": {Config{Unavailable: func(err error) bool { return errors.Is(err, errDown) }}, fmt.Errorf("a: %w", fmt.Errorf("b: %w", errDown)), 503},
	} {
		t.Run(name, func(t *testing.T) {
			tc.cfg.Log = slog.New(slog.DiscardHandler)
			s := New(tc.cfg)
			s.handle("GET /v1/fail", func(w http.ResponseWriter, r *http.Request) error { return tc.err })
			resp, body := do(t, s.Handler(), "GET", "/v1/fail", nil)
			if resp.StatusCode != tc.status || (tc.status == 503) != (resp.Header.Get("Retry-After") == "2") {
				t.Errorf("%d Retry-After %q %s; want %d", resp.StatusCode, resp.Header.Get("Retry-After"), body, tc.status)
			}
		})
	}
	resp, body := do(t, New(Config{Log: slog.New(slog.DiscardHandler)}).Handler(), "GET", "/readyz", nil)
	if resp.StatusCode != 200 {
		t.Errorf("readyz without Ready: %d %s", resp.StatusCode, body)
	}
}
