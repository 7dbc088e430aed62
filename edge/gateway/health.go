package gateway

import (
	"sync"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/listgate/listgate/pkg/apierror"
)

// readiness remembers the origin's last answer for a second, so probes do
// not turn into a load on the origin.
type readiness struct {
	mu      sync.Mutex
	checked time.Time
	ok      bool
}

var errNotSynced = apierror.New(apierror.CodeServiceUnavailable, "not yet following the origin's event stream")

func init() { errNotSynced.RetryAfter = 1 }

func (g *Gateway) healthz(ctx *fasthttp.RequestCtx) {
	ctx.SetContentType("application/json; charset=utf-8")
	ctx.SetBodyString(`{"status":"ok"}`)
}

// SetSynced gives readyz what tells whether the edge follows the origin's
// event stream: until it does, the edge could serve revoked keys and old
// pages from its caches, and a load balancer should wait.
func (g *Gateway) SetSynced(synced func() bool) { g.synced.Store(&synced) }

// readyz answers 200 while the event stream is connected and the origin's
// /readyz answers 200.
func (g *Gateway) readyz(ctx *fasthttp.RequestCtx) {
	if f := g.synced.Load(); f != nil && !(*f)() {
		g.requestID(ctx)
		writeError(ctx, errNotSynced)
		return
	}
	if !g.originReady() {
		g.requestID(ctx)
		writeError(ctx, apierror.Unavailable(1, nil))
		return
	}
	ctx.SetContentType("application/json; charset=utf-8")
	ctx.SetBodyString(`{"status":"ready"}`)
}

func (g *Gateway) originReady() bool {
	g.ready.mu.Lock()
	defer g.ready.mu.Unlock()
	if time.Since(g.ready.checked) < time.Second {
		return g.ready.ok
	}
	req := fasthttp.AcquireRequest()
	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.SetRequestURI("http://" + g.origin.Addr + "/readyz")
	err := g.origin.DoTimeout(req, resp, 2*time.Second)
	g.ready.ok = err == nil && resp.StatusCode() == 200
	g.ready.checked = time.Now()
	return g.ready.ok
}
