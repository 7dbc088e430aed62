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
