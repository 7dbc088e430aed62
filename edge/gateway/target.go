package gateway

import (
	"github.com/valyala/fasthttp"

	"github.com/listgate/listgate/edge/target"
	"github.com/listgate/listgate/pkg/apierror"
)

// errAmbiguousPath refuses a request target the edge will not interpret:
// the router, the cache key and the origin must see one path, and these
// forms are read differently by different parsers.
var errAmbiguousPath = apierror.New(apierror.CodeBadRequest,
	"ambiguous request path: encoded '/' or '\\', dot segments, empty segments and bytes outside RFC 3986 are refused")

// canonicalTarget parses the request's path once, before anything else
// looks at it, and leaves on the request the canonical form that the router
// matches, the cache key holds and the origin is sent. The canonical form
// has the same segments as the path the client sent, each percent-decoded
// and encoded again in one way (target.AppendCanonicalPath). A path that could
// be read as other segments by another parser is refused with 400.
func canonicalTarget(ctx *fasthttp.RequestCtx) *apierror.Error {
	uri := ctx.URI()
	raw := uri.PathOriginal()
	if !target.NeedsCanonicalPath(raw) {
		return nil
	}
	bp := keyBufs.Get().(*[]byte)
	defer keyBufs.Put(bp)
	p, err := target.AppendCanonicalPath((*bp)[:0], raw)
	*bp = p
	if err != nil {
		return errAmbiguousPath
	}
	uri.SetPathBytes(p)
	return nil
}
