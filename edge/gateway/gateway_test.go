package gateway

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/listgate/listgate/edge/keycache"
	"github.com/listgate/listgate/edge/respcache"
	"github.com/listgate/listgate/edge/upstream"
	"github.com/listgate/listgate/pkg/apikey"
	"github.com/listgate/listgate/pkg/ratelimit"
)

// fixedKeys answers every lookup of one hash with one key.
type fixedKeys struct {
	hash [32]byte
	info keycache.Info
}

// Known is the one key.
func (k fixedKeys) Known(h [32]byte) bool { return h == k.hash }

// Cached holds the one key; every other key is a miss, for Lookup.
func (k fixedKeys) Cached(h *[32]byte) (keycache.Info, bool) { return k.info, *h == k.hash }

func (k fixedKeys) Lookup(_ context.Context, h [32]byte) (keycache.Info, error) {
	if h == k.hash {
		return k.info, nil
	}
	return keycache.Info{}, nil
}

const testSite = "6f1c2a8e-0000-4000-8000-0000000000aa"

// inOneWindow is a gateway clock that stands still in the middle of the
// current UTC minute, a rate-limit window: a test that counts requests
// against a limit then never sees the window turn between two of them,
// and cache entries stored at time.Now() stay fresh.
func inOneWindow() func() time.Time {
	now := time.Now().UTC().Truncate(time.Minute).Add(30 * time.Second)
	return func() time.Time { return now }
}

func newTestGateway(tb testing.TB, key string, limit int) (*Gateway, *respcache.Cache) {
	return gatewayFor(tb, key, keycache.Info{Limit: limit}, Config{})
}

// gatewayFor is a gateway with a response cache of its own, an unreachable
// origin and one key: info, active, of key k1 on testSite with the
// read-only scopes. cfg sets anything else (a tracer).
func gatewayFor(tb testing.TB, key string, info keycache.Info, cfg Config) (*Gateway, *respcache.Cache) {
	tb.Helper()
	cache, err := respcache.New(respcache.Options{MaxBytes: 8 << 20})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(cache.Close)
	info.Active, info.KeyID, info.SiteID, info.Scopes = true, "k1", testSite, apikey.ReadOnly
	cfg.Origins = testOrigins(tb, "http://127.0.0.1:1")
	cfg.Keys = fixedKeys{hash: apikey.Hash(key), info: info}
	cfg.Limiter, cfg.PublicLimiter = ratelimit.NewLocal(ratelimit.LocalOptions{}), ratelimit.NewLocal(ratelimit.LocalOptions{})
	cfg.Cache, cfg.Log, cfg.OriginTimeout = cache, slog.New(slog.NewTextHandler(io.Discard, nil)), 200*time.Millisecond
	g, err := New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return g, cache
}

// edgeServer is a fasthttp server in front of g set up as the edge's
// (edge/main.go): streamed bodies, HeaderReceived, timeouts, its buffers.
func edgeServer(g *Gateway) *fasthttp.Server {
	return &fasthttp.Server{
		Handler: g.Handler, ErrorHandler: g.ServerError, Name: "listgate-edge",
		ReadTimeout: 10 * time.Second, WriteTimeout: 30 * time.Second, IdleTimeout: 120 * time.Second,
		ReadBufferSize: 16 << 10, WriteBufferSize: 32 << 10, MaxRequestBodySize: 64 << 10,
		StreamRequestBody: true, DisablePreParseMultipartForm: true,
		HeaderReceived: g.HeaderReceived, ExpectHandler: g.ExpectContinue,
		SecureErrorLogMessage: true, NoDefaultServerHeader: true, NoDefaultContentType: true,
	}
}

// rawRequest is a request as a client sends it, with key and the
// X-Request-Id req-1; more is further header lines.
func rawRequest(method, uri, key, more string) string {
	return method + " " + uri + " HTTP/1.1\r\nHost: edge\r\nAuthorization: Bearer " + key + "\r\nX-Request-Id: req-1\r\n" + more + "\r\n"
}

// request builds a reusable request context.
func request(method, uri string, hdr map[string]string) *fasthttp.RequestCtx {
	var req fasthttp.Request
	req.Header.SetMethod(method)
	req.SetRequestURI(uri)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	ctx := &fasthttp.RequestCtx{}
	ctx.Init(&req, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40000}, nil)
	return ctx
}

// requestOnConn is request on a connection that keeps the gateway's state
// between requests, as the edge's listeners' connections do, and does not
// gather: the answer's headers are set on fasthttp's response.
func requestOnConn(method, uri string, hdr map[string]string) *fasthttp.RequestCtx {
	var req fasthttp.Request
	request(method, uri, hdr).Request.CopyTo(&req)
	ctx := &fasthttp.RequestCtx{}
	ctx.Init2(&stateConn{plainConn: plainConn{&memConn{}}}, nil, false)
	req.CopyTo(&ctx.Request)
	return ctx
}

type stateConn struct {
	plainConn
	st ConnState
}

func (c *stateConn) GatewayState() *ConnState { return &c.st }

func mustKey(tb testing.TB) string {
	tb.Helper()
	k, err := apikey.Generate()
	if err != nil {
		tb.Fatal(err)
	}
	return k
}

// The hit path — auth, site, scope, limit, cache — does no JSON work and
// close to no allocation.
func TestHitPathAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector changes allocation counts")
	}
	key := mustKey(t)
	g, cache := newTestGateway(t, key, 0)
	path := "/v1/sites/" + testSite + "/listings"
	body := make([]byte, 10<<10)
	for i := range body {
		body[i] = 'a' + byte(i%26)
	}
	k := mustAppendKey(t, cache, []byte(testSite), []byte(path), []byte("page=2"))
	if cache.Put(k, 200, []byte("application/json"), []byte("max-age=600"), []byte(`"e"`), body, time.Now()) == nil {
		t.Fatal("not stored")
	}
	ctx := requestOnConn("GET", path+"?page=2", map[string]string{"Authorization": "Bearer " + key, "Accept-Encoding": "gzip"})
	run := func() {
		ctx.Response.Reset()
		g.Handler(ctx)
	}
	run()
	if ctx.Response.StatusCode() != 200 || string(ctx.Response.Header.Peek("X-Cache")) != "HIT" ||
		string(ctx.Response.Header.Peek("Content-Encoding")) != "gzip" {
		t.Fatalf("%d %s %s", ctx.Response.StatusCode(), ctx.Response.Header.Peek("X-Cache"), ctx.Response.Body())
	}
	// The site's routes are found without the router (siteRoutes), which
	// would copy the site from the path and box it: nothing is allocated.
	if n := testing.AllocsPerRun(200, run); n != 0 {
		t.Errorf("hit path: %v allocations per request", n)
	}
	// A plan with a limit adds the rate-limit headers, X-RateLimit-* and
	// RateLimit/RateLimit-Policy, formatted without allocating.
	lg, lcache := newTestGateway(t, key, 1<<30)
	if lcache.Put(mustAppendKey(t, lcache, []byte(testSite), []byte(path), []byte("page=2")), 200,
		[]byte("application/json"), []byte("max-age=600"), []byte(`"e"`), body, time.Now()) == nil {
		t.Fatal("not stored")
	}
	limited := func() {
		ctx.Response.Reset()
		lg.Handler(ctx)
	}
	limited()
	if ctx.Response.StatusCode() != 200 || len(ctx.Response.Header.Peek("RateLimit")) == 0 {
		t.Fatalf("limited: %d RateLimit %q", ctx.Response.StatusCode(), ctx.Response.Header.Peek("RateLimit"))
	}
	if n := testing.AllocsPerRun(200, limited); n != 0 {
		t.Errorf("hit path with a rate limit: %v allocations per request", n)
	}
	// The rejections are cheap too.
	bad := requestOnConn("GET", path, map[string]string{"Authorization": "Bearer lgk_nope"})
	if n := testing.AllocsPerRun(200, func() { bad.Response.Reset(); g.Handler(bad) }); n != 0 {
		t.Errorf("offline rejection: %v allocations", n)
	}
	if bad.Response.StatusCode() != 401 {
		t.Errorf("bad key: %d", bad.Response.StatusCode())
	}
}

func TestGatewayChecksInOrder(t *testing.T) {
	key := mustKey(t)
	g, cache := newTestGateway(t, key, 60)
	path := "/v1/sites/" + testSite + "/listings"
	k := mustAppendKey(t, cache, []byte(testSite), []byte(path), nil)
	cache.Put(k, 200, []byte("application/json"), []byte("max-age=600"), []byte(`"e"`), []byte(`{"data":[]}`), time.Now())
	for name, tc := range map[string]struct {
		method, uri string
		hdr         map[string]string
		status      int
		xcache      string
	}{
		"hit":         {"GET", path, map[string]string{"X-API-Key": key}, 200, "HIT"},
		"304":         {"GET", path, map[string]string{"X-API-Key": key, "If-None-Match": `W/"e"`}, 304, "HIT"},
		"no key":      {"GET", path, nil, 401, ""},
		"other site":  {"GET", "/v1/sites/6f1c2a8e-0000-4000-8000-0000000000bb/listings", map[string]string{"X-API-Key": key}, 403, ""},
		"scope":       {"POST", "/v1/leads", map[string]string{"X-API-Key": key}, 403, ""},
		"unknown":     {"GET", "/v1/other", map[string]string{"X-API-Key": key}, 404, ""},
		"method":      {"PUT", path, map[string]string{"X-API-Key": key}, 405, ""},
		"origin down": {"GET", path + "?page=3", map[string]string{"X-API-Key": key}, 503, "MISS"},
	} {
		t.Run(name, func(t *testing.T) {
			ctx := request(tc.method, tc.uri, tc.hdr)
			g.Handler(ctx)
			if ctx.Response.StatusCode() != tc.status || string(ctx.Response.Header.Peek("X-Cache")) != tc.xcache {
				t.Errorf("%d X-Cache %q: %s", ctx.Response.StatusCode(), ctx.Response.Header.Peek("X-Cache"), ctx.Response.Body())
			}
			limited := len(ctx.Response.Header.Peek("X-RateLimit-Limit")) > 0
			if want := tc.status != 401 && tc.status != 404 && tc.status != 405 && tc.status != 403; limited != want {
				t.Errorf("rate-limit headers present=%v, want %v", limited, want)
			}
		})
	}
}

func TestEncodingVariants(t *testing.T) {
	key := mustKey(t)
	g, cache := newTestGateway(t, key, 0)
	path := "/v1/sites/" + testSite + "/agents"
	body := bytes.Repeat([]byte(`{"agent_id":"1","name":"Ann Agent","email":"ann@agency.example"},`), 100)
	k := mustAppendKey(t, cache, []byte(testSite), []byte(path), nil)
	cache.Put(k, 200, []byte("application/json"), []byte("max-age=600"), []byte(`"e"`), body, time.Now())
	for ae, want := range map[string]string{"": "", "gzip": "gzip", "br": "br", "gzip, deflate, br": "br",
		"br;q=0, gzip": "gzip", "identity": "", "*": "br", "gzip;q=0": ""} {
		ctx := request("GET", path, map[string]string{"X-API-Key": key, "Accept-Encoding": ae})
		g.Handler(ctx)
		if got := string(ctx.Response.Header.Peek("Content-Encoding")); got != want {
			t.Errorf("Accept-Encoding %q: Content-Encoding %q, want %q", ae, got, want)
		}
		if string(ctx.Response.Header.Peek("Vary")) != "Accept-Encoding, Origin" {
			t.Errorf("no Vary")
		}
	}
}

func FuzzParseCredential(f *testing.F) {
	k := "lgk_" + "abcdefghijklmnopqrstuvwxyz0123" + "000000"
	f.Add("Bearer "+k, "")
	f.Add("", k)
	f.Add("bearer  "+k+" ", k)
	f.Add("Basic abc", "")
	f.Add("Bearer", "x")
	f.Fuzz(func(t *testing.T, auth, apiKey string) {
		key, e := parseCredential([]byte(auth), []byte(apiKey))
		if (key == nil) == (e == nil) {
			t.Fatalf("key %q and error %v", key, e)
		}
		if e == nil && (len(key) == 0 || (len(apiKey) > 0 && string(key) != string(trim(apiKey)))) {
			t.Fatalf("accepted %q from %q / %q", key, auth, apiKey)
		}
	})
}

func trim(s string) []byte {
	b := []byte(s)
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\n' || b[0] == '\r' || b[0] == '\v' || b[0] == '\f') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t' || b[len(b)-1] == '\n' || b[len(b)-1] == '\r' || b[len(b)-1] == '\v' || b[len(b)-1] == '\f') {
		b = b[:len(b)-1]
	}
	return b
}

func mustAppendKey(tb testing.TB, c *respcache.Cache, site, path, query []byte) []byte {
	tb.Helper()
	k, err := c.AppendKey(nil, site, path, query)
	if err != nil {
		tb.Fatal(err)
	}
	return k
}

// Until the edge follows the origin's event stream it is not ready: its
// caches could serve revoked keys and old pages.
func TestNotReadyUntilSynced(t *testing.T) {
	g, _ := newTestGateway(t, mustKey(t), 0)
	synced := false
	g.SetSynced(func() bool { return synced })
	ctx := request("GET", "/readyz", nil)
	g.Handler(ctx)
	if ctx.Response.StatusCode() != 503 || !bytes.Contains(ctx.Response.Body(), []byte("event stream")) ||
		len(ctx.Response.Header.Peek("Retry-After")) == 0 {
		t.Errorf("not synced: %d %s", ctx.Response.StatusCode(), ctx.Response.Body())
	}
	synced = true
	ctx = request("GET", "/readyz", nil)
	g.Handler(ctx)
	if ctx.Response.StatusCode() != 200 {
		t.Errorf("synced, origin not yet checked: %d %s", ctx.Response.StatusCode(), ctx.Response.Body())
	}
	// Synced, it needs an origin whose /readyz answers; this one cannot be reached.
	g.origin.Check()
	ctx = request("GET", "/readyz", nil)
	g.Handler(ctx)
	if ctx.Response.StatusCode() != 503 || bytes.Contains(ctx.Response.Body(), []byte("event stream")) {
		t.Errorf("synced: %d %s", ctx.Response.StatusCode(), ctx.Response.Body())
	}
}

// The origin believes X-Forwarded-Proto (HSTS, Secure cookies) on what the
// edge forwards: only a trusted proxy's reaches it, on keyed and public
// routes alike.
func TestForwardedProtoOnlyFromTrustedProxies(t *testing.T) {
	o := newFakeOrigin(t, "no-store")
	key := mustKey(t)
	for _, trusted := range []bool{false, true} {
		var cfg Config
		if trusted {
			cfg.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
		}
		g := gatewayTo(t, o, key, cfg)
		for _, r := range []struct{ method, uri, body string }{
			{"POST", "/v1/leads", `{"name":"A"}`},
			{"GET", "/v1/sites/" + testSite + "/listings", ""},
			{"GET", "/v1/openapi.json", ""},
		} {
			ctx := serveOne(g, r.method, r.uri, map[string]string{"Authorization": "Bearer " + key, "Content-Type": "application/json",
				"X-Forwarded-Proto": "https"}, r.body, "127.0.0.1")
			if ctx.Response.StatusCode() != 200 {
				t.Fatalf("%s %s: %d %s", r.method, r.uri, ctx.Response.StatusCode(), ctx.Response.Body())
			}
			if got := (*o.lastHdr.Load()).Get("X-Forwarded-Proto"); (got == "https") != trusted {
				t.Errorf("%s %s, trusted peer %v: the origin saw X-Forwarded-Proto %q", r.method, r.uri, trusted, got)
			}
		}
	}
}

// testOrigins is a client to the origins at urls, with the tests' token.
func testOrigins(tb testing.TB, urls ...string) *upstream.Origins {
	tb.Helper()
	o, err := upstream.New(upstream.Options{URLs: urls, InternalToken: "token-0123456789abcdef0123456789abcdef",
		Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		tb.Fatal(err)
	}
	return o
}
