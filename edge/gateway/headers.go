package gateway

// Response header names the request path sets on every answer, in the
// form fasthttp's normalisation gives them, set with SetCanonical: a
// cache hit then skips normalising each name (a copy and three scans) per
// header per request. TestCanonicalHeaderNames holds each to fasthttp's
// form, so a Peek or Set by the usual name finds the same header.
var (
	hdrXRequestID                 = []byte("X-Request-Id")
	hdrXCache                     = []byte("X-Cache")
	hdrVary                       = []byte("Vary")
	hdrETag                       = []byte("Etag")
	hdrCacheControl               = []byte("Cache-Control")
	hdrXRateLimitLimit            = []byte("X-Ratelimit-Limit")
	hdrXRateLimitRemain           = []byte("X-Ratelimit-Remaining")
	hdrXRateLimitReset            = []byte("X-Ratelimit-Reset")
	hdrRateLimitPolicy            = []byte("Ratelimit-Policy")
	hdrRateLimit                  = []byte("Ratelimit")
	valAcceptEncoding             = []byte("Accept-Encoding")
	valAcceptEncodingOrigin       = []byte("Accept-Encoding, Origin")
	valGzip                       = []byte("gzip")
	valBrotli                     = []byte("br")
	cacheHit, cacheStale          = []byte("HIT"), []byte("STALE")
	cacheMiss                     = []byte("MISS")
	hdrAccessControlAllowOrigin   = []byte("Access-Control-Allow-Origin")
	hdrAccessControlExposeHeaders = []byte("Access-Control-Expose-Headers")
	valCORSExposeHeaders          = []byte(corsExposeHeaders)
)
