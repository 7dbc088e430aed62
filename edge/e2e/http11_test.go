package e2e

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// exchange writes raw requests on one connection and reads n answers; eof
// reports whether the edge closed the connection after them.
func exchange(tb testing.TB, addr, requests string, n int, method string) (answers []*http.Response, bodies []string, eof bool) {
	tb.Helper()
	c, br := dialWrite(tb, addr, requests, 5*time.Second)
	defer c.Close()
	for i := 0; i < n; i++ {
		resp, err := http.ReadResponse(br, &http.Request{Method: method})
		if err != nil {
			tb.Fatalf("answer %d: %v", i, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		answers, bodies = append(answers, resp), append(bodies, string(b))
	}
	// A connection kept alive stays open: a read waits until the deadline.
	c.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
	_, err := br.ReadByte()
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		return answers, bodies, false
	}
	return answers, bodies, err == io.EOF
}

// The edge as an HTTP/1.1 server (RFC 9110, 9112): connection options,
// HTTP/1.0, HEAD, OPTIONS and pipelining, as real clients use them.
func TestHTTP11Conformance(t *testing.T) {
	s := newSystem(t)
	edge := s.startEdge(edgeOpts{})
	site := s.site("enterprise")
	key := s.key(site, "listings:read")
	s.importFeed(site, feed("2024-02-01-10:00:00", "First headline"))
	path := "/v1/sites/" + site + "/listings"

	t.Run("connection close, any case, in a list", func(t *testing.T) {
		for _, v := range []string{"close", "Close", "CLOSE", "keep-alive, close", "TE, Close"} {
			for _, target := range []string{"/healthz", path} {
				_, _, eof := exchange(t, edge.addr, "GET "+target+" HTTP/1.1\r\nHost: edge\r\nAuthorization: Bearer "+key.Key+
					"\r\nConnection: "+v+"\r\n\r\n", 1, "GET")
				if !eof {
					t.Errorf("Connection: %s on %s: connection left open", v, target)
				}
			}
		}
		if _, _, eof := exchange(t, edge.addr, "GET /healthz HTTP/1.1\r\nHost: edge\r\n\r\n", 1, "GET"); eof {
			t.Error("HTTP/1.1 without Connection: closed")
		}
	})
	t.Run("HTTP/1.0", func(t *testing.T) {
		if _, _, eof := exchange(t, edge.addr, "GET /healthz HTTP/1.0\r\n\r\n", 1, "GET"); !eof {
			t.Error("HTTP/1.0 without keep-alive: connection left open")
		}
		answers, _, eof := exchange(t, edge.addr, "GET /healthz HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n", 1, "GET")
		if eof || !strings.EqualFold(answers[0].Header.Get("Connection"), "keep-alive") {
			t.Errorf("HTTP/1.0 keep-alive: closed %v, Connection %q", eof, answers[0].Header.Get("Connection"))
		}
	})
	t.Run("HEAD", func(t *testing.T) {
		get := do(t, "GET", edge.url()+path, nil, bearer(key.Key))
		answers, bodies, _ := exchange(t, edge.addr, "HEAD "+path+" HTTP/1.1\r\nHost: edge\r\nAuthorization: Bearer "+key.Key+"\r\n\r\n", 1, "HEAD")
		h := answers[0]
		if h.StatusCode != get.status || bodies[0] != "" {
			t.Fatalf("HEAD: %d with %d body bytes, GET %d", h.StatusCode, len(bodies[0]), get.status)
		}
		for _, name := range []string{"Content-Type", "ETag", "Cache-Control", "X-Cache"} {
			if h.Header.Get(name) == "" || (name != "X-Cache" && h.Header.Get(name) != get.header.Get(name)) {
				t.Errorf("HEAD %s %q, GET %q", name, h.Header.Get(name), get.header.Get(name))
			}
		}
		if h.ContentLength != int64(len(get.body)) {
			t.Errorf("HEAD Content-Length %d, GET body %d", h.ContentLength, len(get.body))
		}
		if r := do(t, "HEAD", edge.url()+"/healthz", nil, nil); r.status != 200 {
			t.Errorf("HEAD /healthz: %d", r.status)
		}
	})
	t.Run("OPTIONS", func(t *testing.T) {
		r := do(t, "OPTIONS", edge.url()+path, nil, nil)
		if r.status != 200 || r.header.Get("Allow") == "" || !strings.Contains(r.header.Get("Allow"), "GET") || !strings.Contains(r.header.Get("Allow"), "HEAD") {
			t.Errorf("OPTIONS: %d Allow %q", r.status, r.header.Get("Allow"))
		}
		if r := do(t, "PUT", edge.url()+path, nil, bearer(key.Key)); r.status != 405 || !strings.Contains(r.header.Get("Allow"), "HEAD") {
			t.Errorf("PUT: %d Allow %q", r.status, r.header.Get("Allow"))
		}
	})
	t.Run("pipelined requests in order", func(t *testing.T) {
		var reqs strings.Builder
		targets := []string{path, "/healthz", path + "?sort=price", "/v1/nope", path}
		for _, target := range targets {
			reqs.WriteString("GET " + target + " HTTP/1.1\r\nHost: edge\r\nAuthorization: Bearer " + key.Key + "\r\n\r\n")
		}
		answers, bodies, _ := exchange(t, edge.addr, reqs.String(), len(targets), "GET")
		for i, want := range []int{200, 200, 200, 404, 200} {
			if answers[i].StatusCode != want {
				t.Errorf("answer %d (%s): %d, want %d", i, targets[i], answers[i].StatusCode, want)
			}
		}
		if !strings.Contains(bodies[1], `"ok"`) || !strings.Contains(bodies[3], "NOT_FOUND") {
			t.Errorf("answers out of order: %q, %q", bodies[1], bodies[3])
		}
	})
}

// Both Content-Length and Transfer-Encoding: the edge reads the body as
// chunked and closes the connection after the answer (RFC 9112 §6.1), so
// nothing a front proxy framed otherwise is read as a next request; and an
// absolute-form target with another scheme is served from the origin.
func TestAmbiguousFramingAndTargets(t *testing.T) {
	s := newSystem(t)
	edge := s.startEdge(edgeOpts{})
	body := `{"name":"Sam"}`
	req := "POST /v1/leads HTTP/1.1\r\nHost: edge\r\nContent-Type: application/json\r\nContent-Length: " + fmt.Sprint(len(body)) +
		"\r\nTransfer-Encoding: chunked\r\n\r\n" + fmt.Sprintf("%x\r\n%s\r\n0\r\n\r\n", len(body), body) + "GET /healthz HTTP/1.1\r\nHost: edge\r\n\r\n"
	if _, _, eof := exchange(t, edge.addr, req, 1, "POST"); !eof {
		t.Error("Content-Length with Transfer-Encoding: connection left open for the next request")
	}
	st, b := raw(t, edge.addr, "GET https://elsewhere.example/v1/openapi.json HTTP/1.1\r\nHost: edge\r\nConnection: close\r\n\r\n")
	if st != 200 || !strings.Contains(string(b), "openapi") {
		t.Errorf("absolute-form https target: %d %.100s", st, b)
	}
}
