// Package gateway is the edge's request path (DESIGN.md §2), on fasthttp
// and fasthttp/router: route match, credential, offline key check, key
// cache, site, scope, rate limit, then the response cache or the origin.
// Each step is a small function and their order is the contract; every
// error is the API's envelope.
package gateway

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/netip"
	"runtime/debug"
	"strconv"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/VictoriaMetrics/metrics"
	"github.com/fasthttp/router"
	"github.com/valyala/fasthttp"
	"go.opentelemetry.io/otel/trace"

	"github.com/listgate/listgate/edge/keycache"
	"github.com/listgate/listgate/edge/respcache"
	"github.com/listgate/listgate/edge/upstream"
	"github.com/listgate/listgate/pkg/apierror"
	"github.com/listgate/listgate/pkg/ratelimit"
)

// Limiter decides whether a request fits a limit; pkg/ratelimit's local and
// Redis limiters satisfy it.
type Limiter interface {
	Allow(ctx context.Context, key string, limit int, now time.Time) ratelimit.Decision
}

// UsageCounter counts a site's requests per minute; *usage.Reporter
// satisfies it.
type UsageCounter interface {
	Count(site string, now time.Time)
}

// Keys looks up keys by hash; *keycache.Cache satisfies it. Cached answers
// from what is cached only; Lookup asks the origin on a miss; Known says
// whether the key was active lately.
type Keys interface {
	Cached(hash *[32]byte) (keycache.Info, bool)
	Known(hash [32]byte) bool
	Lookup(ctx context.Context, hash [32]byte) (keycache.Info, error)
}

var _ Keys = (*keycache.Cache)(nil)

// Config holds what New needs. Fields document their defaults.
type Config struct {
	// Origins is the client to the origins: every forwarded request and
	// cache fill goes through it. Required.
	Origins *upstream.Origins
	Keys    Keys
	// Sites gives preflights the sites' allowed browser origins; nil
	// refuses every preflight of a path with a site.
	Sites SiteOrigins
	// Limiter enforces the sites' plan limits.
	Limiter Limiter
	// PublicLimiter and PublicLimit bound the routes that need no key, per
	// client IP. PublicLimit default 120 per minute.
	PublicLimiter Limiter
	PublicLimit   int
	// TrustedProxies are the peers whose X-Forwarded-For is believed.
	TrustedProxies []netip.Prefix
	// OriginTimeout bounds each forwarded request. Default 30 s.
	OriginTimeout time.Duration
	// MaxResponseBytes bounds an origin response. Default 64 MiB.
	MaxResponseBytes int
	// MaxUploadBytes bounds a feed upload, streamed to the origin. Default
	// 50 MiB.
	MaxUploadBytes int
	// UploadTimeout bounds receiving a feed upload and passing it on.
	// Default 5 min.
	UploadTimeout time.Duration
	// MaxUploads bounds the feed uploads streaming at once, one per client
	// address. Default 4.
	MaxUploads int
	// UploadIdleTimeout bounds each wait for more of an upload's body.
	// Default 10 s.
	UploadIdleTimeout time.Duration
	// AuthFailureLimit is the failed authentications per client address
	// and minute past which uncached keys are refused (429) without an
	// origin call, but for one in twenty. Default 20.
	AuthFailureLimit int
	// Cache serves cacheable reads; nil turns caching off.
	Cache *respcache.Cache
	// Usage counts each site's authenticated requests; nil counts nothing.
	Usage UsageCounter
	// Views counts listing view beacons (beacon.go); nil answers the beacon
	// routes 404.
	Views ViewCounter
	// Log receives internal errors and state changes. Nil: slog.Default().
	Log *slog.Logger
	// Now is the clock. Nil: time.Now.
	Now func() time.Time
	// Tracer, when set, traces every request: a server span each, a
	// client span for each request to the origin (trace.go). Nil: tracing
	// off, and nothing of it runs on the cache-hit path.
	Tracer trace.Tracer
}

// Gateway serves the public API. Safe for concurrent use.
type Gateway struct {
	cfg Config
	log *slog.Logger
	now func() time.Time
	// fakeClock is set when Config.Now is: the request path then asks now
	// instead of taking the time it read for its metrics.
	fakeClock bool
	origin    *upstream.Origins
	router    *router.Router
	// corsRouter finds the route a CORS preflight asks about.
	corsRouter *router.Router
	// siteRoutes serves the site's GET routes without the router.
	siteRoutes siteRoutes
	idPrefix   []byte
	idSeq      atomic.Uint64
	metrics    *gatewayMetrics
	cache      *respcache.Cache
	// synced reports whether the event stream is followed (SetSynced).
	synced atomic.Pointer[func() bool]
	// uploads holds a token per feed upload streaming now; uploaders the
	// client addresses uploading.
	uploads   chan struct{}
	uploaders uploaders
	// authFails counts failed authentications per client address;
	// authSample lets one in twenty of an over-limit address's uncached keys
	// through to the origin.
	authFails  *ratelimit.Local
	authSample atomic.Uint64
	// tracer is Config.Tracer; nil is tracing off.
	tracer trace.Tracer
	// rateLines are the rate-limit lines of the limits in use, made once
	// a window (appendRateHeaders).
	rateLines rateLineCache
	// missed, when set (by tests), runs after a cache miss and before the
	// request joins or leads its key's origin request.
	missed func()
}

// New builds the gateway and its route table.
func New(cfg Config) (*Gateway, error) {
	if cfg.Origins == nil || cfg.Keys == nil || cfg.Limiter == nil || cfg.PublicLimiter == nil {
		return nil, fmt.Errorf("gateway: Origins, Keys, Limiter and PublicLimiter are required")
	}
	if cfg.PublicLimit <= 0 {
		cfg.PublicLimit = 120
	}
	if cfg.OriginTimeout <= 0 {
		cfg.OriginTimeout = 30 * time.Second
	}
	if cfg.MaxResponseBytes <= 0 {
		cfg.MaxResponseBytes = 64 << 20
	}
	if cfg.MaxUploadBytes <= 0 {
		cfg.MaxUploadBytes = 50 << 20
	}
	if cfg.UploadTimeout <= 0 {
		cfg.UploadTimeout = 5 * time.Minute
	}
	if cfg.MaxUploads <= 0 {
		cfg.MaxUploads = 4
	}
	if cfg.UploadIdleTimeout <= 0 {
		cfg.UploadIdleTimeout = 10 * time.Second
	}
	if cfg.AuthFailureLimit <= 0 {
		cfg.AuthFailureLimit = 20
	}
	g := &Gateway{cfg: cfg, log: cfg.Log, now: cfg.Now, metrics: newMetrics(), cache: cfg.Cache, siteRoutes: siteRoutes{},
		uploads:   make(chan struct{}, cfg.MaxUploads),
		authFails: ratelimit.NewLocal(ratelimit.LocalOptions{Metrics: metrics.NewSet()})}
	if g.log == nil {
		g.log = slog.Default()
	}
	g.fakeClock = g.now != nil
	if g.now == nil {
		g.now = time.Now
	}
	g.origin = cfg.Origins
	g.tracer = cfg.Tracer
	var p [6]byte
	rand.Read(p[:])
	g.idPrefix = []byte(hex.EncodeToString(p[:]) + "-")

	r := router.New()
	r.RedirectTrailingSlash = false
	r.RedirectFixedPath = false
	// OPTIONS is answered with Allow (RFC 9110 §9.3.7); every GET route
	// serves HEAD: the same status and headers, no body (§9.3.2).
	r.HandleOPTIONS = true
	r.HandleMethodNotAllowed = true
	handle := func(method, path string, h fasthttp.RequestHandler) {
		r.Handle(method, path, h)
		if method == fasthttp.MethodGet {
			r.Handle(fasthttp.MethodHead, path, h)
		}
	}
	for i := range routes {
		rt := &routes[i]
		m := g.metrics.route(rt.name)
		if rt.beacon {
			handle(rt.method, rt.path, func(ctx *fasthttp.RequestCtx) { g.serveBeacon(ctx, rt, m) })
			continue
		}
		handle(rt.method, rt.path, func(ctx *fasthttp.RequestCtx) {
			site, _ := ctx.UserValue("site").(string)
			g.serve(ctx, rt, m, site)
		})
		g.siteRoutes.add(rt, m)
	}
	handle("GET", "/healthz", g.healthz)
	handle("GET", "/readyz", g.readyz)
	unmatched := g.metrics.route("unmatched")
	r.NotFound = func(ctx *fasthttp.RequestCtx) {
		start := time.Now()
		g.requestID(ctx)
		writeError(ctx, errNotFound)
		unmatched.observe(ctx.Response.StatusCode(), start)
	}
	r.MethodNotAllowed = func(ctx *fasthttp.RequestCtx) {
		start := time.Now()
		g.requestID(ctx)
		writeError(ctx, errMethodNotAllowed)
		unmatched.observe(ctx.Response.StatusCode(), start)
	}
	g.router = r
	g.corsRouter = corsRoutes()
	return g, nil
}

var errMethodNotAllowed = apierror.New(apierror.CodeMethodNotAllowed, "")

// Handler is the root handler: one parse of the request target, then the
// router, behind a panic guard. A body left unread is dropped, or ends the
// connection (endUnreadBody).
func (g *Gateway) Handler(ctx *fasthttp.RequestCtx) {
	if g.tracer != nil && traced(ctx) {
		// Deferred first, so it ends the span after a panic's 500.
		defer endTrace(ctx, g.startTrace(ctx))
	}
	defer func() {
		if v := recover(); v != nil {
			g.log.ErrorContext(logContext(ctx), "panic", "panic", fmt.Sprint(v), "stack", string(debug.Stack()), "path", string(ctx.URI().PathOriginal()))
			writeError(ctx, errInternal)
		}
		if ctx.RequestBodyStream() != nil && hasBody(&ctx.Request.Header) {
			endUnreadBody(ctx)
		}
	}()
	if e := canonicalTarget(ctx); e != nil {
		g.requestID(ctx)
		writeError(ctx, e)
		return
	}
	if isPreflight(ctx) {
		g.preflight(ctx)
		return
	}
	if sr, site, ok := g.siteRoutes.match(ctx.Request.Header.Method(), ctx.URI().PathOriginal()); ok {
		g.serve(ctx, sr.rt, sr.m, b2s(site))
		return
	}
	g.router.Handler(ctx)
}

// serve is the request path of one API route: its steps (pass) return the
// error that ends the request, and serve alone writes it. site is the
// path's {site} (empty for routes without one); its bytes are the
// request's.
func (g *Gateway) serve(ctx *fasthttp.RequestCtx, rt *route, m *routeMetrics, site string) {
	start := time.Now()
	// One reading of the clock serves the request: the limiter, usage,
	// the cache's freshness and the metrics' start.
	st := passState{now: start, site: site}
	if g.fakeClock {
		st.now = g.now()
	}
	st.hdr.read(&ctx.Request.Header)
	if st.hdr.seen&seenForwardedProto != 0 {
		g.dropUntrustedProto(ctx, &st.hdr)
	}
	g.setRequestID(ctx, st.hdr.requestID)
	if e := g.pass(ctx, rt, &st); e != nil {
		st.raw = nil
		writeError(ctx, e)
	}
	if g.tracer != nil {
		g.traceRoute(ctx, rt, &st)
	}
	if st.limited {
		if st.raw != nil {
			*st.raw = appendRateHeaders(*st.raw, st.dec, st.now, &g.rateLines)
		} else {
			setRateHeaders(&ctx.Response.Header, st.dec, st.now)
		}
	}
	if rt.cors {
		if st.authenticated {
			corsHeaders(ctx, &st.info, st.hdr.origin, st.varyOrigin, st.raw)
		} else {
			corsHeaders(ctx, nil, nil, st.varyOrigin, st.raw)
		}
	}
	m.observe(ctx.Response.StatusCode(), start)
}

// passState is what pass learned that serve adds to any answer: the key
// (for CORS) and the rate-limit decision (for its headers).
type passState struct {
	info          keycache.Info
	authenticated bool
	dec           ratelimit.Decision
	limited       bool
	// now is the request's time: the limiter decided at it (RateLimit's t).
	now time.Time
	// hdr is the request headers the path decides on, read once.
	hdr reqHeaders
	// varyOrigin is set when the answer's Vary names Origin already.
	varyOrigin bool
	// site is the path's {site}.
	site string
	// raw, when set, takes the answer's headers as lines (rawHeaders).
	raw *[]byte
}

// pass takes a request through DESIGN.md §2's checks in order — body size,
// the per-address limit of public routes, the key, its site and scope, the
// site's rate limit, the body — and answers it from the cache or the
// origin; it returns the error that ends the request instead.
func (g *Gateway) pass(ctx *fasthttp.RequestCtx, rt *route, st *passState) *apierror.Error {
	if e := checkBodySize(ctx, rt.maxBody); e != nil && !rt.upload {
		return e
	}
	ip := g.clientIP(ctx)
	if rt.public {
		if e := g.publicLimit(ctx, ip); e != nil {
			return e
		}
		if rt.upload {
			return g.forwardUpload(ctx, rt, ip)
		}
		if e := readBody(ctx, rt.maxBody); e != nil {
			return e
		}
		return g.forward(ctx, rt, nil, ip)
	}

	key, e := parseCredential(st.hdr.authorization, st.hdr.apiKey)
	if e != nil {
		return e
	}
	info, e := g.authenticateKey(ctx, key, ip)
	if e != nil {
		return e
	}
	st.info, st.authenticated = info, true
	if rt.site {
		if st.site != info.SiteID {
			return errWrongSite
		}
	}
	if rt.scope != 0 && !info.Scopes.Has(rt.scope) {
		return scopeErrors[uint8(rt.scope)]
	}
	now := st.now
	if g.cfg.Usage != nil {
		g.cfg.Usage.Count(info.SiteID, now)
	}
	st.dec = g.cfg.Limiter.Allow(ctx, info.SiteID, info.Limit, now)
	st.limited = !st.dec.Unlimited
	if !st.dec.Allowed {
		return apierror.RateLimited(st.dec.RetryAfter)
	}
	if e := readBody(ctx, rt.maxBody); e != nil {
		return e
	}
	if rt.cacheable && g.cache != nil {
		return g.serveCacheable(ctx, rt, ip, st)
	}
	return g.forward(ctx, rt, &st.info, ip)
}

// setRateHeaders writes the rate-limit headers of an authenticated
// response: the X-RateLimit-* the API has always sent, and the same
// decision as draft-ietf-httpapi-ratelimit-headers' structured fields,
//
//	RateLimit-Policy: "site";q=60;w=60
//	RateLimit: "site";r=59;t=17
//
// (the site's quota per window of w seconds; what is left of it and the
// seconds until the window ends). Formatted into a stack buffer: the hit
// path allocates nothing here.
func setRateHeaders(h *fasthttp.ResponseHeader, d ratelimit.Decision, now time.Time) {
	var buf [64]byte
	h.SetCanonical(hdrXRateLimitLimit, strconv.AppendInt(buf[:0], int64(d.Limit), 10))
	h.SetCanonical(hdrXRateLimitRemain, strconv.AppendInt(buf[:0], int64(d.Remaining), 10))
	h.SetCanonical(hdrXRateLimitReset, strconv.AppendInt(buf[:0], d.Reset.Unix(), 10))
	b := append(buf[:0], ratePolicyPrefix...)
	b = strconv.AppendInt(b, int64(d.Limit), 10)
	b = append(b, rateWindowParam...)
	h.SetCanonical(hdrRateLimitPolicy, b)
	b = append(buf[:0], rateRemainingPrefix...)
	b = strconv.AppendInt(b, int64(max(d.Remaining, 0)), 10)
	b = append(b, ";t="...)
	h.SetCanonical(hdrRateLimit, strconv.AppendInt(b, rateResetSeconds(d, now), 10))
}

// The policy's name in RateLimit-Policy and RateLimit: the limit is the
// site's, shared by all its keys.
const (
	ratePolicyPrefix    = `"site";q=`
	rateRemainingPrefix = `"site";r=`
)

// rateWindowParam is the w parameter: the window in seconds.
var rateWindowParam = ";w=" + strconv.Itoa(int(ratelimit.Window/time.Second))

// rateResetSeconds is RateLimit's t: the whole seconds from now until the
// window ends, rounded up (a client that waits that long is in the next
// window), never negative; a rejection's Retry-After exactly.
func rateResetSeconds(d ratelimit.Decision, now time.Time) int64 {
	if d.RetryAfter > 0 {
		return int64(d.RetryAfter)
	}
	left := d.Reset.Sub(now)
	if left <= 0 {
		return 0
	}
	return int64((left + time.Second - 1) / time.Second)
}

// requestID takes the client's X-Request-Id when it is sane, or makes one,
// and sets it on the response, where everything that needs it reads it
// (requestIDOf).
func (g *Gateway) requestID(ctx *fasthttp.RequestCtx) {
	g.setRequestID(ctx, ctx.Request.Header.Peek("X-Request-Id"))
}

// setRequestID is requestID with the client's X-Request-Id already read.
func (g *Gateway) setRequestID(ctx *fasthttp.RequestCtx, id []byte) {
	if validRequestID(id) {
		ctx.Response.Header.SetCanonical(hdrXRequestID, id)
		return
	}
	var buf [64]byte
	ctx.Response.Header.SetCanonical(hdrXRequestID, strconv.AppendUint(append(buf[:0], g.idPrefix...), g.idSeq.Add(1), 36))
}

// requestIDOf is the response's request id. The bytes belong to the header:
// use them before the next change of the response headers.
func requestIDOf(ctx *fasthttp.RequestCtx) []byte { return ctx.Response.Header.Peek("X-Request-Id") }

func validRequestID(id []byte) bool {
	if len(id) == 0 || len(id) > 64 {
		return false
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// b2s views bytes as a string without copying; the string must not outlive
// the bytes.
func b2s(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }
