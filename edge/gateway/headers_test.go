package gateway

import (
	"bufio"
	"strings"
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
		"Access-Control-Allow-Origin": hdrAccessControlAllowOrigin, "Access-Control-Expose-Headers": hdrAccessControlExposeHeaders,
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

// reqHeaders reads what Peek reads: for each name, the first value, from
// headers fasthttp parsed off the wire in any spelling, duplicates and
// look-alike names included.
func FuzzRequestHeaders(f *testing.F) {
	for _, s := range []string{
		"Authorization: Bearer a\r\nX-API-Key: b\r\n",
		"authorization: x\r\nAUTHORIZATION: y\r\nif-none-match: \"e\"\r\nIf-None-Match: *\r\n",
		"x-request-id: 1\r\nOrigin: https://a\r\norigin: https://b\r\naccept-encoding: gzip\r\nx-forwarded-proto: https\r\n",
		"X-Api-Keys: no\r\nOrigins: no\r\nAuthorization : spaced\r\nCookie: a=b\r\nX-Api-Key:\r\nX-Api-Key: second\r\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, block string) {
		var req fasthttp.Request
		raw := "GET /v1/x HTTP/1.1\r\nHost: a\r\n" + block + "\r\n"
		if req.Read(bufio.NewReader(strings.NewReader(raw))) != nil {
			return
		}
		var r reqHeaders
		r.read(&req.Header)
		for name, got := range map[string][]byte{
			"Authorization": r.authorization, "X-API-Key": r.apiKey, "X-Request-Id": r.requestID,
			"If-None-Match": r.ifNoneMatch, "Accept-Encoding": r.acceptEncoding, "Origin": r.origin,
			"X-Forwarded-Proto": r.forwardedProto,
		} {
			if want := req.Header.Peek(name); string(got) != string(want) {
				t.Fatalf("%q: %s read %q, Peek %q", block, name, got, want)
			}
		}
	})
}

// The names reqHeaders compares are fasthttp's normalised forms.
func TestRequestHeaderNames(t *testing.T) {
	for _, name := range []string{nameAuthorization, nameAPIKey, nameRequestID, nameIfNoneMatch, nameAcceptEncoding, nameOrigin, nameForwardedProto} {
		var h fasthttp.RequestHeader
		h.Set(strings.ToLower(name), "v")
		n := 0
		for k := range h.All() {
			if string(k) == name {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%s is not fasthttp's form of the name", name)
		}
	}
}
