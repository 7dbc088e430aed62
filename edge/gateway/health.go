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

func (g *Gateway) healthz(ctx *fasthttp.RequestCtx) {
	ctx.SetContentType("application/json; charset=utf-8")
	ctx.SetBodyString(`{"status":"ok"}`)
}

// readyz answers 200 while the origin's /readyz does.
func (g *Gateway) readyz(ctx *fasthttp.RequestCtx) {
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
