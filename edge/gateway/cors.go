package gateway

import (
	"bytes"
	"context"
	"net/netip"

	"github.com/fasthttp/router"
	"github.com/valyala/fasthttp"

	"github.com/listgate/listgate/edge/keycache"
	"github.com/listgate/listgate/pkg/apierror"
	"github.com/listgate/listgate/pkg/cors"
)

// CORS for browser clients (docs/api-reference.md, "CORS"). Each site
// lists the browser origins allowed to call the API with its keys. A
// preflight is answered here without a key: for a path with a site, only
// for that site's origins (from the key cache's site state, asking the
// origin only on a miss and only within the per-address public limit); for
// /v1/leads, whose key decides the site, for any origin. A response carries
// Access-Control-Allow-Origin only when the key's site allows the request's
// Origin, and every response of these routes carries Vary: Origin, so a
// shared cache never serves one origin's answer to another.

// SiteOrigins gives a site's allowed browser origins to preflights;
// *keycache.Cache satisfies it.
type SiteOrigins interface {
	CachedCORS(siteID string) ([]string, bool)
	SiteCORS(ctx context.Context, siteID string) ([]string, bool, error)
}

var _ SiteOrigins = (*keycache.Cache)(nil)

const (
	// corsAllowHeaders are the request headers a browser may send.
	corsAllowHeaders = "Authorization, X-API-Key, Content-Type, Idempotency-Key, If-None-Match, X-Request-Id"
	// corsExposeHeaders are the response headers a page may read.
	corsExposeHeaders = "ETag, X-Request-Id, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, RateLimit-Policy, RateLimit, Retry-After, X-Cache"
	// corsMaxAge is how long a browser may reuse a preflight's answer, in
	// seconds; origin list changes reach browsers within it.
	corsMaxAge = "600"
)

var (
	errOriginNotAllowed = apierror.Forbidden("this site does not allow requests from that origin")
	errNoCORSRoute      = apierror.NotFound("no route takes that method at this path")
)

// isPreflight reports whether ctx is a CORS preflight: OPTIONS with Origin
// and Access-Control-Request-Method.
func isPreflight(ctx *fasthttp.RequestCtx) bool {
	h := &ctx.Request.Header
	return h.IsOptions() && len(h.Peek("Origin")) > 0 && len(h.Peek("Access-Control-Request-Method")) > 0
}

// corsRoutes finds the route a preflight asks about; each handler leaves
// its route in the request's user values.
func corsRoutes() *router.Router {
	r := router.New()
	r.RedirectTrailingSlash, r.RedirectFixedPath = false, false
	for i := range routes {
		rt := &routes[i]
		if !rt.cors && !rt.beacon {
			continue
		}
		h := func(ctx *fasthttp.RequestCtx) { ctx.SetUserValue(corsRouteKey{}, rt) }
		r.Handle(rt.method, rt.path, h)
		if rt.method == fasthttp.MethodGet {
			r.Handle(fasthttp.MethodHead, rt.path, h)
		}
	}
	return r
}

type corsRouteKey struct{}

// preflight answers a CORS preflight.
func (g *Gateway) preflight(ctx *fasthttp.RequestCtx) {
	start := g.now()
	defer g.metrics.preflight.observe(ctx.Response.StatusCode(), start)
	g.requestID(ctx)
	h := &ctx.Response.Header
	h.Set("Vary", "Origin, Access-Control-Request-Method, Access-Control-Request-Headers")
	origin := ctx.Request.Header.Peek("Origin")
	method := string(ctx.Request.Header.Peek("Access-Control-Request-Method"))
	handler, _ := g.corsRouter.Lookup(method, string(ctx.Path()), ctx)
	if handler == nil {
		writeError(ctx, errNoCORSRoute)
		return
	}
	handler(ctx)
	rt := ctx.UserValue(corsRouteKey{}).(*route)
	if o, err := cors.Normalize(string(origin)); err != nil || o != string(origin) {
		writeError(ctx, errOriginNotAllowed) // not an origin a browser sends: never echoed
		return
	}
	if rt.site && !rt.beacon { // beacons come from any page (beacon.go)
		site, _ := ctx.UserValue("site").(string)
		allowed, e := g.siteAllows(ctx, site, origin)
		if e != nil {
			writeError(ctx, e)
			return
		}
		if !allowed {
			writeError(ctx, errOriginNotAllowed)
			return
		}
	}
	h.SetBytesV("Access-Control-Allow-Origin", origin)
	if rt.method == fasthttp.MethodGet {
		h.Set("Access-Control-Allow-Methods", "GET, HEAD")
	} else {
		h.Set("Access-Control-Allow-Methods", rt.method)
	}
	h.Set("Access-Control-Allow-Headers", corsAllowHeaders)
	h.Set("Access-Control-Max-Age", corsMaxAge)
	h.Set("Cache-Control", "no-store")
	ctx.SetStatusCode(fasthttp.StatusNoContent)
}

// siteAllows reports whether site allows origin: from the cache, or, for
// a site not cached, by asking the origin within the address's public
// limit (preflights need no key, so anyone can send them).
func (g *Gateway) siteAllows(ctx *fasthttp.RequestCtx, site string, origin []byte) (bool, *apierror.Error) {
	if !validSiteID(site) || g.cfg.Sites == nil {
		return false, nil
	}
	if list, ok := g.cfg.Sites.CachedCORS(site); ok {
		return cors.Allowed(list, origin), nil
	}
	ip := g.clientIP(ctx)
	if e := g.publicLimit(ctx, ip); e != nil {
		return false, e
	}
	list, found, err := g.cfg.Sites.SiteCORS(ctx, site)
	if err != nil {
		g.metrics.originErrors.Inc()
		g.log.WarnContext(logContext(ctx), "site origins unavailable", "err", err)
		return false, errOriginDown
	}
	return found && cors.Allowed(list, origin), nil
}

// publicLimit spends one of the address's requests on the routes that
// need no key.
func (g *Gateway) publicLimit(ctx *fasthttp.RequestCtx, ip netip.Addr) *apierror.Error {
	d := g.cfg.PublicLimiter.Allow(ctx, ip.String(), g.cfg.PublicLimit, g.now())
	if d.Allowed {
		return nil
	}
	e := *errPublicLimited
	e.RetryAfter = d.RetryAfter
	return &e
}

// corsHeaders adds Vary: Origin to a response of a CORS route and, when
// the key's site allows the request's Origin, the headers that let the page
// read it.
func corsHeaders(ctx *fasthttp.RequestCtx, info *keycache.Info, origin []byte, varyOrigin bool, raw *[]byte) {
	h := &ctx.Response.Header
	if !varyOrigin {
		addVary(h, "Origin")
	}
	if info == nil {
		return
	}
	if len(origin) == 0 || !cors.Allowed(info.CORS, origin) {
		return
	}
	if raw != nil {
		*raw = appendCORSHeaders(*raw, origin)
		return
	}
	h.SetBytesV("Access-Control-Allow-Origin", origin)
	h.Set("Access-Control-Expose-Headers", corsExposeHeaders)
}

// addVary adds name to the Vary header unless it is there.
func addVary(h *fasthttp.ResponseHeader, name string) {
	v := h.PeekBytes(hdrVary)
	if len(v) == 0 {
		h.SetCanonical(hdrVary, s2b(name))
		return
	}
	for rest := v; len(rest) > 0; {
		f := rest
		if i := bytes.IndexByte(rest, ','); i >= 0 {
			f, rest = rest[:i], rest[i+1:]
		} else {
			rest = nil
		}
		if len(bytes.TrimSpace(f)) == len(name) && bytes.EqualFold(bytes.TrimSpace(f), s2b(name)) {
			return
		}
	}
	var buf [128]byte
	h.SetCanonical(hdrVary, append(append(append(buf[:0], v...), ", "...), name...))
}

// validSiteID reports whether s has the form of a site id (a UUID), so a
// made-up one costs no origin call.
func validSiteID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case i == 8 || i == 13 || i == 18 || i == 23:
			if c != '-' {
				return false
			}
		case (c < '0' || c > '9') && (c < 'a' || c > 'f'):
			return false
		}
	}
	return true
}
