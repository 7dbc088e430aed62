package gateway

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/listgate/listgate/edge/keycache"
	"github.com/listgate/listgate/pkg/apikey"
	"github.com/listgate/listgate/pkg/ratelimit"
)

// viewLog records the beacons a gateway counts.
type viewLog struct {
	mu    sync.Mutex
	views []countedView
}

type countedView struct {
	site     string
	ref      int64
	client   netip.Addr
	ua       string
	prefetch bool
}

func (v *viewLog) CountView(site string, _ *time.Location, ref int64, client netip.Addr, ua []byte, prefetch bool, _ time.Time) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.views = append(v.views, countedView{site, ref, client, string(ua), prefetch})
}

func (v *viewLog) take() []countedView {
	v.mu.Lock()
	defer v.mu.Unlock()
	out := v.views
	v.views = nil
	return out
}

// multiKeys holds several keys.
type multiKeys map[[32]byte]keycache.Info

func (k multiKeys) Known(h [32]byte) bool                    { _, ok := k[h]; return ok }
func (k multiKeys) Cached(h *[32]byte) (keycache.Info, bool) { i, ok := k[*h]; return i, ok }
func (k multiKeys) Lookup(_ context.Context, h [32]byte) (keycache.Info, error) {
	return k[h], nil
}

func newBeaconGateway(tb testing.TB) (g *Gateway, views *viewLog, beaconKey, readKey string) {
	tb.Helper()
	beaconKey, readKey = mustKey(tb), mustKey(tb)
	views = &viewLog{}
	g, err := New(Config{
		Origins: testOrigins(tb, "http://127.0.0.1:1"),
		Keys: multiKeys{
			apikey.Hash(beaconKey): {Active: true, KeyID: "b1", SiteID: testSite, Scopes: apikey.ViewsWrite, Limit: 1},
			apikey.Hash(readKey):   {Active: true, KeyID: "r1", SiteID: testSite, Scopes: apikey.ReadOnly, Limit: 1},
		},
		Limiter: ratelimit.NewLocal(ratelimit.LocalOptions{}), PublicLimiter: ratelimit.NewLocal(ratelimit.LocalOptions{}),
		Views: views, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), OriginTimeout: 200 * time.Millisecond,
		Now: inOneWindow(), // the plan's limit of 1 a minute: one window throughout
	})
	if err != nil {
		tb.Fatal(err)
	}
	return g, views, beaconKey, readKey
}

func beaconRequest(method, uri, contentType, body string, hdr map[string]string) *fasthttp.RequestCtx {
	ctx := request(method, uri, hdr)
	if contentType != "" {
		ctx.Request.Header.SetContentType(contentType)
	}
	if body != "" {
		ctx.Request.SetBodyString(body)
	}
	return ctx
}

func TestBeacon(t *testing.T) {
	g, views, beacon, read := newBeaconGateway(t)
	path := "/v1/sites/" + testSite + "/views"
	other := "/v1/sites/6f1c2a8e-0000-4000-8000-0000000000bb/views"
	chrome := map[string]string{"User-Agent": "Mozilla/5.0 Chrome/131", "Origin": "https://agency.example"}
	for name, tc := range map[string]struct {
		method, uri, ct, body string
		hdr                   map[string]string
		code                  int
		ref                   int64 // counted; 0: not counted
	}{
		"json, key in the query":   {"POST", path + "?k=" + beacon, "application/json", `{"listing": 42, "path": "/property/42"}`, chrome, 204, 42},
		"text/plain (sendBeacon)":  {"POST", path + "?k=" + beacon, "text/plain;charset=UTF-8", `{"listing":"43"}`, chrome, 204, 43},
		"form":                     {"POST", path + "?k=" + beacon, "application/x-www-form-urlencoded", `listing=44&path=%2Fp`, chrome, 204, 44},
		"key in a header":          {"POST", path, "application/json", `{"listing": 45}`, map[string]string{"X-API-Key": beacon, "User-Agent": "UA"}, 204, 45},
		"pixel":                    {"GET", path + ".gif?k=" + beacon + "&listing=46&path=/p", "", "", chrome, 200, 46},
		"pixel, HEAD":              {"HEAD", path + ".gif?k=" + beacon + "&listing=46", "", "", chrome, 200, 0},
		"no key":                   {"POST", path, "application/json", `{"listing": 1}`, chrome, 401, 0},
		"not a key":                {"POST", path + "?k=lgk_nope", "application/json", `{"listing": 1}`, chrome, 401, 0},
		"another site":             {"POST", other + "?k=" + beacon, "application/json", `{"listing": 1}`, chrome, 403, 0},
		"a read key":               {"POST", path + "?k=" + read, "application/json", `{"listing": 1}`, chrome, 403, 0},
		"other type":               {"POST", path + "?k=" + beacon, "application/xml", `<listing>1</listing>`, chrome, 415, 0},
		"too large":                {"POST", path + "?k=" + beacon, "text/plain", `{"listing": 1, "path": "` + strings.Repeat("a", 1100) + `"}`, chrome, 413, 0},
		"unknown field":            {"POST", path + "?k=" + beacon, "application/json", `{"listing": 1, "x": 2}`, chrome, 422, 0},
		"no listing":               {"POST", path + "?k=" + beacon, "application/json", `{"path": "/"}`, chrome, 422, 0},
		"negative":                 {"POST", path + "?k=" + beacon, "application/json", `{"listing": -1}`, chrome, 422, 0},
		"fraction":                 {"POST", path + "?k=" + beacon, "application/json", `{"listing": 1.5}`, chrome, 422, 0},
		"too big a ref":            {"POST", path + "?k=" + beacon, "application/json", `{"listing": 9007199254740992}`, chrome, 422, 0},
		"two listings":             {"GET", path + ".gif?k=" + beacon + "&listing=1&listing=2", "", "", chrome, 422, 0},
		"pixel, unknown parameter": {"GET", path + ".gif?k=" + beacon + "&listing=1&utm=x", "", "", chrome, 422, 0},
		"long path":                {"GET", path + ".gif?k=" + beacon + "&listing=1&path=" + strings.Repeat("a", 513), "", "", chrome, 422, 0},
	} {
		t.Run(name, func(t *testing.T) {
			ctx := beaconRequest(tc.method, tc.uri, tc.ct, tc.body, tc.hdr)
			g.Handler(ctx)
			if ctx.Response.StatusCode() != tc.code {
				t.Fatalf("= %d %s, want %d", ctx.Response.StatusCode(), ctx.Response.Body(), tc.code)
			}
			if got := string(ctx.Response.Header.Peek("Access-Control-Allow-Origin")); got != "*" {
				t.Errorf("Access-Control-Allow-Origin %q", got)
			}
			if len(ctx.Response.Header.Peek("X-RateLimit-Limit")) > 0 {
				t.Error("a beacon answered with the plan's rate-limit headers")
			}
			counted := views.take()
			switch {
			case tc.ref == 0 && len(counted) > 0:
				t.Errorf("counted %+v", counted)
			case tc.ref != 0 && (len(counted) != 1 || counted[0].ref != tc.ref || counted[0].site != testSite):
				t.Errorf("counted %+v, want listing %d", counted, tc.ref)
			}
			if tc.code == 200 && tc.method == "GET" && (!bytes.HasPrefix(ctx.Response.Body(), []byte("GIF89a")) ||
				string(ctx.Response.Header.ContentType()) != "image/gif") {
				t.Errorf("pixel answer %q", ctx.Response.Body())
			}
		})
	}

	// The plan's limit (1 a minute here) neither stops nor counts beacons.
	for range 5 {
		ctx := beaconRequest("POST", path+"?k="+beacon, "text/plain", `{"listing": 7}`, chrome)
		g.Handler(ctx)
		if ctx.Response.StatusCode() != 204 {
			t.Fatalf("beacon past the plan limit: %d", ctx.Response.StatusCode())
		}
	}
	views.take()
	ctx := request("GET", "/v1/sites/"+testSite+"/listings", map[string]string{"X-API-Key": read})
	g.Handler(ctx)
	if ctx.Response.StatusCode() == 429 {
		t.Error("beacons used the site's plan limit")
	}
	// The beacon id reads nothing.
	for _, p := range []string{"/listings", "/stats/summary", "/stats/listings", "/agents"} {
		ctx := request("GET", "/v1/sites/"+testSite+p, map[string]string{"X-API-Key": beacon})
		g.Handler(ctx)
		if ctx.Response.StatusCode() != 403 {
			t.Errorf("beacon id on %s: %d", p, ctx.Response.StatusCode())
		}
	}
	ctx = beaconRequest("POST", "/v1/leads", "application/json", `{"name":"x","email":"x@example.com"}`, map[string]string{"X-API-Key": beacon})
	g.Handler(ctx)
	if ctx.Response.StatusCode() != 403 {
		t.Errorf("beacon id submitting a lead: %d", ctx.Response.StatusCode())
	}
	// Prefetches reach the counter marked as such.
	ctx = beaconRequest("POST", path+"?k="+beacon, "text/plain", `{"listing": 8}`, map[string]string{"User-Agent": "UA", "Sec-Purpose": "prefetch;prerender"})
	g.Handler(ctx)
	if v := views.take(); len(v) != 1 || !v[0].prefetch {
		t.Errorf("prefetch %+v", v)
	}
	// A preflight from any page is answered.
	ctx = request("OPTIONS", path, map[string]string{"Origin": "https://any.example", "Access-Control-Request-Method": "POST",
		"Access-Control-Request-Headers": "content-type"})
	g.Handler(ctx)
	if ctx.Response.StatusCode() != 204 || string(ctx.Response.Header.Peek("Access-Control-Allow-Origin")) != "https://any.example" {
		t.Errorf("preflight %d %q", ctx.Response.StatusCode(), ctx.Response.Header.Peek("Access-Control-Allow-Origin"))
	}
}

func FuzzBeaconBody(f *testing.F) {
	for _, s := range []string{`{"listing": 42, "path": "/p"}`, `{"listing":"43"}`, `listing=44&path=%2Fp`, `listing=1&listing=2`,
		`{"listing": 1e3}`, `{"listing": "١٢"}`, `{"listing": null}`, `{}{}`, "listing=%ff", `{"listing": 9007199254740991}`} {
		f.Add(uint8(beaconJSON), s)
		f.Add(uint8(beaconForm), s)
	}
	f.Fuzz(func(t *testing.T, kind uint8, body string) {
		k := beaconBodyKind(kind%2 + 1)
		var b beacon
		if e := b.parseBody(k, []byte(body)); e != nil {
			if e.Code.Status() != 422 {
				t.Fatalf("error %v", e)
			}
			return
		}
		if b.listing < 1 || b.listing > maxListingRef {
			t.Fatalf("accepted listing %d from %q", b.listing, body)
		}
		// The pixel's query is the same parse as the form.
		var q fasthttp.Args
		q.Parse(body)
		var bq beacon
		if k == beaconForm && (bq.parseArgs(&q) != nil || bq.listing != b.listing) {
			t.Fatalf("form and query disagree on %q", body)
		}
	})
}
