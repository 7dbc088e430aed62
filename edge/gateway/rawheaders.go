package gateway

import (
	"strconv"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/listgate/listgate/edge/respcache"
	"github.com/listgate/listgate/pkg/ratelimit"
)

// A cached answer's own headers (X-Cache, Vary, ETag, Cache-Control, the
// rate-limit headers and CORS's) are, on the hot path, written as lines
// into the connection's buffer (ConnState.raw) and spliced into the
// response's headers when it is sent with its body (setGatheredBody,
// SpliceHeaders), instead of each being set on fasthttp's response
// header: a set copies the value, scans it twice for line breaks and
// searches the headers set so far, and writing each copies it again. The
// lines and fasthttp's headers are the same on the wire
// (TestRawHeadersMatchSetHeaders). Only a GET answered with a gathered
// body (a large cached body on the edge's connections) and not traced
// takes this path: its headers are never read back in the process.

// rawHeaders returns the connection's buffer for the lines of an answer of
// n body bytes, emptied, or nil when the answer cannot take this path.
func (g *Gateway) rawHeaders(ctx *fasthttp.RequestCtx, n int) (*[]byte, gatherWriter) {
	if n < zeroCopyMin || !ctx.IsGet() {
		return nil, nil
	}
	gw, ok := ctx.Conn().(gatherWriter)
	if !ok {
		return nil, nil
	}
	cs, ok := ctx.Conn().(connStater)
	if !ok {
		return nil, nil
	}
	if g.tracer != nil && ctx.UserValue(traceKey{}) != nil {
		return nil, nil
	}
	s := cs.GatewayState()
	s.raw = s.raw[:0]
	return &s.raw, gw
}

// appendHeaderLine appends "name: value\r\n", a CR or LF in value written
// as a space (as fasthttp does with the values it is given).
func appendHeaderLine(dst, name, value []byte) []byte {
	return respcache.AppendHeaderLine(dst, b2s(name), value)
}

// appendEntryHeaders appends the lines setEntryHeaders sets: the entry's
// own (ETag, Cache-Control) made when it was stored.
func appendEntryHeaders(dst []byte, e *respcache.Entry, how, vary []byte) []byte {
	dst = appendHeaderLine(dst, hdrXCache, how)
	dst = appendHeaderLine(dst, hdrVary, vary)
	if e.Lines != nil {
		return append(dst, e.Lines...)
	}
	if len(e.ETag) > 0 {
		dst = appendHeaderLine(dst, hdrETag, e.ETag)
	}
	return appendHeaderLine(dst, hdrCacheControl, e.CacheControl)
}

// setEntryHeaders sets a cache entry's headers on the response.
func setEntryHeaders(h *fasthttp.ResponseHeader, e *respcache.Entry, how, vary []byte) {
	h.SetCanonical(hdrXCache, how)
	h.SetCanonical(hdrVary, vary)
	if len(e.ETag) > 0 {
		h.SetCanonical(hdrETag, e.ETag)
	}
	h.SetCanonical(hdrCacheControl, e.CacheControl)
}

// appendRateHeaders appends the lines setRateHeaders sets: those that
// change only with the limit and the window from c, what is left and the
// seconds to the window's end formatted for this answer.
func appendRateHeaders(dst []byte, d ratelimit.Decision, now time.Time, c *rateLineCache) []byte {
	dst = c.appendFixed(dst, d.Limit, d.Reset.Unix())
	dst = append(dst, hdrXRateLimitRemain...)
	dst = append(dst, ": "...)
	digits := len(dst)
	dst = strconv.AppendInt(dst, int64(d.Remaining), 10)
	end := len(dst)
	dst = append(dst, "\r\n"...)
	dst = append(dst, hdrRateLimit...)
	dst = append(dst, ": "+rateRemainingPrefix...)
	if d.Remaining >= 0 {
		dst = append(dst, dst[digits:end]...)
	} else {
		dst = append(dst, '0')
	}
	dst = append(dst, ";t="...)
	dst = strconv.AppendInt(dst, rateResetSeconds(d, now), 10)
	return append(dst, "\r\n"...)
}

// rateLineCache keeps, for the limits in use, the rate-limit lines that
// change only with the limit and the window (X-Ratelimit-Limit,
// Ratelimit-Policy, X-Ratelimit-Reset), made once a window instead of
// formatted for every answer. A slot holds one limit's lines; limits
// sharing a slot take turns in it.
type rateLineCache [rateLineSlots]atomic.Pointer[rateLines]

const rateLineSlots = 16

type rateLines struct {
	limit int
	reset int64
	lines []byte
}

func (c *rateLineCache) appendFixed(dst []byte, limit int, reset int64) []byte {
	slot := &c[uint(limit)%rateLineSlots]
	if l := slot.Load(); l != nil && l.limit == limit && l.reset == reset {
		return append(dst, l.lines...)
	}
	l := &rateLines{limit: limit, reset: reset}
	l.lines = appendIntHeader(l.lines, hdrXRateLimitLimit, "", int64(limit), "")
	l.lines = appendIntHeader(l.lines, hdrXRateLimitReset, "", reset, "")
	l.lines = appendIntHeader(l.lines, hdrRateLimitPolicy, ratePolicyPrefix, int64(limit), rateWindowParam)
	slot.Store(l)
	return append(dst, l.lines...)
}

// appendIntHeader appends "name: prefix<n>suffix\r\n".
func appendIntHeader(dst, name []byte, prefix string, n int64, suffix string) []byte {
	dst = append(dst, name...)
	dst = append(dst, ": "...)
	dst = append(dst, prefix...)
	dst = strconv.AppendInt(dst, n, 10)
	dst = append(dst, suffix...)
	return append(dst, "\r\n"...)
}

// appendCORSHeaders appends the lines corsHeaders sets for an allowed
// origin.
func appendCORSHeaders(dst, origin []byte) []byte {
	dst = appendHeaderLine(dst, hdrAccessControlAllowOrigin, origin)
	return appendHeaderLine(dst, hdrAccessControlExposeHeaders, valCORSExposeHeaders)
}
