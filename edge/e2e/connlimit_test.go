package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

// max_connections bounds the client connections open at once: one more is
// answered 503 with the API's envelope and Retry-After, and closed; a
// connection that closes gives its place back.
func TestEdgeMaxConnections(t *testing.T) {
	s := newSystem(t)
	edge := s.startEdge(edgeOpts{yaml: "max_connections: 3\n"})
	// awaitReady's keep-alive connection holds a place: let it go.
	client.CloseIdleConnections()
	awaitMetric(t, edge, "listgate_edge_connections_open", 0)

	dial := func() (net.Conn, *bufio.Reader) { return dialFrom(t, "", edge.addr) }

	var open []net.Conn
	for i := range 3 {
		c, r := dial()
		if resp, err := healthz(c, r); err != nil || resp.StatusCode != 200 {
			t.Fatalf("connection %d of 3: %v %v", i+1, resp, err)
		}
		open = append(open, c)
	}
	awaitMetric(t, edge, "listgate_edge_connections_open", 3)

	c, r := dial()
	resp, err := healthz(c, r)
	if err != nil {
		t.Fatalf("the fourth connection got no answer: %v", err)
	}
	assertRefused(t, resp, c, r, "too many open connections; retry shortly")
	if got := metric(t, edge, "listgate_edge_connections_rejected_total"); got != 1 {
		t.Errorf("connections_rejected_total = %v, want 1", got)
	}

	// The three still work, and a closed one's place is taken again.
	for i, c := range open {
		if resp, err := healthz(c, bufio.NewReader(c)); err != nil || resp.StatusCode != 200 {
			t.Fatalf("connection %d after the refusal: %v %v", i+1, resp, err)
		}
	}
	open[0].Close()
	awaitMetric(t, edge, "listgate_edge_connections_open", 2)
	c, r = dial()
	if resp, err := healthz(c, r); err != nil || resp.StatusCode != 200 {
		t.Fatalf("a new connection after one closed: %v %v", resp, err)
	}
}

// healthz sends a request on c and reads its answer; its body is in the
// header X-Test-Body.
func healthz(c net.Conn, r *bufio.Reader) (*http.Response, error) {
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: edge\r\n\r\n"); err != nil {
		return nil, err
	}
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = io.NopCloser(nil)
	if err == nil {
		resp.Header.Set("X-Test-Body", string(body))
	}
	return resp, err
}

// dialFrom connects to addr from the loopback address local ("": the
// system's choice), closed when the test ends.
func dialFrom(tb testing.TB, local, addr string) (net.Conn, *bufio.Reader) {
	tb.Helper()
	d := net.Dialer{Timeout: 5 * time.Second}
	if local != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(local)}
	}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close() })
	return c, bufio.NewReader(c)
}

// assertRefused checks that resp, read from c, is the edge's refusal of a
// connection: 503 SERVICE_UNAVAILABLE with message, Retry-After and
// Connection: close, and c closed after it.
func assertRefused(tb testing.TB, resp *http.Response, c net.Conn, r *bufio.Reader, message string) {
	tb.Helper()
	var env struct {
		Error struct{ Code, Message string }
	}
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" || !resp.Close ||
		json.Unmarshal([]byte(resp.Header.Get("X-Test-Body")), &env) != nil || env.Error.Code != "SERVICE_UNAVAILABLE" ||
		env.Error.Message != message {
		tb.Fatalf("refused connection: %d %v %q, want 503 %q", resp.StatusCode, resp.Header, resp.Header.Get("X-Test-Body"), message)
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, err := r.Read(make([]byte, 1)); n != 0 || err == nil {
		tb.Errorf("the refused connection stays open (%d, %v)", n, err)
	}
}

// max_connections_per_ip bounds one client address's share of the
// connections: one more from it is refused while other addresses still
// connect; a closed one gives its place back; a trusted proxy's
// connections are bound only by max_connections.
func TestEdgeMaxConnectionsPerIP(t *testing.T) {
	s := newSystem(t)
	edge := s.startEdge(edgeOpts{yaml: "max_connections: 10\nmax_connections_per_ip: 2\ntrusted_proxies: [127.0.0.3/32]\n"})
	client.CloseIdleConnections()
	awaitMetric(t, edge, "listgate_edge_connections_open", 0)
	ok := func(c net.Conn, r *bufio.Reader, what string) {
		t.Helper()
		if resp, err := healthz(c, r); err != nil || resp.StatusCode != 200 {
			t.Fatalf("%s: %v %v", what, resp, err)
		}
	}

	var first []net.Conn
	for i := range 2 {
		c, r := dialFrom(t, "127.0.0.1", edge.addr)
		ok(c, r, fmt.Sprintf("connection %d of 2 from 127.0.0.1", i+1))
		first = append(first, c)
	}
	c, r := dialFrom(t, "127.0.0.1", edge.addr)
	resp, err := healthz(c, r)
	if err != nil {
		t.Fatalf("the third connection from 127.0.0.1 got no answer: %v", err)
	}
	assertRefused(t, resp, c, r, "too many open connections from your address; retry shortly")
	if got := metric(t, edge, `listgate_edge_connections_rejected_total{reason="max_connections_per_ip"}`); got != 1 {
		t.Errorf(`connections_rejected_total{reason="max_connections_per_ip"} = %v, want 1`, got)
	}
	if got := metric(t, edge, `listgate_edge_connections_rejected_total{reason="max_connections"}`); got != 0 {
		t.Errorf(`connections_rejected_total{reason="max_connections"} = %v, want 0`, got)
	}

	// Another client is not locked out.
	c, r = dialFrom(t, "127.0.0.2", edge.addr)
	ok(c, r, "a connection from 127.0.0.2")
	// A trusted proxy carries many clients: more than the share.
	for i := range 4 {
		c, r := dialFrom(t, "127.0.0.3", edge.addr)
		ok(c, r, fmt.Sprintf("connection %d from the trusted proxy 127.0.0.3", i+1))
	}
	awaitMetric(t, edge, "listgate_edge_connections_open", 7)

	// A closed connection gives its address's place back.
	first[0].Close()
	awaitMetric(t, edge, "listgate_edge_connections_open", 6)
	c, r = dialFrom(t, "127.0.0.1", edge.addr)
	ok(c, r, "a new connection from 127.0.0.1 after one closed")
}
