package gateway

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/listgate/listgate/edge/keycache"
)

// One keep-alive connection, its requests pipelined: a spliced answer with
// an allowed Origin, then answers that must carry none of its lines (an
// unknown key, another site's path, a HEAD, a 304, a spliced answer
// without an Origin, a small body), each the answer a plain connection
// gets. The connection's state (the key's hash, the lines' buffer) is
// reused from one request to the next.
func TestRawHeadersKeepAliveSequence(t *testing.T) {
	key, stranger := mustKey(t), mustKey(t)
	big := bytes.Repeat([]byte(`{"listing":"a fine house by the sea"},`), 500)
	g, base := cachedPages(t, key, big)
	srv := edgeServer(g)
	req := rawRequest
	type step struct {
		name, raw string
		head      bool
		status    int
		spliced   bool
	}
	steps := []step{
		{"allowed origin", req("GET", base+"/listings", key, "Origin: "+allowedOrigin+"\r\n"), false, 200, true},
		{"unknown key", req("GET", base+"/listings", stranger, "Origin: "+allowedOrigin+"\r\n"), false, 401, false},
		{"other site", req("GET", "/v1/sites/"+otherSite+"/listings", key, "Origin: "+allowedOrigin+"\r\n"), false, 403, false},
		{"head", req("HEAD", base+"/listings", key, ""), true, 200, false},
		{"not modified", req("GET", base+"/listings", key, "If-None-Match: \"e1\"\r\n"), false, 304, false},
		{"no origin", req("GET", base+"/listings", key, ""), false, 200, true},
		{"small", req("GET", base+"/agents", key, ""), false, 200, false},
	}
	var raw strings.Builder
	heads := make([]bool, len(steps))
	for i, s := range steps {
		raw.WriteString(s.raw)
		heads[i] = s.head
	}
	var gathered, plain bytes.Buffer
	gc := &memConn{req: []byte(raw.String()), left: 1, out: &gathered}
	if err := srv.ServeConn(gc); err != nil {
		t.Fatal(err)
	}
	if err := srv.ServeConn(plainConn{&memConn{req: []byte(raw.String()), left: 1, out: &plain}}); err != nil {
		t.Fatal(err)
	}
	a, b := readResponses(t, gathered.Bytes(), heads), readResponses(t, plain.Bytes(), heads)
	for i, s := range steps {
		if a[i].status != s.status {
			t.Errorf("%s: status %d, want %d", s.name, a[i].status, s.status)
		}
		if a[i].status != b[i].status || !bytes.Equal(a[i].body, b[i].body) || !slices.Equal(a[i].headers, b[i].headers) {
			t.Errorf("%s:\nspliced %d %q\n  plain %d %q", s.name, a[i].status, a[i].headers, b[i].status, b[i].headers)
		}
		seen := map[string]bool{}
		for _, h := range a[i].headers {
			name, _, _ := strings.Cut(h, ":")
			if seen[name] {
				t.Errorf("%s: %s twice: %q", s.name, name, a[i].headers)
			}
			seen[name] = true
		}
		if s.status != 200 && s.status != 304 && (seen["X-Cache"] || seen["Etag"]) {
			t.Errorf("%s: an error answer carries a cached answer's headers: %q", s.name, a[i].headers)
		}
	}
	if !slices.Contains(a[0].headers, "Access-Control-Allow-Origin: "+allowedOrigin) {
		t.Errorf("the first answer lacks its Access-Control-Allow-Origin: %q", a[0].headers)
	}
	if slices.ContainsFunc(a[5].headers, func(h string) bool { return strings.HasPrefix(h, "Access-Control-Allow-Origin") }) {
		t.Errorf("an answer without an Origin carries Access-Control-Allow-Origin: %q", a[5].headers)
	}
}

// cachedPages is a gateway whose key's site, with allowedOrigin among its
// CORS origins and no limit to speak of, has big cached at its /listings
// and a small page at its /agents (ETag "e1" both), and the site's path.
func cachedPages(t *testing.T, key string, big []byte) (*Gateway, string) {
	t.Helper()
	g, cache := gatewayFor(t, key, keycache.Info{Limit: 1 << 30, CORS: []string{allowedOrigin}}, Config{})
	base := "/v1/sites/" + testSite
	for _, p := range []struct {
		path string
		body []byte
	}{{base + "/listings", big}, {base + "/agents", []byte(`{"data":[]}`)}} {
		k := mustAppendKey(t, cache, []byte(testSite), []byte(p.path), nil)
		if cache.Put(k, 200, []byte("application/json"), []byte("max-age=60"), []byte(`"e1"`), p.body, time.Now()) == nil {
			t.Fatal("not stored")
		}
	}
	return g, base
}
