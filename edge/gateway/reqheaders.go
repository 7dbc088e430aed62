package gateway

import "github.com/valyala/fasthttp"

// reqHeaders are the request headers the request path decides on, read in
// one pass over the headers fasthttp parsed: for each name its first value,
// as Peek gives it, without Peek's copy and normalisation of the name at
// every look-up. The values are the request's bytes: valid while its
// headers are not changed.
type reqHeaders struct {
	authorization, apiKey, requestID, ifNoneMatch, acceptEncoding, origin, forwardedProto []byte
	seen                                                                                  uint8
}

const (
	seenAuthorization = 1 << iota
	seenAPIKey
	seenRequestID
	seenIfNoneMatch
	seenAcceptEncoding
	seenOrigin
	seenForwardedProto
)

// The names as fasthttp normalises a parsed request's header names
// (TestRequestHeaderNames holds them to it).
const (
	nameAuthorization  = "Authorization"
	nameAPIKey         = "X-Api-Key"
	nameRequestID      = "X-Request-Id"
	nameIfNoneMatch    = "If-None-Match"
	nameAcceptEncoding = "Accept-Encoding"
	nameOrigin         = "Origin"
	nameForwardedProto = "X-Forwarded-Proto"
)

func (r *reqHeaders) read(h *fasthttp.RequestHeader) {
	*r = reqHeaders{}
	for k, v := range h.All() {
		switch len(k) {
		case len(nameOrigin):
			r.take(k, v, nameOrigin, seenOrigin, &r.origin)
		case len(nameAPIKey):
			r.take(k, v, nameAPIKey, seenAPIKey, &r.apiKey)
		case len(nameRequestID):
			r.take(k, v, nameRequestID, seenRequestID, &r.requestID)
		case len(nameAuthorization): // and If-None-Match
			r.take(k, v, nameAuthorization, seenAuthorization, &r.authorization)
			r.take(k, v, nameIfNoneMatch, seenIfNoneMatch, &r.ifNoneMatch)
		case len(nameAcceptEncoding):
			r.take(k, v, nameAcceptEncoding, seenAcceptEncoding, &r.acceptEncoding)
		case len(nameForwardedProto):
			r.take(k, v, nameForwardedProto, seenForwardedProto, &r.forwardedProto)
		}
	}
}

// take keeps v as the value of name when k is name and the first of it.
func (r *reqHeaders) take(k, v []byte, name string, bit uint8, dst *[]byte) {
	if r.seen&bit == 0 && string(k) == name {
		r.seen |= bit
		*dst = v
	}
}
