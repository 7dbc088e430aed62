package gateway

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/listgate/listgate/edge/keycache"
	"github.com/listgate/listgate/pkg/ratelimit"
)

// The answers a connection of the edge's listeners gets, whose large
// cached bodies go with their headers as spliced lines (rawHeaders), are
// the answers of a plain connection, where every header is set on
// fasthttp's response: the same status, headers and body, for plain and
// compressed bodies, small and large, with and without a limit, an
// allowed Origin, a stale entry, HEAD, a 304, and two pipelined requests.
func TestRawHeadersMatchSetHeaders(t *testing.T) {
	key := mustKey(t)
	big := bytes.Repeat([]byte(`{"listing":"a fine house by the sea"},`), 500)
	small := []byte(`{"data":[]}`)
	for _, limit := range []int{0, 1 << 30} {
		g, cache := gatewayFor(t, key, keycache.Info{Limit: limit, CORS: []string{allowedOrigin}}, Config{})
		base := "/v1/sites/" + testSite
		now := time.Now()
		for _, p := range []struct {
			path, query string
			body        []byte
			stored      time.Time
		}{
			{base + "/listings", "page=2", big, now},
			{base + "/agents", "", small, now},
			// Stale: served while a refresh (which fails here) runs.
			{base + "/fields", "", big, now.Add(-2 * time.Minute)},
		} {
			k := mustAppendKey(t, cache, []byte(testSite), []byte(p.path), []byte(p.query))
			if cache.Put(k, 200, []byte("application/json"), []byte("max-age=60, stale-while-revalidate=600"), []byte(`"e1"`), p.body, p.stored) == nil {
				t.Fatal("not stored")
			}
		}
		srv := edgeServer(g)
		req := func(method, uri, more string) string { return rawRequest(method, uri, key, more) }
		for _, c := range []struct {
			name, raw string
			heads     []bool // per request: a HEAD
			spliced   bool
		}{
			{"plain", req("GET", base+"/listings?page=2", ""), []bool{false}, true},
			{"gzip", req("GET", base+"/listings?page=2", "Accept-Encoding: gzip\r\n"), []bool{false}, false},
			{"allowed origin", req("GET", base+"/listings?page=2", "Origin: "+allowedOrigin+"\r\n"), []bool{false}, true},
			{"other origin", req("GET", base+"/listings?page=2", "Origin: "+otherOrigin+"\r\n"), []bool{false}, true},
			{"stale", req("GET", base+"/fields", "Origin: "+allowedOrigin+"\r\n"), []bool{false}, true},
			{"small", req("GET", base+"/agents", "Origin: "+allowedOrigin+"\r\n"), []bool{false}, false},
			{"head", req("HEAD", base+"/listings?page=2", ""), []bool{true}, false},
			{"not modified", req("GET", base+"/listings?page=2", "If-None-Match: \"e1\"\r\n"), []bool{false}, false},
			{"pipelined", req("GET", base+"/listings?page=2", "") + req("GET", base+"/listings?page=2", "Origin: "+allowedOrigin+"\r\n"),
				[]bool{false, false}, true},
		} {
			var gathered, plain bytes.Buffer
			gc := &memConn{req: []byte(c.raw), left: 1, out: &gathered}
			if err := srv.ServeConn(gc); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			if spliced := len(gc.raw) > 0; spliced != c.spliced {
				t.Errorf("limit %d, %s: spliced %v, want %v", limit, c.name, spliced, c.spliced)
			}
			if err := srv.ServeConn(plainConn{&memConn{req: []byte(c.raw), left: 1, out: &plain}}); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			a, b := readResponses(t, gathered.Bytes(), c.heads), readResponses(t, plain.Bytes(), c.heads)
			for i := range c.heads {
				if a[i].status != b[i].status || !bytes.Equal(a[i].body, b[i].body) || !slices.Equal(a[i].headers, b[i].headers) {
					t.Errorf("limit %d, %s, answer %d:\nspliced %d %q\n  plain %d %q", limit, c.name, i, a[i].status, a[i].headers, b[i].status, b[i].headers)
				}
				if a[i].status == 200 && !c.heads[i] && len(a[i].body) == 0 {
					t.Errorf("limit %d, %s: no body", limit, c.name)
				}
			}
		}
	}
}

// The rate-limit counts and times that differ from one request to the
// next: what is left (r=, X-Ratelimit-Remaining), the seconds to the
// window's end (t=) and the end itself (X-Ratelimit-Reset), which move on
// when a second or a window turns between two answers.
var remaining = regexp.MustCompile(`(^|[rt]=)[0-9]+`)

type answer struct {
	status  int
	headers []string // "Name: value", sorted, without Date
	body    []byte
}

// readResponses parses the answers to the requests (heads: which were HEADs).
func readResponses(t *testing.T, wire []byte, heads []bool) []answer {
	t.Helper()
	br := bufio.NewReader(bytes.NewReader(wire))
	var out []answer
	for _, head := range heads {
		var r fasthttp.Response
		r.SkipBody = head
		if err := r.Read(br); err != nil {
			t.Fatalf("reading %q: %v", wire, err)
		}
		a := answer{status: r.StatusCode(), body: bytes.Clone(r.Body())}
		for k, v := range r.Header.All() {
			switch string(k) {
			case "Date":
				continue
			case "X-Ratelimit-Remaining", "Ratelimit", "X-Ratelimit-Reset":
				v = remaining.ReplaceAll(v, []byte("${1}N"))
			}
			a.headers = append(a.headers, string(k)+": "+string(v))
		}
		slices.Sort(a.headers)
		out = append(out, a)
	}
	if rest, _ := io.ReadAll(br); len(rest) > 0 {
		t.Fatalf("%d bytes after the answers: %q", len(rest), rest)
	}
	return out
}

// A line's CR and LF are written as spaces, as fasthttp writes the values
// it is given; SpliceHeaders puts the lines before the headers' end and
// refuses headers without one.
func TestSpliceHeaders(t *testing.T) {
	line := appendHeaderLine(nil, []byte("Etag"), []byte("\"a\r\nX-Evil: 1\""))
	if string(line) != "Etag: \"a  X-Evil: 1\"\r\n" {
		t.Errorf("line %q", line)
	}
	head := []byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n")
	got, ok := SpliceHeaders(head, line)
	if !ok || !strings.HasSuffix(string(got), "Content-Length: 2\r\n"+string(line)+"\r\n") {
		t.Errorf("spliced %q %v", got, ok)
	}
	if _, ok := SpliceHeaders([]byte("HTTP/1.1 200 OK\r\nContent-Le"), line); ok {
		t.Error("headers without their end taken")
	}
}

// A miss answers with the origin's response in hand: its headers are set
// on fasthttp's response, and the gathered answer is the plain one, with
// each header once.
func TestRawHeadersOnAMiss(t *testing.T) {
	big := strings.Repeat(`{"listing":"a fine house by the sea"},`, 500)
	// The origin's answer carries the headers the lines would carry too.
	o := &fakeOrigin{srv: httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Header().Set("Cache-Control", "max-age=60")
		w.Header().Set("ETag", `"v1"`)
		w.Header().Set("Vary", "Accept-Encoding")
		io.WriteString(w, big)
	}))}
	t.Cleanup(o.srv.Close)
	key := mustKey(t)
	g := gatewayTo(t, o, key, Config{})
	srv := edgeServer(g)
	serve := func(c net.Conn, page string) answer {
		var out bytes.Buffer
		raw := rawRequest("GET", "/v1/sites/"+testSite+"/listings?page="+page, key, "")
		switch c := c.(type) {
		case *memConn:
			c.req, c.left, c.out = []byte(raw), 1, &out
		case plainConn:
			m := c.Conn.(*memConn)
			m.req, m.left, m.out = []byte(raw), 1, &out
		}
		if err := srv.ServeConn(c); err != nil {
			t.Fatal(err)
		}
		return readResponses(t, out.Bytes(), []bool{false})[0]
	}
	// Different pages, so both are misses.
	gathered, plain := serve(&memConn{}, "2"), serve(plainConn{&memConn{}}, "3")
	if gathered.status != 200 || !slices.Equal(gathered.headers, plain.headers) || !bytes.Equal(gathered.body, plain.body) {
		t.Fatalf("miss:\ngathered %d %q %s\n   plain %d %q", gathered.status, gathered.headers, gathered.body, plain.status, plain.headers)
	}
	seen := map[string]bool{}
	for _, h := range gathered.headers {
		name, _, _ := strings.Cut(h, ":")
		if seen[name] {
			t.Errorf("%s twice: %q", name, gathered.headers)
		}
		seen[name] = true
	}
	if !seen["X-Cache"] || !seen["Etag"] {
		t.Errorf("miss answer lacks X-Cache or Etag: %q", gathered.headers)
	}
}

// The lines kept for a limit follow the limit and the window: two limits
// sharing a slot, and a window turning, each get their own.
func TestRateLinesFollowLimitAndWindow(t *testing.T) {
	var c rateLineCache
	now := time.Unix(1_800_000_000, 0)
	for i, step := range []struct {
		limit, remaining int
		reset            time.Time
	}{
		{16, 15, now.Add(30 * time.Second)}, {32, 31, now.Add(30 * time.Second)}, {16, 14, now.Add(30 * time.Second)},
		{16, 15, now.Add(90 * time.Second)}, {32, 0, now.Add(90 * time.Second)}, {16, 13, now.Add(90 * time.Second)},
	} {
		d := ratelimit.Decision{Allowed: true, Limit: step.limit, Remaining: step.remaining, Reset: step.reset}
		got := string(appendRateHeaders(nil, d, now, &c))
		want := fmt.Sprintf("X-Ratelimit-Limit: %d\r\nX-Ratelimit-Reset: %d\r\nRatelimit-Policy: \"site\";q=%d;w=60\r\n"+
			"X-Ratelimit-Remaining: %d\r\nRatelimit: \"site\";r=%d;t=%d\r\n",
			step.limit, step.reset.Unix(), step.limit, step.remaining, step.remaining, int(step.reset.Sub(now)/time.Second))
		if got != want {
			t.Errorf("step %d:\n got %q\nwant %q", i, got, want)
		}
	}
}
