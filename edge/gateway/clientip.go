package gateway

import (
	"bytes"
	"net/netip"

	"github.com/valyala/fasthttp"
)

// clientIP is the connection's peer, or, when the peer is a trusted proxy,
// the rightmost address of X-Forwarded-For that is not a trusted proxy.
func (g *Gateway) clientIP(ctx *fasthttp.RequestCtx) netip.Addr {
	peer, _ := netip.AddrFromSlice(ctx.RemoteIP())
	peer = peer.Unmap()
	if !g.trusted(peer) {
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
	peer, _ := netip.AddrFromSlice(ctx.RemoteIP())
	if !g.trusted(peer.Unmap()) {
		ctx.Request.Header.Del("X-Forwarded-Proto")
		hdr.forwardedProto = nil
	}
}
