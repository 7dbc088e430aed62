package gateway

import (
	"bytes"
	"context"
	"net/netip"
	"sync"
	"time"
	"unsafe"

	json "github.com/goccy/go-json"
	"github.com/valyala/fasthttp"

	"github.com/listgate/listgate/edge/keycache"
	"github.com/listgate/listgate/edge/respcache"
	"github.com/listgate/listgate/edge/target"
	"github.com/listgate/listgate/pkg/apierror"
	"github.com/listgate/listgate/pkg/logctx"
)

// queryErrors answer the queries the cache cannot key, as the origin
// answers the same queries (422).
var queryErrors = map[error]*apierror.Error{
	target.ErrMalformedQuery: apierror.Validation(map[string]string{"query": "malformed query string"}),
	target.ErrTooManyParams:  apierror.Validation(map[string]string{"query": "too many parameters"}),
	// As the origin words a repeated parameter (origin/listings/query.go).
	target.ErrRepeatedPage:    apierror.Validation(map[string]string{"page": "given more than once"}),
	target.ErrRepeatedPerPage: apierror.Validation(map[string]string{"per_page": "given more than once"}),
}

var keyBufs = sync.Pool{New: func() any { b := make([]byte, 0, 256); return &b }}

// serveCacheable answers a cacheable read from the response cache, or from
// the origin on a miss (concurrent misses for one key share one origin
// request), storing what may be cached. Stale entries are served while one
// background refresh runs; when the origin fails, entries within
// stale-if-error are served. Every answer says how in X-Cache. It returns
// the error to answer instead: a query the cache cannot key, or an origin
// that could not answer with nothing stale to serve.
func (g *Gateway) serveCacheable(ctx *fasthttp.RequestCtx, rt *route, ip netip.Addr, st *passState) *apierror.Error {
	info, now := &st.info, st.now
	bp := keyBufs.Get().(*[]byte)
	defer keyBufs.Put(bp)
	uri := ctx.URI()
	key, err := g.cache.AppendKey((*bp)[:0], s2b(info.SiteID), uri.PathOriginal(), uri.QueryString())
	*bp = key
	if err != nil {
		return queryErrors[err]
	}
	// What is fetched is what is keyed: the origin gets the canonical query.
	if q := key[bytes.LastIndexByte(key, '?')+1:]; !bytes.Equal(q, uri.QueryString()) {
		uri.SetQueryStringBytes(q)
	}

	var stale *respcache.Entry
	if e, ok := g.cache.Get(key); ok {
		switch e.State(now) {
		case respcache.Fresh:
			g.writeEntry(ctx, e, cacheHit, rt, st, true)
			return nil
		case respcache.Stale:
			g.cache.CountStale()
			g.writeEntry(ctx, e, cacheStale, rt, st, true)
			if e.StartRefresh() {
				g.refresh(ctx, rt, info, ip, key)
			}
			return nil
		case respcache.Expired:
			stale = e
		}
	}

	if g.missed != nil {
		g.missed()
	}
	f, leader := g.cache.Join(key)
	if leader {
		// A flight that ended between the Get above and Join stored its
		// entry before it left (fetch stores, then Finish): answer with
		// that instead of asking the origin again.
		if e, ok := g.cache.Stored(key); ok && e.State(now) == respcache.Fresh {
			g.cache.Finish(key, f, e)
			g.writeEntry(ctx, e, cacheHit, rt, st, true)
			return nil
		}
	}
	if !leader {
		select {
		case <-f.Done():
		case <-time.After(g.cfg.OriginTimeout):
		}
		if f.Entry != nil {
			g.writeEntry(ctx, f.Entry, cacheHit, rt, st, true)
			return nil
		}
	}
	e, fail := g.fetch(ctx, rt, info, ip, key, now)
	if leader {
		g.cache.Finish(key, f, e)
	}
	switch {
	case fail != nil && stale != nil:
		g.cache.CountStale()
		ctx.Response.ResetBody()
		g.writeEntry(ctx, stale, cacheStale, rt, st, false)
		return nil
	case e != nil:
		g.writeEntry(ctx, e, cacheMiss, rt, st, false)
	default:
		ctx.Response.Header.SetCanonical(hdrXCache, cacheMiss)
	}
	return fail
}

// fetch asks the origin for a cacheable read, without the client's
// conditional and encoding headers (the edge applies them), writes the
// answer into ctx and stores it when it may be cached; the error is an
// origin that could not be reached.
func (g *Gateway) fetch(ctx *fasthttp.RequestCtx, rt *route, info *keycache.Info, ip netip.Addr, key []byte, now time.Time) (*respcache.Entry, *apierror.Error) {
	req := fasthttp.AcquireRequest()
	defer fasthttp.ReleaseRequest(req)
	ctx.Request.CopyTo(req)
	req.Header.SetMethod(fasthttp.MethodGet)
	req.Header.Del("If-None-Match")
	req.Header.Del("If-Modified-Since")
	req.Header.Del("Accept-Encoding")
	g.prepare(req, info, requestIDOf(ctx), ip)
	if e := g.exchange(ctx, rt, req); e != nil {
		return nil, e
	}
	return g.store(key, &ctx.Response, now), nil
}

// store caches an origin response when it may be: a 200 by its
// Cache-Control, a 404 briefly.
func (g *Gateway) store(key []byte, r *fasthttp.Response, now time.Time) *respcache.Entry {
	if r.StatusCode() == fasthttp.StatusNotFound {
		var env struct {
			Error struct{ Code, Message string }
		}
		if json.Unmarshal(r.Body(), &env) != nil || env.Error.Code != "NOT_FOUND" {
			return nil
		}
		return g.cache.PutNotFound(key, env.Error.Message, now)
	}
	return g.cache.Put(key, r.StatusCode(), r.Header.ContentType(), r.Header.Peek("Cache-Control"),
		r.Header.Peek("ETag"), r.Body(), now)
}

// refresh re-fetches a stale entry in the background, with the identity of
// the request that found it stale. It copies what it needs from ctx first:
// ctx must not be used after the handler returns.
func (g *Gateway) refresh(ctx *fasthttp.RequestCtx, rt *route, info *keycache.Info, ip netip.Addr, key []byte) {
	req := fasthttp.AcquireRequest()
	ctx.Request.CopyTo(req)
	req.Header.SetMethod(fasthttp.MethodGet)
	req.Header.Del("If-None-Match")
	req.Header.Del("If-Modified-Since")
	req.Header.Del("Accept-Encoding")
	id := *info
	reqID := bytes.Clone(requestIDOf(ctx))
	key = bytes.Clone(key)
	// The log context is a copy: ctx is another request's once this returns.
	parent, logCtx := traceParentOf(ctx), logctx.With(context.Background(), logctx.From(logContext(ctx))...)
	go func() {
		defer fasthttp.ReleaseRequest(req)
		resp := fasthttp.AcquireResponse()
		defer fasthttp.ReleaseResponse(resp)
		g.prepare(req, &id, reqID, ip)
		span := g.originSpan(parent, req)
		err := g.origin.Do(req, resp, g.cfg.OriginTimeout)
		endOriginSpan(span, resp, err)
		if err != nil {
			g.log.WarnContext(logCtx, "background refresh failed", "err", err, "route", rt.name)
			return
		}
		g.store(key, resp, g.now())
	}()
}

// writeEntry answers from a cache entry: 304 when If-None-Match names its
// ETag, else its body, compressed when the client accepts that. The
// entry's bytes are not copied: entries are immutable (setEntryBody). A
// large body on the edge's connections goes with its headers as lines
// (rawHeaders), and st.raw takes the answer's further headers — unless
// the response already holds headers (an origin's answer, after a fetch),
// which the lines would repeat: clean is set when it holds none yet.
func (g *Gateway) writeEntry(ctx *fasthttp.RequestCtx, e *respcache.Entry, how []byte, rt *route, st *passState, clean bool) {
	h := &ctx.Response.Header
	if e.Status == fasthttp.StatusNotFound {
		h.SetCanonical(hdrXCache, how)
		writeError(ctx, apierror.NotFound(e.Message))
		return
	}
	// A CORS route's Vary names Origin too (corsHeaders, told by varyOrigin).
	vary := valAcceptEncoding
	if rt.cors {
		vary = valAcceptEncodingOrigin
		st.varyOrigin = true
	}
	if len(e.ETag) > 0 && etagMatch(st.hdr.ifNoneMatch, e.ETag) {
		setEntryHeaders(h, e, how, vary)
		ctx.Response.ResetBody()
		ctx.SetStatusCode(fasthttp.StatusNotModified)
		h.SetContentEncodingBytes(nil)
		return
	}
	ctx.SetStatusCode(e.Status)
	h.SetContentTypeBytes(e.ContentType)
	body, encoding := e.Body, []byte(nil)
	ae := st.hdr.acceptEncoding
	if accepts(ae, "br") {
		if br := e.Brotli(); br != nil {
			body, encoding = br, valBrotli
		}
	}
	if encoding == nil && accepts(ae, "gzip") {
		if gz := e.Gzip(); gz != nil {
			body, encoding = gz, valGzip
		}
	}
	h.SetContentEncodingBytes(encoding)
	if clean {
		if raw, gw := g.rawHeaders(ctx, len(body)); raw != nil {
			*raw = appendEntryHeaders(*raw, e, how, vary)
			st.raw = raw
			setGatheredBody(ctx, gw, body, raw)
			return
		}
	}
	setEntryHeaders(h, e, how, vary)
	setEntryBody(ctx, body)
}

// etagMatch is If-None-Match's weak comparison.
func etagMatch(header, etag []byte) bool {
	for len(header) > 0 {
		var t []byte
		if i := bytes.IndexByte(header, ','); i >= 0 {
			t, header = header[:i], header[i+1:]
		} else {
			t, header = header, nil
		}
		t = bytes.TrimPrefix(bytes.TrimSpace(t), []byte("W/"))
		if bytes.Equal(t, etag) || (len(t) == 1 && t[0] == '*') {
			return true
		}
	}
	return false
}

// accepts reports whether Accept-Encoding admits the coding (q > 0),
// named or through *.
func accepts(ae []byte, coding string) bool {
	for len(ae) > 0 {
		var t []byte
		if i := bytes.IndexByte(ae, ','); i >= 0 {
			t, ae = ae[:i], ae[i+1:]
		} else {
			t, ae = ae, nil
		}
		name, params, _ := bytes.Cut(bytes.TrimSpace(t), []byte(";"))
		name = bytes.TrimSpace(name)
		if !bytes.EqualFold(name, []byte(coding)) && !(len(name) == 1 && name[0] == '*') {
			continue
		}
		p := bytes.ReplaceAll(params, []byte(" "), nil)
		return !bytes.Equal(p, []byte("q=0")) && !bytes.Equal(p, []byte("q=0.0")) && !bytes.Equal(p, []byte("q=0.00")) && !bytes.Equal(p, []byte("q=0.000"))
	}
	return false
}

func s2b(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }
