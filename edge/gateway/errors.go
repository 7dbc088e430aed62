package gateway

import (
	"errors"
	"net"
	"strconv"
	"sync"

	"github.com/valyala/fasthttp"

	"github.com/listgate/listgate/pkg/apierror"
	"github.com/listgate/listgate/pkg/apikey"
)

// Errors the request path answers with, built once.
var (
	errMissingKey     = apierror.Unauthorized("missing API key")
	errInvalidKey     = apierror.Unauthorized("invalid API key")
	errConflictingKey = apierror.Unauthorized("Authorization and X-API-Key name different keys")
	errWrongSite      = apierror.Forbidden("this key cannot access that site")
	errNotFound       = apierror.NotFound("no such path")
	errOriginDown     = apierror.Unavailable(2, nil)
	errPublicLimited  = apierror.RateLimited(0)
	errInternal       = apierror.Internal(nil)
)

// scopeErrors are the 403s for each missing scope, built once.
var scopeErrors = func() map[uint8]*apierror.Error {
	m := map[uint8]*apierror.Error{}
	for _, name := range []string{"listings:read", "agents:read", "stats:read", "leads:write", "views:write"} {
		s, _ := apikey.ScopeByName(name)
		m[uint8(s)] = apierror.MissingScope(name)
	}
	return m
}()

// scratch holds envelope bytes while they are built.
var scratch = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// writeError writes e's envelope: the edge's one place that turns an error
// into a response. It allocates nothing in the steady state.
func writeError(ctx *fasthttp.RequestCtx, e *apierror.Error) {
	ctx.Response.ResetBody()
	ctx.SetStatusCode(e.Code.Status())
	h := &ctx.Response.Header
	h.SetContentType(apierror.ContentType)
	// The envelope is never encoded, whatever an answer begun before the
	// error (a compressed cached body, then a panic) had set.
	h.SetContentEncodingBytes(nil)
	h.Set("Cache-Control", "no-store")
	if s := e.RetryAfterSeconds(); s > 0 {
		var buf [20]byte
		h.SetBytesV("Retry-After", strconv.AppendInt(buf[:0], int64(s), 10))
	}
	if e.Allow != "" {
		h.Set("Allow", e.Allow)
	}
	if e.Code == apierror.CodeUnauthorized {
		// RFC 6750 §3: the scheme, and invalid_token where a credential
		// was sent.
		if e == errMissingKey || e == errNoBearer {
			h.Set("WWW-Authenticate", `Bearer realm="listgate"`)
		} else {
			h.Set("WWW-Authenticate", `Bearer realm="listgate", error="invalid_token"`)
		}
	}
	bp := scratch.Get().(*[]byte)
	*bp = apierror.AppendJSON((*bp)[:0], e, b2s(requestIDOf(ctx)))
	ctx.Response.AppendBody(*bp)
	scratch.Put(bp)
}

var (
	errHeaderTooLarge = apierror.New(apierror.CodeHeaderTooLarge, "")
	errBodyTooLarge   = apierror.New(apierror.CodePayloadTooLarge, "request body too large")
	errBadRequest     = apierror.New(apierror.CodeBadRequest, "malformed HTTP request")
	errReadTimeout    = apierror.New(apierror.CodeRequestTimeout, "")
)

// ServerError answers the requests fasthttp could not read, in the API's
// envelope: a body over the limit is 413, headers over the limit 431, a
// client too slow to send its request 408, anything else 400. Set it as
// fasthttp.Server.ErrorHandler, with Server.SecureErrorLogMessage set so
// that fasthttp's own log line of such a request quotes none of it (its
// Authorization header included).
func (g *Gateway) ServerError(ctx *fasthttp.RequestCtx, err error) {
	g.requestID(ctx)
	var small *fasthttp.ErrSmallBuffer
	var netErr net.Error
	switch {
	case errors.Is(err, fasthttp.ErrBodyTooLarge):
		writeError(ctx, errBodyTooLarge)
	case errors.As(err, &small):
		writeError(ctx, errHeaderTooLarge)
	case errors.As(err, &netErr) && netErr.Timeout():
		writeError(ctx, errReadTimeout)
	default:
		writeError(ctx, errBadRequest)
	}
	ctx.SetConnectionClose()
}
