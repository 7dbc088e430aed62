package gateway

import (
	"context"
	"log/slog"
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

const (
	allowedOrigin = "https://bayside.example"
	otherOrigin   = "https://evil.example"
	otherSite     = "6f1c2a8e-0000-4000-8000-0000000000bb"
)

// corsGateway is a gateway whose key cache is real: its one key belongs to
// testSite, which allows allowedOrigin; fetches counts the origin's
// answers to preflights of sites it does not hold.
func corsGateway(t *testing.T, key string, publicLimit int) (*Gateway, *keycache.Cache, *atomic.Int64) {
	t.Helper()
	var fetches atomic.Int64
	sites := map[string][]string{testSite: {allowedOrigin}, otherSite: {otherOrigin}}
	keys, err := keycache.New(func(_ context.Context, h [32]byte) (keycache.Info, error) {
		if h != apikey.Hash(key) {
			return keycache.Info{}, nil
		}
		return keycache.Info{Active: true, KeyID: "k1", SiteID: testSite, Scopes: apikey.ReadOnly | apikey.LeadsWrite,
			CORS: sites[testSite]}, nil
	}, keycache.Options{FetchCORS: func(_ context.Context, site string) ([]string, bool, error) {
		fetches.Add(1)
		o, ok := sites[site]
		return o, ok, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(keys.Close)
	cache, _ := respcache.New(respcache.Options{MaxBytes: 4 << 20})
	t.Cleanup(cache.Close)
	g, err := New(Config{Origins: testOrigins(t, "http://127.0.0.1:1"), Keys: keys, Sites: keys,
		Limiter: ratelimit.NewLocal(ratelimit.LocalOptions{}), PublicLimiter: ratelimit.NewLocal(ratelimit.LocalOptions{}),
		PublicLimit: publicLimit, Cache: cache, Log: slog.New(slog.DiscardHandler), OriginTimeout: 200 * time.Millisecond,
		Now: inOneWindow()}) // the public limit's window (a UTC minute) never turns mid-test
	if err != nil {
		t.Fatal(err)
	}
	return g, keys, &fetches
}

func preflightCtx(path, origin, method string) *fasthttp.RequestCtx {
	return request("OPTIONS", path, map[string]string{"Origin": origin, "Access-Control-Request-Method": method,
		"Access-Control-Request-Headers": "authorization"})
}

func TestPreflight(t *testing.T) {
	key := mustKey(t)
	g, _, fetches := corsGateway(t, key, 1000)
	listings := "/v1/sites/" + testSite + "/listings"
	for _, tc := range []struct {
		name, path, origin, method string
		status                     int
		methods                    string
	}{
		{"allowed origin", listings, allowedOrigin, "GET", 204, "GET, HEAD"},
		{"allowed origin, again", listings + "?page=2", allowedOrigin, "GET", 204, "GET, HEAD"},
		{"another origin", listings, otherOrigin, "GET", 403, ""},
		{"another site's origin", "/v1/sites/" + otherSite + "/agents", otherOrigin, "GET", 204, "GET, HEAD"},
		{"case differs", listings, "https://Bayside.example", "GET", 403, ""},
		{"unknown site", "/v1/sites/6f1c2a8e-0000-4000-8000-0000000000cc/listings", allowedOrigin, "GET", 403, ""},
		{"not a site id", "/v1/sites/bayside/listings", allowedOrigin, "GET", 403, ""},
		{"method the route lacks", listings, allowedOrigin, "DELETE", 404, ""},
		{"leads, any origin", "/v1/leads", otherOrigin, "POST", 204, "POST"},
		{"leads, not an origin", "/v1/leads", "null", "POST", 403, ""},
		{"leads, an origin with a path", "/v1/leads", "https://a.example/x", "POST", 403, ""},
		{"not a browser route", "/v1/pairing/device", allowedOrigin, "POST", 404, ""},
	} {
		ctx := preflightCtx(tc.path, tc.origin, tc.method)
		g.Handler(ctx)
		h := &ctx.Response.Header
		if ctx.Response.StatusCode() != tc.status {
			t.Errorf("%s: %d %s, want %d", tc.name, ctx.Response.StatusCode(), ctx.Response.Body(), tc.status)
			continue
		}
		if !strings.Contains(string(h.Peek("Vary")), "Origin") {
			t.Errorf("%s: Vary %q", tc.name, h.Peek("Vary"))
		}
		acao := string(h.Peek("Access-Control-Allow-Origin"))
		if tc.status != 204 {
			if acao != "" {
				t.Errorf("%s: refused, yet Access-Control-Allow-Origin %q", tc.name, acao)
			}
			continue
		}
		if acao != tc.origin || string(h.Peek("Access-Control-Allow-Methods")) != tc.methods ||
			!strings.Contains(strings.ToLower(string(h.Peek("Access-Control-Allow-Headers"))), "authorization") ||
			len(h.Peek("Access-Control-Max-Age")) == 0 || len(h.Peek("Access-Control-Allow-Credentials")) != 0 {
			t.Errorf("%s: %s", tc.name, h.String())
		}
	}
	// testSite and otherSite were fetched once each and then cached; the
	// unknown site is asked each time (not cached), a malformed id never.
	if n := fetches.Load(); n != 3 {
		t.Errorf("%d origin calls for preflights, want 3", n)
	}
	// A plain OPTIONS still gets Allow.
	ctx := request("OPTIONS", listings, map[string]string{"Origin": allowedOrigin})
	g.Handler(ctx)
	if ctx.Response.StatusCode() != 204 && ctx.Response.StatusCode() != 200 || !strings.Contains(string(ctx.Response.Header.Peek("Allow")), "GET") {
		t.Errorf("OPTIONS without Access-Control-Request-Method: %d %q", ctx.Response.StatusCode(), ctx.Response.Header.Peek("Allow"))
	}
}

// Preflights of sites not cached cost an origin call each, so they count
// against the address's public limit; cached ones do not.
func TestPreflightLimit(t *testing.T) {
	g, keys, fetches := corsGateway(t, mustKey(t), 3)
	for i := 0; i < 6; i++ {
		site := "6f1c2a8e-0000-4000-8000-0000000001" + string(rune('0'+i)) + "0"
		ctx := preflightCtx("/v1/sites/"+site+"/listings", allowedOrigin, "GET")
		g.Handler(ctx)
		want := 403
		if i >= 3 {
			want = 429
		}
		if ctx.Response.StatusCode() != want {
			t.Errorf("preflight %d: %d, want %d", i, ctx.Response.StatusCode(), want)
		}
	}
	if fetches.Load() != 3 {
		t.Errorf("%d origin calls, want 3 (the limit)", fetches.Load())
	}
	keys.SetCORS(testSite, []string{allowedOrigin}) // as the event stream does
	for i := 0; i < 5; i++ {
		ctx := preflightCtx("/v1/sites/"+testSite+"/listings", allowedOrigin, "GET")
		g.Handler(ctx)
		if ctx.Response.StatusCode() != 204 {
			t.Fatalf("cached site over the limit: %d", ctx.Response.StatusCode())
		}
	}
}

// Responses carry Access-Control-Allow-Origin only for an origin the key's
// site allows, whether they come from the cache or not, and always Vary:
// Origin; a change of the site's origins applies at once.
func TestCORSResponses(t *testing.T) {
	key := mustKey(t)
	g, keys, _ := corsGateway(t, key, 1000)
	path := "/v1/sites/" + testSite + "/agents"
	k := mustAppendKey(t, g.cache, []byte(testSite), []byte(path), nil)
	g.cache.Put(k, 200, []byte("application/json"), []byte("max-age=600"), []byte(`"e"`), []byte(`{"data":[]}`), time.Now())
	get := func(origin string) *fasthttp.RequestCtx {
		hdr := map[string]string{"Authorization": "Bearer " + key}
		if origin != "" {
			hdr["Origin"] = origin
		}
		ctx := request("GET", path, hdr)
		g.Handler(ctx)
		// A cached answer varies by its encoding and by Origin, each named once.
		if ctx.Response.StatusCode() != 200 || len(ctx.Response.Header.PeekAll("Vary")) != 1 ||
			string(ctx.Response.Header.Peek("Vary")) != "Accept-Encoding, Origin" {
			t.Fatalf("%q: %d, Vary %q", origin, ctx.Response.StatusCode(), ctx.Response.Header.PeekAll("Vary"))
		}
		return ctx
	}
	for origin, want := range map[string]string{allowedOrigin: allowedOrigin, otherOrigin: "", "": ""} {
		ctx := get(origin)
		if got := string(ctx.Response.Header.Peek("Access-Control-Allow-Origin")); got != want {
			t.Errorf("Origin %q: Access-Control-Allow-Origin %q, want %q", origin, got, want)
		}
		if want != "" && !strings.Contains(string(ctx.Response.Header.Peek("Access-Control-Expose-Headers")), "ETag") {
			t.Errorf("Origin %q: no Access-Control-Expose-Headers", origin)
		}
	}
	keys.SetCORS(testSite, []string{otherOrigin})
	if got := string(get(allowedOrigin).Response.Header.Peek("Access-Control-Allow-Origin")); got != "" {
		t.Errorf("after the site dropped the origin: %q", got)
	}
	if got := string(get(otherOrigin).Response.Header.Peek("Access-Control-Allow-Origin")); got != otherOrigin {
		t.Errorf("after the site added the origin: %q", got)
	}
	// A refused key carries no Access-Control-Allow-Origin, but Vary.
	ctx := request("GET", path, map[string]string{"Authorization": "Bearer " + mustKey(t), "Origin": otherOrigin})
	g.Handler(ctx)
	if ctx.Response.StatusCode() != 401 || len(ctx.Response.Header.Peek("Access-Control-Allow-Origin")) != 0 ||
		!strings.Contains(string(ctx.Response.Header.Peek("Vary")), "Origin") {
		t.Errorf("unknown key: %d %s", ctx.Response.StatusCode(), ctx.Response.Header.String())
	}
}

func TestAddVary(t *testing.T) {
	for in, want := range map[string]string{"": "Origin", "Accept-Encoding": "Accept-Encoding, Origin",
		"origin": "origin", "Accept-Encoding, Origin": "Accept-Encoding, Origin", "Originator": "Originator, Origin"} {
		var h fasthttp.ResponseHeader
		if in != "" {
			h.Set("Vary", in)
		}
		addVary(&h, "Origin")
		if got := string(h.Peek("Vary")); got != want {
			t.Errorf("Vary %q + Origin = %q, want %q", in, got, want)
		}
	}
}
