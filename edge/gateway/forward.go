package gateway

import (
	"bytes"
	"net/netip"

	"github.com/valyala/fasthttp"

	"github.com/listgate/listgate/edge/keycache"
	"github.com/listgate/listgate/pkg/apierror"
	"github.com/listgate/listgate/pkg/internalapi"
)

// Headers between the edge and the origin. The origin believes the identity
// headers only with the internal token; the edge drops whatever a client
// sent under these names.
const (
	hdrSite     = internalapi.HeaderSite
	hdrKeyID    = internalapi.HeaderKeyID
	hdrScopes   = internalapi.HeaderScopes
	hdrClientIP = internalapi.HeaderClientIP
)

var listgatePrefix = []byte(internalapi.HeaderPrefix)

// hopHeaders are hop-by-hop headers (RFC 9110 §7.6.1), never forwarded.
var hopHeaders = []string{"Connection", "Keep-Alive", "Proxy-Connection", "Proxy-Authenticate",
	"Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

// forward sends the request to the origin with the edge's identity headers
// and copies the origin's answer back. info is nil on public routes. An
// origin that cannot be reached is errOriginDown.
func (g *Gateway) forward(ctx *fasthttp.RequestCtx, rt *route, info *keycache.Info, ip netip.Addr) *apierror.Error {
	req := fasthttp.AcquireRequest()
	defer fasthttp.ReleaseRequest(req)
	ctx.Request.CopyTo(req)
	g.prepare(req, info, requestIDOf(ctx), ip)
	return g.exchange(ctx, rt, req)
}

// exchange sends a prepared request and copies the answer into ctx, whose
// request id it keeps.
func (g *Gateway) exchange(ctx *fasthttp.RequestCtx, rt *route, req *fasthttp.Request) *apierror.Error {
	resp := &ctx.Response
	span := g.originSpan(traceParentOf(ctx), req)
	err := g.origin.Do(req, resp, g.cfg.OriginTimeout)
	endOriginSpan(span, resp, err)
	// Do replaced the response headers; the id is on the origin request.
	resp.Header.SetBytesV("X-Request-Id", req.Header.Peek("X-Request-Id"))
	if err != nil {
		return g.originFailed(ctx, rt, err)
	}
	for _, name := range hopHeaders {
		resp.Header.Del(name)
	}
	return nil
}

// originFailed logs a request the origin could not answer and returns its
// 503.
func (g *Gateway) originFailed(ctx *fasthttp.RequestCtx, rt *route, err error) *apierror.Error {
	g.metrics.originErrors.Inc()
	g.log.WarnContext(logContext(ctx), "origin unreachable", "err", err, "route", rt.name)
	return errOriginDown
}

// prepare turns a client's request into the origin's: hop-by-hop and
// client-sent X-Listgate-* headers out, the key out and the identity in
// (info nil: a public route), the request id and client IP, the client's
// trace headers only when valid (with tracing on, originSpan replaces
// them). The origins' client sets the scheme, host and internal token,
// whatever an absolute-form target said.
func (g *Gateway) prepare(req *fasthttp.Request, info *keycache.Info, reqID []byte, ip netip.Addr) {
	h := &req.Header
	for _, name := range hopHeaders {
		h.Del(name)
	}
	stripListgateHeaders(h)
	sanitizeTraceHeaders(h)
	if info != nil {
		// The key stays at the edge: the origin gets the identity.
		h.Del("Authorization")
		h.Del("X-API-Key")
		h.Set(hdrSite, info.SiteID)
		h.Set(hdrKeyID, info.KeyID)
		h.Set(hdrScopes, info.Scopes.String())
	}
	h.SetBytesV("X-Request-Id", reqID)
	var ipBuf [64]byte
	h.SetBytesV(hdrClientIP, ip.AppendTo(ipBuf[:0]))
}

// stripListgateHeaders deletes every X-Listgate-* header a client sent.
func stripListgateHeaders(h *fasthttp.RequestHeader) {
	for {
		var found []byte
		for k := range h.All() {
			if len(k) >= len(listgatePrefix) && bytes.EqualFold(k[:len(listgatePrefix)], listgatePrefix) {
				found = append(found[:0], k...)
				break
			}
		}
		if found == nil {
			return
		}
		h.DelBytes(found)
	}
}
