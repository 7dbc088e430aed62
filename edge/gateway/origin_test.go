package gateway

import (
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/listgate/listgate/edge/keycache"
	"github.com/listgate/listgate/edge/respcache"
	"github.com/listgate/listgate/pkg/apikey"
	"github.com/listgate/listgate/pkg/ratelimit"
)

// fakeOrigin is a net/http server standing in for the origin: it records
// what the edge sent and answers with the listing page of the test.
type fakeOrigin struct {
	srv      *httptest.Server
	hits     atomic.Int64
	lastHdr  atomic.Pointer[http.Header]
	body     atomic.Pointer[string]
	cacheCtl string
}

func newFakeOrigin(tb testing.TB, cacheControl string) *fakeOrigin {
	o := &fakeOrigin{cacheCtl: cacheControl}
	b := `{"data":[],"meta":{"page":1}}`
	o.body.Store(&b)
	o.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o.hits.Add(1)
		h := r.Header.Clone()
		o.lastHdr.Store(&h)
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Header().Set("Cache-Control", o.cacheCtl)
		w.Header().Set("ETag", `"`+*o.body.Load()+`"`)
		io.WriteString(w, *o.body.Load())
	}))
	tb.Cleanup(o.srv.Close)
	return o
}

func gatewayTo(tb testing.TB, o *fakeOrigin, key string, cfg Config) *Gateway {
	tb.Helper()
	cache, _ := respcache.New(respcache.Options{MaxBytes: 4 << 20})
	tb.Cleanup(cache.Close)
	cfg.Origins = testOrigins(tb, o.srv.URL)
	cfg.Keys = fixedKeys{hash: apikey.Hash(key), info: keycache.Info{Active: true, KeyID: "k1", SiteID: testSite,
		Scopes: apikey.ReadOnly | apikey.LeadsWrite}}
	cfg.Limiter = ratelimit.NewLocal(ratelimit.LocalOptions{})
	if cfg.PublicLimiter == nil {
		cfg.PublicLimiter = ratelimit.NewLocal(ratelimit.LocalOptions{})
	}
	cfg.Cache = cache
	cfg.Log = slog.New(slog.DiscardHandler)
	g, err := New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return g
}

func serveOne(g *Gateway, method, uri string, hdr map[string]string, body string, peer string) *fasthttp.RequestCtx {
	var req fasthttp.Request
	req.Header.SetMethod(method)
	req.SetRequestURI(uri)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	req.SetBodyString(body)
	ctx := &fasthttp.RequestCtx{}
	ip := net.ParseIP(peer)
	ctx.Init(&req, &net.TCPAddr{IP: ip, Port: 40000}, nil)
	g.Handler(ctx)
	return ctx
}

func TestForwardingHeaders(t *testing.T) {
	o := newFakeOrigin(t, "no-store")
	key := mustKey(t)
	g := gatewayTo(t, o, key, Config{})
	ctx := serveOne(g, "POST", "/v1/leads", map[string]string{"Authorization": "Bearer " + key,
		"X-Listgate-Site": "forged-site", "X-Listgate-Internal-Token": "forged", "x-listgate-scopes": "leads:write",
		"X-Request-Id": "client-id-1", "Content-Type": "application/json"}, `{"name":"A"}`, "127.0.0.1")
	if ctx.Response.StatusCode() != 200 {
		t.Fatalf("%d %s", ctx.Response.StatusCode(), ctx.Response.Body())
	}
	h := *o.lastHdr.Load()
	if h.Get("X-Listgate-Site") != testSite || h.Get("X-Listgate-Key-Id") != "k1" ||
		h.Get("X-Listgate-Internal-Token") != "token-0123456789abcdef0123456789abcdef" ||
		h.Get("Authorization") != "" || h.Get("X-Request-Id") != "client-id-1" || h.Get("X-Listgate-Client-Ip") != "127.0.0.1" {
		t.Errorf("origin saw %v", h)
	}
	if len(h.Values("X-Listgate-Site")) != 1 || len(h.Values("X-Listgate-Scopes")) != 1 {
		t.Errorf("a forged identity header reached the origin: %v", h)
	}
	if string(ctx.Response.Header.Peek("X-Request-Id")) != "client-id-1" {
		t.Errorf("response request id %q", ctx.Response.Header.Peek("X-Request-Id"))
	}
}

func TestLeadBodyLimit(t *testing.T) {
	o := newFakeOrigin(t, "no-store")
	key := mustKey(t)
	g := gatewayTo(t, o, key, Config{})
	ctx := serveOne(g, "POST", "/v1/leads", map[string]string{"X-API-Key": key}, strings.Repeat("x", leadBodyLimit+1), "127.0.0.1")
	if ctx.Response.StatusCode() != 413 || o.hits.Load() != 0 {
		t.Errorf("%d, origin hit %d times", ctx.Response.StatusCode(), o.hits.Load())
	}
}

func TestPublicRoutesPerIPLimitAndTrustedProxies(t *testing.T) {
	o := newFakeOrigin(t, "no-store")
	// The limit is per UTC minute: a clock that stands still keeps the
	// requests in one window.
	g := gatewayTo(t, o, mustKey(t), Config{Now: inOneWindow(), PublicLimit: 3, TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}})
	send := func(peer, xff string) int {
		hdr := map[string]string{"Content-Type": "application/json"}
		if xff != "" {
			hdr["X-Forwarded-For"] = xff
		}
		return serveOne(g, "POST", "/v1/pairing/device", hdr, `{}`, peer).Response.StatusCode()
	}
	for i := 0; i < 3; i++ {
		if s := send("192.0.2.1", ""); s != 200 {
			t.Fatalf("request %d: %d", i, s)
		}
	}
	if s := send("192.0.2.1", ""); s != 429 {
		t.Errorf("4th request from one IP: %d", s)
	}
	if s := send("192.0.2.2", ""); s != 200 {
		t.Errorf("another IP: %d", s)
	}
	// An untrusted peer cannot pose as another client.
	if s := send("192.0.2.1", "198.51.100.7"); s != 429 {
		t.Errorf("X-Forwarded-For from an untrusted peer was believed: %d", s)
	}
	// Behind a trusted proxy, each client has its own limit.
	for i := 0; i < 3; i++ {
		if s := send("10.1.2.3", "198.51.100.8, 10.9.9.9"); s != 200 {
			t.Fatalf("client behind the proxy, request %d: %d", i, s)
		}
	}
	if s := send("10.1.2.3", "198.51.100.8"); s != 429 {
		t.Errorf("client behind the proxy over its limit: %d", s)
	}
	if s := send("10.1.2.3", "198.51.100.9"); s != 200 {
		t.Errorf("another client behind the proxy: %d", s)
	}
	if got := o.lastHdr.Load(); (*got).Get("X-Listgate-Client-Ip") != "198.51.100.9" {
		t.Errorf("client IP forwarded as %q", (*got).Get("X-Listgate-Client-Ip"))
	}
}

func TestStaleWhileRevalidateRefreshesOnce(t *testing.T) {
	o := newFakeOrigin(t, "max-age=1, stale-while-revalidate=30")
	key := mustKey(t)
	now := time.Now()
	clock := atomic.Pointer[time.Time]{}
	clock.Store(&now)
	g := gatewayTo(t, o, key, Config{Now: func() time.Time { return *clock.Load() }})
	uri := "/v1/sites/" + testSite + "/listings"
	get := func() *fasthttp.RequestCtx {
		return serveOne(g, "GET", uri, map[string]string{"X-API-Key": key}, "", "127.0.0.1")
	}
	if c := get(); string(c.Response.Header.Peek("X-Cache")) != "MISS" {
		t.Fatalf("first: %s", c.Response.Header.Peek("X-Cache"))
	}
	if c := get(); string(c.Response.Header.Peek("X-Cache")) != "HIT" || o.hits.Load() != 1 {
		t.Fatalf("second: %s, origin hits %d", c.Response.Header.Peek("X-Cache"), o.hits.Load())
	}
	newer := `{"data":[{"listing_ref":1}],"meta":{"page":1}}`
	o.body.Store(&newer)
	later := now.Add(2 * time.Second)
	clock.Store(&later)
	if c := get(); string(c.Response.Header.Peek("X-Cache")) != "STALE" || string(c.Response.Body()) == newer {
		t.Fatalf("first read past max-age: %s", c.Response.Header.Peek("X-Cache"))
	}
	// Until the refresh lands, reads stay stale; none starts another.
	for i := 0; i < 5; i++ {
		c := get()
		if x := string(c.Response.Header.Peek("X-Cache")); x != "STALE" && !(x == "HIT" && string(c.Response.Body()) == newer) {
			t.Fatalf("read %d: %s %s", i, x, c.Response.Body())
		}
	}
	// Exactly one background refresh, then the new page is served.
	deadline := time.Now().Add(5 * time.Second)
	for {
		c := get()
		if string(c.Response.Header.Peek("X-Cache")) == "HIT" && string(c.Response.Body()) == newer {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("refresh never landed: %s %s", c.Response.Header.Peek("X-Cache"), c.Response.Body())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n := o.hits.Load(); n != 2 {
		t.Errorf("origin hit %d times, want 2 (one miss, one refresh)", n)
	}
}

func TestConcurrentMissesCollapse(t *testing.T) {
	o := newFakeOrigin(t, "max-age=60")
	key := mustKey(t)
	g := gatewayTo(t, o, key, Config{})
	uri := "/v1/sites/" + testSite + "/fields"
	done := make(chan string, 50)
	for i := 0; i < 50; i++ {
		go func() {
			c := serveOne(g, "GET", uri, map[string]string{"X-API-Key": key}, "", "127.0.0.1")
			done <- string(c.Response.Header.Peek("X-Cache"))
		}()
	}
	for i := 0; i < 50; i++ {
		<-done
	}
	if n := o.hits.Load(); n != 1 {
		t.Errorf("50 concurrent misses made %d origin requests, want 1", n)
	}
}

// A miss whose cache look-up came before another request's origin request
// ended, and which joins only after it ended, is answered with the entry
// that request stored: no second origin request (TestConcurrentMissesCollapse
// saw 2 for 50 concurrent misses, about once in 400 runs on a loaded
// machine).
func TestMissAfterAFlightEndedTakesItsEntry(t *testing.T) {
	o := newFakeOrigin(t, "max-age=60")
	key := mustKey(t)
	g := gatewayTo(t, o, key, Config{})
	uri := "/v1/sites/" + testSite + "/fields"
	hdr := map[string]string{"X-API-Key": key}
	var misses atomic.Int32
	arrived, release := make(chan struct{}), make(chan struct{})
	g.missed = func() {
		if misses.Add(1) == 1 { // the late request: it missed, and waits
			close(arrived)
			<-release
		}
	}
	late := make(chan *fasthttp.RequestCtx)
	go func() { late <- serveOne(g, "GET", uri, hdr, "", "127.0.0.1") }()
	<-arrived
	// Another request misses, asks the origin, stores the page and ends
	// its flight while the late one waits.
	if c := serveOne(g, "GET", uri, hdr, "", "127.0.0.1"); string(c.Response.Header.Peek("X-Cache")) != "MISS" {
		t.Fatalf("the other request: X-Cache %q", c.Response.Header.Peek("X-Cache"))
	}
	close(release)
	c := <-late
	if x := string(c.Response.Header.Peek("X-Cache")); x != "HIT" || c.Response.StatusCode() != 200 {
		t.Errorf("the late miss: %d X-Cache %q, want 200 HIT", c.Response.StatusCode(), x)
	}
	if n := o.hits.Load(); n != 1 {
		t.Errorf("%d origin requests, want 1", n)
	}
}
