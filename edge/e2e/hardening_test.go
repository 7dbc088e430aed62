package e2e

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

func TestEdgeHardening(t *testing.T) {
	s := newSystem(t)
	edge := s.startEdge(edgeOpts{yaml: "read_timeout: 1s\nmax_header_bytes: 4096\nmax_body_bytes: 65536\n"})

	t.Run("slow client is cut off", func(t *testing.T) {
		c, err := net.Dial("tcp", edge.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		// Half a request, then nothing: the read timeout closes it.
		io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: edge\r\n")
		start := time.Now()
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, err = io.ReadAll(c)
		if err != nil || time.Since(start) > 5*time.Second {
			t.Errorf("connection still open %v after a stalled request (%v)", time.Since(start), err)
		}
	})
	t.Run("header block too large", func(t *testing.T) {
		c, err := net.Dial("tcp", edge.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: edge\r\nX-Big: "+strings.Repeat("a", 8192)+"\r\n\r\n")
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		line, _ := bufio.NewReader(c).ReadString('\n')
		if !strings.Contains(line, " 431 ") {
			t.Errorf("oversized headers answered %q", line)
		}
	})
	t.Run("body too large", func(t *testing.T) {
		// A client that announces its size and asks before sending is
		// refused on Content-Length, before any of the body.
		c, err := net.Dial("tcp", edge.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		io.WriteString(c, "POST /v1/feeds HTTP/1.1\r\nHost: edge\r\nAuthorization: Bearer t\r\nContent-Type: application/xml\r\nContent-Length: 70000\r\nExpect: 100-continue\r\n\r\n")
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		resp, err := io.ReadAll(c)
		if !bytes.HasPrefix(resp, []byte("HTTP/1.1 413 ")) || !bytes.Contains(resp, []byte("PAYLOAD_TOO_LARGE")) {
			t.Errorf("oversized body answered %q (%v)", resp, err)
		}
	})
	t.Run("still serving", func(t *testing.T) {
		if r := do(t, "GET", edge.url()+"/healthz", nil, nil); r.status != 200 {
			t.Errorf("healthz %d", r.status)
		}
	})
}
