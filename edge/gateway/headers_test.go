package gateway

import (
	"testing"

	"github.com/valyala/fasthttp"
)

// Each name set with SetCanonical is the form fasthttp gives that name, so
// Peek, Set and Del by the usual spelling find it.
func TestCanonicalHeaderNames(t *testing.T) {
	for usual, canonical := range map[string][]byte{
		"X-Request-Id": hdrXRequestID, "X-Cache": hdrXCache, "Vary": hdrVary, "ETag": hdrETag,
		"Cache-Control": hdrCacheControl, "X-RateLimit-Limit": hdrXRateLimitLimit,
		"X-RateLimit-Remaining": hdrXRateLimitRemain, "X-RateLimit-Reset": hdrXRateLimitReset,
		"RateLimit-Policy": hdrRateLimitPolicy, "RateLimit": hdrRateLimit,
	} {
		var h fasthttp.ResponseHeader
		h.Set(usual, "by-name")
		h.SetCanonical(canonical, []byte("canonical"))
		if got := string(h.Peek(usual)); got != "canonical" {
			t.Errorf("%s: Peek = %q after SetCanonical(%q): not fasthttp's form", usual, got, canonical)
		}
		n := 0
		for k := range h.All() {
			if string(k) == string(canonical) {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%s: %d headers named %q, want 1", usual, n, canonical)
		}
	}
}
