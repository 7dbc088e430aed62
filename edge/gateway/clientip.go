package gateway

import (
	"bytes"
	"net/netip"

	"github.com/valyala/fasthttp"
)

// clientIP is the connection's peer, or, when the peer is a trusted proxy,
// the rightmost address of X-Forwarded-For that is not a trusted proxy.
func (g *Gateway) clientIP(ctx *fasthttp.RequestCtx) netip.Addr {
	peer, trusted := g.peer(ctx)
	if !trusted {
		return peer
	}
	xff := ctx.Request.Header.Peek("X-Forwarded-For")
	for len(xff) > 0 {
		i := bytes.LastIndexByte(xff, ',')
		part := bytes.TrimSpace(xff[i+1:])
		xff = xff[:max(i, 0)]
		a, err := netip.ParseAddr(string(part))
		if err != nil {
			return peer
		}
		a = a.Unmap()
		if !g.trusted(a) {
			return a
		}
		if i < 0 {
			break
		}
	}
	return peer
}

// peer is the connection's peer address and whether it is a trusted
// proxy, worked out once per connection when the connection keeps state.
func (g *Gateway) peer(ctx *fasthttp.RequestCtx) (netip.Addr, bool) {
	c, ok := ctx.Conn().(connStater)
	if !ok {
		return g.peerOf(ctx)
	}
	s := c.GatewayState()
	if !s.peerSet {
		s.peer, s.peerTrusted = g.peerOf(ctx)
		s.peerSet = true
	}
	return s.peer, s.peerTrusted
}

func (g *Gateway) peerOf(ctx *fasthttp.RequestCtx) (netip.Addr, bool) {
	a, _ := netip.AddrFromSlice(ctx.RemoteIP())
	a = a.Unmap()
	return a, g.trusted(a)
}

func (g *Gateway) trusted(a netip.Addr) bool {
	for _, p := range g.cfg.TrustedProxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// dropUntrustedProto deletes X-Forwarded-Proto, which the request has,
// unless a trusted proxy sent it: the origin believes it (HSTS, Secure
// cookies) on forwarded requests.
func (g *Gateway) dropUntrustedProto(ctx *fasthttp.RequestCtx, hdr *reqHeaders) {
	if _, trusted := g.peer(ctx); !trusted {
		ctx.Request.Header.Del("X-Forwarded-Proto")
		hdr.forwardedProto = nil
	}
}
