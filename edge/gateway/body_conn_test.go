package gateway

import (
	"bufio"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/listgate/listgate/edge/keycache"
)

// HeaderReceived closes the connection after a request whose Connection
// field lists close, in any case, in any of its Connection lines, and
// keeps it otherwise.
func TestHeaderReceivedConnectionClose(t *testing.T) {
	g, _ := gatewayFor(t, mustKey(t), keycache.Info{Limit: 1 << 30}, Config{})
	for fields, want := range map[string]bool{
		"":                                  false,
		"Connection: keep-alive\r\n":        false,
		"Connection: close\r\n":             true,
		"Connection: Close\r\n":             true,
		"connection: TE, CLOSE\r\n":         true,
		"Connection: keep-alive, close\r\n": true,
		"Connection: keep-alive\r\nConnection: close\r\n": true,
		"Connection: TE\r\nX-Connection: close\r\n":       false,
		"X-Conn: close\r\nConnectio: close\r\n":           false,
		"Connection: closed\r\n":                          false,
		"Connection: keep-alive\r\nVia: close\r\n":        false,
	} {
		var h fasthttp.RequestHeader
		raw := "GET /healthz HTTP/1.1\r\nHost: edge\r\n" + fields + "\r\n"
		if err := h.Read(bufio.NewReader(strings.NewReader(raw))); err != nil {
			t.Fatalf("%q: %v", fields, err)
		}
		g.HeaderReceived(&h)
		if got := h.ConnectionClose(); got != want {
			t.Errorf("%q: connection close %v, want %v", fields, got, want)
		}
	}
}

// asksClose reads what fasthttp's parse of the same header block reads: a
// close that fasthttp sees (its flag, or the first Connection value) is
// seen, and one it does not see is in a second Connection line.
func FuzzAsksClose(f *testing.F) {
	for _, s := range []string{"Connection: close\r\n", "Connection: a, CLOSE\r\n", "Connection: x\r\nConnection: close\r\n",
		"connection:close\r\n", "Connection : close\r\n", "X: y\r\n Connection: close\r\n", "Connection:\tclose \r\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, fields string) {
		var h fasthttp.RequestHeader
		if h.Read(bufio.NewReader(strings.NewReader("GET / HTTP/1.1\r\nHost: edge\r\n"+fields+"\r\n"))) != nil {
			return
		}
		peeked := h.ConnectionClose() || hasToken(h.Peek(fasthttp.HeaderConnection), "close")
		scanned := h.ConnectionClose() || asksClose(h.RawHeaders())
		if peeked && !scanned {
			t.Fatalf("%q: fasthttp reads a close, asksClose does not", fields)
		}
		if scanned && !peeked {
			n := 0
			for _, line := range strings.Split(string(h.RawHeaders()), "\n") {
				if k, _, ok := strings.Cut(line, ":"); ok && strings.EqualFold(strings.TrimSpace(k), "connection") {
					n++
				}
			}
			if n < 2 {
				t.Fatalf("%q: asksClose reads a close in the only Connection line, fasthttp does not", fields)
			}
		}
	})
}
