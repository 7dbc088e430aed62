package main

import (
	"bufio"
	"io"
	"net"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/listgate/listgate/edge/gateway"
	"github.com/listgate/listgate/pkg/apierror"
	"github.com/listgate/listgate/pkg/promtext"
)

func init() {
	promtext.Describe("listgate_edge_connections_open", "Client connections open now on the public listeners.")
	promtext.Describe("listgate_edge_connections_rejected_total",
		"Client connections answered 503 and closed because max_connections were open.")
}

// connLimit bounds the client connections open at once over all the
// edge's listeners: each holds a read buffer (max_header_bytes) and, once
// it has been answered, a write buffer (write_buffer_bytes), so the bound
// bounds that memory. A connection over it is answered 503 with the API's
// envelope and closed, before anything of it is read.
type connLimit struct {
	max  int64
	open atomic.Int64
	// rejecting bounds the rejected connections being answered at once;
	// past it they are closed without an answer.
	rejecting chan struct{}
	rejected  *metrics.Counter
}

func newConnLimit(max int) *connLimit {
	l := &connLimit{max: int64(max), rejecting: make(chan struct{}, 64),
		rejected: metrics.GetOrCreateCounter(`listgate_edge_connections_rejected_total`)}
	metrics.GetOrCreateGauge(`listgate_edge_connections_open`, func() float64 { return float64(l.open.Load()) })
	return l
}

// rejectResponse is the whole answer to a connection over the limit.
var rejectResponse = func() []byte {
	body := apierror.AppendJSON(nil, apierror.New(apierror.CodeServiceUnavailable, "too many open connections; retry shortly"), "")
	return []byte("HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json; charset=utf-8\r\n" +
		"Retry-After: 1\r\nConnection: close\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + string(body))
}()

// wrap bounds the connections ln accepts by l.
func (l *connLimit) wrap(ln net.Listener) net.Listener { return &limitListener{Listener: ln, l: l} }

type limitListener struct {
	net.Listener
	l *connLimit
}

// Accept returns the next connection within the limit; one over it is
// answered and closed here, and Accept goes on to the next.
func (ln *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := ln.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if ln.l.open.Add(1) <= ln.l.max {
			return &limitedConn{Conn: c, l: ln.l}, nil
		}
		ln.l.open.Add(-1)
		ln.l.rejected.Inc()
		ln.l.reject(c)
	}
}

// reject answers c 503 and closes it. The answer is written at once (a new
// connection's send buffer is empty); the connection is then half-closed
// and what the client sent is read and dropped for up to a second, so that
// closing it does not reset the connection before the client reads the
// answer.
func (l *connLimit) reject(c net.Conn) {
	c.SetDeadline(time.Now().Add(time.Second))
	c.Write(rejectResponse)
	select {
	case l.rejecting <- struct{}{}:
	default:
		c.Close()
		return
	}
	go func() {
		defer func() { <-l.rejecting }()
		defer c.Close()
		if tc, ok := c.(*net.TCPConn); ok {
			tc.CloseWrite()
		}
		io.Copy(io.Discard, io.LimitReader(c, 64<<10))
	}()
}

// limitedConn gives its place back when it is closed, once. It also sends
// a response's buffered headers and its body in one write
// (WriteWithBuffered, for cached bodies: gateway/entrybody.go).
type limitedConn struct {
	net.Conn
	l      *connLimit
	closed atomic.Bool
	// hold, while set, makes Write keep what it is given in held instead
	// of sending it; only the connection's own goroutine sets it.
	hold bool
	held []byte
	// state is the gateway's memory of the connection between requests.
	state gateway.ConnState
}

// GatewayState is the gateway's per-connection state (gateway.ConnState).
func (c *limitedConn) GatewayState() *gateway.ConnState { return &c.state }

func (c *limitedConn) Close() error {
	if c.closed.CompareAndSwap(false, true) {
		c.l.open.Add(-1)
	}
	return c.Conn.Close()
}

func (c *limitedConn) Write(p []byte) (int, error) {
	if c.hold {
		c.held = append(c.held, p...)
		return len(p), nil
	}
	return c.Conn.Write(p)
}

// WriteWithBuffered sends what bw holds, then body, in one writev: bw's
// bytes are taken by flushing it into held (a copy of the headers, a few
// hundred bytes), the body is sent from where it lies. It returns the
// body's bytes written.
func (c *limitedConn) WriteWithBuffered(bw *bufio.Writer, body []byte) (int, error) {
	if bw.Buffered() == 0 {
		return c.Conn.Write(body)
	}
	c.hold = true
	err := bw.Flush()
	c.hold = false
	head := c.held
	c.held = c.held[:0]
	if cap(c.held) > 4<<10 {
		c.held = nil
	}
	if err != nil {
		return 0, err
	}
	bufs := net.Buffers{head, body}
	n, err := bufs.WriteTo(c.Conn)
	return int(max(0, n-int64(len(head)))), err
}
