package gateway

import (
	"github.com/valyala/fasthttp"

	"github.com/listgate/listgate/pkg/apierror"
)

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

// readyz answers 200 while the event stream is followed and an origin's
// /readyz answers 200 (the origins' client checks them every second).
func (g *Gateway) readyz(ctx *fasthttp.RequestCtx) {
	if f := g.synced.Load(); f != nil && !(*f)() {
		g.requestID(ctx)
		writeError(ctx, errNotSynced)
		return
	}
	if !g.origin.Ready() {
		g.requestID(ctx)
		writeError(ctx, apierror.Unavailable(1, nil))
		return
	}
	ctx.SetContentType("application/json; charset=utf-8")
	ctx.SetBodyString(`{"status":"ready"}`)
}
