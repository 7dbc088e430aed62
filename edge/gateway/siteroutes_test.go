package gateway

import (
	"testing"

	"github.com/fasthttp/router"
	"github.com/valyala/fasthttp"
)

type testRouteKey struct{}

// tableRouter is the edge's router as New builds it, each handler leaving
// its route in the request's user values.
func tableRouter() *router.Router {
	r := router.New()
	r.RedirectTrailingSlash, r.RedirectFixedPath = false, false
	r.HandleOPTIONS, r.HandleMethodNotAllowed = true, true
	for i := range routes {
		rt := &routes[i]
		h := func(ctx *fasthttp.RequestCtx) { ctx.SetUserValue(testRouteKey{}, rt) }
		r.Handle(rt.method, rt.path, h)
		if rt.method == fasthttp.MethodGet {
			r.Handle(fasthttp.MethodHead, rt.path, h)
		}
	}
	r.Handle(fasthttp.MethodGet, "/healthz", func(*fasthttp.RequestCtx) {})
	r.Handle(fasthttp.MethodGet, "/readyz", func(*fasthttp.RequestCtx) {})
	return r
}

// What siteRoutes takes, the router would give the same route and {site}.
func FuzzSiteRoutes(f *testing.F) {
	for _, p := range []string{"/v1/sites/" + testSite + "/listings", "/v1/sites/s/agents", "/v1/sites/s/stats/summary",
		"/v1/sites/s/listings/x", "/v1/sites//listings", "/v1/sites/s/listings/", "/v1/sites/s/views.gif", "/v1/sites/s",
		"/V1/sites/s/listings", "/v1/sites/s/Listings", "/v1/sites/s/media/1", "/v1/sites/s%2Fx/listings"} {
		for m := range uint8(4) {
			f.Add(m, p)
		}
	}
	g, _ := newTestGateway(f, mustKey(f), 0)
	r := tableRouter()
	methods := []string{"GET", "HEAD", "POST", "OPTIONS"}
	f.Fuzz(func(t *testing.T, m uint8, path string) {
		method := methods[int(m)%len(methods)]
		sr, site, ok := g.siteRoutes.match([]byte(method), []byte(path))
		if !ok {
			return
		}
		var ctx fasthttp.RequestCtx
		ctx.Request.Header.SetMethod(method)
		ctx.Request.URI().SetPathBytes([]byte(path))
		if string(ctx.Request.URI().PathOriginal()) != path {
			return // not a path the router could see
		}
		r.Handler(&ctx)
		rt, _ := ctx.UserValue(testRouteKey{}).(*route)
		routerSite, _ := ctx.UserValue("site").(string)
		if rt != sr.rt || routerSite != string(site) {
			t.Fatalf("%s %q: siteRoutes gives %s {site} %q, the router %v {site} %q", method, path, sr.rt.name, site, rt, routerSite)
		}
	})
}

// Every GET route that takes only {site} is served without the router, and
// the site's other routes are not.
func TestSiteRoutesTable(t *testing.T) {
	g, _ := newTestGateway(t, mustKey(t), 0)
	for _, want := range []string{"listings", "listings_search", "listings_featured", "fields", "media", "agents", "stats", "stats_listings"} {
		found := false
		for _, sr := range g.siteRoutes {
			found = found || sr.rt.name == want
		}
		if !found {
			t.Errorf("route %s is not in siteRoutes", want)
		}
	}
	for _, sr := range g.siteRoutes {
		if sr.rt.beacon || sr.rt.method != "GET" || sr.m == nil {
			t.Errorf("siteRoutes holds %s", sr.rt.name)
		}
	}
	if len(g.siteRoutes) != 8 {
		t.Errorf("%d site routes, want 8", len(g.siteRoutes))
	}
}
