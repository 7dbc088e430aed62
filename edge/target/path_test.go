package target

import (
	"net/url"
	"slices"
	"strings"
	"testing"
)

func TestCanonicalPath(t *testing.T) {
	for in, want := range map[string]string{
		"/v1/sites/s/listings":        "/v1/sites/s/listings",
		"/v1/sites/s/%6Cistings":      "/v1/sites/s/listings",
		"/v1/sites/s/listings/AG:1":   "/v1/sites/s/listings/AG:1",
		"/v1/sites/s/listings/a%20b":  "/v1/sites/s/listings/a%20b",
		"/v1/sites/s/listings/a%3ab":  "/v1/sites/s/listings/a:b",
		"/v1/sites/s/listings/...":    "/v1/sites/s/listings/...",
		"/v1/sites/s/listings/%C3%A9": "/v1/sites/s/listings/%C3%A9",
		"/v1/leads/":                  "/v1/leads/",
		"/":                           "/",
	} {
		got, err := AppendCanonicalPath(nil, []byte(in))
		if err != nil || string(got) != want {
			t.Errorf("%q → %q %v, want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "v1", "*", "/a/%2f/b", "/a%2Fb", "/a%5cb", "/a\\b", "/a/../b", "/a/./b", "/a/..", "/a/%2e%2E",
		"//a", "/a//b", "/a/%zz", "/a/%2", "/a/%00", "/a/\x01", "/a/ b", "/a/é", "/a?b", "/a#b", "/a/%7f", "/a/%ff", "/a/%c3", "/a/x%ff%fe"} {
		if got, err := AppendCanonicalPath(nil, []byte(in)); err == nil {
			t.Errorf("%q accepted as %q", in, got)
		}
	}
}

// segments is how the origin (net/http, net/url) reads a path: split on
// '/', each segment percent-decoded.
func segments(path string) []string { return strings.Split(path, "/") }

// The edge and the origin read a path as the same segments, or the edge
// refuses it: what the edge accepts, net/url decodes at the origin to the
// segments the client sent, and the canonical form is its own canonical
// form. A plain path (needsCanonical false) is canonical already.
func FuzzCanonicalPath(f *testing.F) {
	for _, s := range []string{"/v1/sites/s/listings/x%2f..%2f..%2fstats%2fsummary", "/v1/sites/s/listings/a%20b", "/a/../b",
		"/a/%2e%2e", "/a/b/", "/%41", "/a;b=c/d", "/a/..."} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		canon, err := AppendCanonicalPath(nil, []byte(raw))
		if !NeedsCanonicalPath([]byte(raw)) && (err != nil || string(canon) != raw) {
			t.Fatalf("plain %q → %q %v", raw, canon, err)
		}
		if err != nil {
			return
		}
		var want []string
		for _, seg := range segments(raw) {
			d, err := url.PathUnescape(seg)
			if err != nil {
				t.Fatalf("accepted %q with a segment net/url cannot decode", raw)
			}
			want = append(want, d)
		}
		u, err := url.Parse("http://origin" + string(canon))
		if err != nil {
			t.Fatalf("%q → %q, which net/url refuses: %v", raw, canon, err)
		}
		if got := segments(u.Path); !slices.Equal(got, want) {
			t.Fatalf("%q: the client sent segments %q, the origin reads %q from %q", raw, want, got, canon)
		}
		for _, seg := range want[1:] {
			if seg == "." || seg == ".." || strings.ContainsAny(seg, "/\\") {
				t.Fatalf("%q: accepted segment %q", raw, seg)
			}
		}
		again, err := AppendCanonicalPath(nil, canon)
		if err != nil || string(again) != string(canon) {
			t.Fatalf("not idempotent: %q → %q → %q %v", raw, canon, again, err)
		}
	})
}

func TestNeedsCanonicalPath(t *testing.T) {
	for raw, want := range map[string]bool{
		"/": false, "/v1/sites/abc/listings": false, "/a/": false, "/a/...": false, "/.a/b.": false, "/a~b_c-d.e": false,
		"": true, "a": true, "//": true, "/a//b": true, "/.": true, "/..": true, "/./": true, "/a/../b": true, "/a/.": true,
		"/a%20b": true, "/a;b": true, "/a b": true, "/\x00": true, "/a\xff": true,
	} {
		if got := NeedsCanonicalPath([]byte(raw)); got != want {
			t.Errorf("NeedsCanonicalPath(%q) = %v, want %v", raw, got, want)
		}
	}
}

// needsCanonicalPathByByte is NeedsCanonicalPath as one loop over the
// bytes, the reference the segment-wise version is fuzzed against.
func needsCanonicalPathByByte(raw []byte) bool {
	if len(raw) == 0 || raw[0] != '/' {
		return true
	}
	n, dots := 0, 0
	for _, c := range raw[1:] {
		if c == '/' {
			if n == 0 || n == dots && n <= 2 {
				return true
			}
			n, dots = 0, 0
			continue
		}
		if !unreserved(c) {
			return true
		}
		n++
		if c == '.' {
			dots++
		}
	}
	return n > 0 && n == dots && n <= 2
}

func FuzzNeedsCanonicalPath(f *testing.F) {
	for _, s := range []string{"/", "//", "/a/", "/a//", "/./", "/../a", "/.../", "/a/..", "/.a", "/a%20", "/v1/sites/abc/listings", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		if got, want := NeedsCanonicalPath([]byte(raw)), needsCanonicalPathByByte([]byte(raw)); got != want {
			t.Fatalf("NeedsCanonicalPath(%q) = %v, the byte loop says %v", raw, got, want)
		}
	})
}

func BenchmarkNeedsCanonicalPath(b *testing.B) {
	p := []byte("/v1/sites/0b0e4c2e-4b1f-4a57-9d51-8f0e7c1d2a3b/listings")
	for b.Loop() {
		if NeedsCanonicalPath(p) {
			b.Fatal("plain path")
		}
	}
}
