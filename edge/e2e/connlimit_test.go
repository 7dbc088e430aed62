package e2e

import (
	"bufio"
	"encoding/json"
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

	// healthz sends a request on c and reads its answer.
	healthz := func(c net.Conn, r *bufio.Reader) (*http.Response, error) {
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
	dial := func() (net.Conn, *bufio.Reader) {
		c, err := net.Dial("tcp", edge.addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c, bufio.NewReader(c)
	}

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
	var env struct {
		Error struct{ Code, Message string }
	}
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" || !resp.Close ||
		json.Unmarshal([]byte(resp.Header.Get("X-Test-Body")), &env) != nil || env.Error.Code != "SERVICE_UNAVAILABLE" {
		t.Fatalf("fourth connection: %d %v %q", resp.StatusCode, resp.Header, resp.Header.Get("X-Test-Body"))
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, err := r.Read(make([]byte, 1)); n != 0 || err == nil {
		t.Errorf("the refused connection stays open (%d, %v)", n, err)
	}
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
