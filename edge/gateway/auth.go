package gateway

import (
	"context"
	"net/netip"

	"github.com/valyala/fasthttp"

	"github.com/listgate/listgate/edge/keycache"
	"github.com/listgate/listgate/pkg/apierror"
	"github.com/listgate/listgate/pkg/apikey"
)

// authSampleEvery: one in this many uncached keys from an address over its
// failure limit still reaches the origin, so that address's valid keys get
// through (and are cached from then on).
const authSampleEvery = 20

var errAuthThrottled = apierror.New(apierror.CodeRateLimitExceeded, "too many failed authentications from this address")

// authenticate reads the request's key and returns what is known of it
// (DESIGN.md §2, steps 2–3). A malformed key is refused offline; a key the
// cache holds, negative answers included, costs no origin call; an
// uncached key is introspected. Introspections that find no active key are
// counted per client address: past AuthFailureLimit in a minute, uncached
// keys from that address are refused with 429 without asking the origin,
// all but one in authSampleEvery, unless the key was active lately
// (Known), so that an attacker sharing an address cannot lock out the keys
// in use there. An origin that cannot answer is a 503, never a 401.
func (g *Gateway) authenticate(ctx *fasthttp.RequestCtx, ip netip.Addr) (keycache.Info, *apierror.Error) {
	key, e := credential(&ctx.Request.Header)
	if e != nil {
		return keycache.Info{}, e
	}
	return g.authenticateKey(ctx, key, ip)
}

// authenticateKey is authenticate for a key read from the request: the
// key cache, the offline check and the origin on a miss.
func (g *Gateway) authenticateKey(ctx *fasthttp.RequestCtx, key []byte, ip netip.Addr) (keycache.Info, *apierror.Error) {
	// A key of another length is refused before it is hashed (the hash's
	// work is bounded by the length); the rest of the offline check — its
	// alphabet and checksum — runs only for a key the cache does not hold:
	// only keys that passed it were ever looked up, and so cached.
	if len(key) != apikey.Len {
		g.metrics.offlineRejects.Inc()
		return keycache.Info{}, errInvalidKey
	}
	hp := keyHash(ctx, key)
	hash := *hp
	info, ok := g.cfg.Keys.Cached(hp)
	if !ok {
		if !apikey.ValidBytes(key) {
			g.metrics.offlineRejects.Inc()
			return keycache.Info{}, errInvalidKey
		}
		if e := g.authThrottled(ip, hash); e != nil {
			return keycache.Info{}, e
		}
		var err error
		if info, err = g.cfg.Keys.Lookup(ctx, hash); err != nil {
			g.metrics.originErrors.Inc()
			return keycache.Info{}, errOriginDown
		}
		if !info.Active {
			g.authFailed(ip)
		}
	}
	if !info.Active {
		return keycache.Info{}, errInvalidKey
	}
	return info, nil
}

// authFailed counts an introspection that found no active key against the
// client address.
func (g *Gateway) authFailed(ip netip.Addr) {
	g.authFails.Allow(context.Background(), ip.String(), g.cfg.AuthFailureLimit, g.now())
}

// authThrottled refuses an uncached key from an address over its failure
// limit, but for one in authSampleEvery and for keys active lately.
func (g *Gateway) authThrottled(ip netip.Addr, hash [32]byte) *apierror.Error {
	now := g.now()
	if g.authFails.Used(ip.String(), now) < g.cfg.AuthFailureLimit || g.cfg.Keys.Known(hash) {
		return nil
	}
	if g.authSample.Add(1)%authSampleEvery == 0 {
		return nil
	}
	g.metrics.authThrottled.Inc()
	e := *errAuthThrottled
	e.RetryAfter = max(1, 60-int(now.Unix()%60))
	return &e
}

// ConnState is what the gateway keeps of a client connection between its
// requests: the last key presented on it and that key's SHA-256, so that a
// keep-alive client sending one key hashes it once per connection, not once
// per request, and its peer. Only the connection's own goroutine uses it.
type ConnState struct {
	key  [apikey.Len]byte
	hash [32]byte
	set  bool
	// The peer's address and whether it is a trusted proxy (clientIP).
	peer                 netip.Addr
	peerSet, peerTrusted bool
	// raw is the current answer's header lines (rawHeaders).
	raw []byte
	// splicing is set from when an answer with lines to splice in is
	// begun until its headers are sent with them (setGatheredBody).
	splicing bool
}

// Splicing reports whether the answer being written has header lines to
// splice into its headers that are not in yet. Until they are, the
// connection must keep what is written to it instead of sending it: a
// write buffer that fills up while fasthttp writes the answer's headers
// (behind pipelined answers) is flushed with the headers cut anywhere,
// and once the end of a header line has left, nothing can be spliced
// before it. The connection sends what it kept with the answer
// (edge/connlimit.go, WriteWithBuffered).
func (s *ConnState) Splicing() bool { return s.splicing }

// connStater is a client connection carrying a ConnState: the edge's
// listeners hand out such connections (edge/connlimit.go).
type connStater interface{ GatewayState() *ConnState }

// keyHash is the SHA-256 of key, a key of apikey.Len bytes, from the
// connection's last one when it is the same key. The hash is the
// connection's (on the heap already: the key cache's look-up takes its
// address).
func keyHash(ctx *fasthttp.RequestCtx, key []byte) *[32]byte {
	c, ok := ctx.Conn().(connStater)
	if !ok {
		h := apikey.HashBytes(key)
		return &h
	}
	s := c.GatewayState()
	if s.set && string(s.key[:]) == string(key) {
		return &s.hash
	}
	s.hash, s.set = apikey.HashBytes(key), true
	copy(s.key[:], key)
	return &s.hash
}
