package main

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"net/netip"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/listgate/listgate/edge/clientaddr"
	"github.com/listgate/listgate/edge/gateway"
	"github.com/listgate/listgate/pkg/apierror"
	"github.com/listgate/listgate/pkg/promtext"
)

func init() {
	promtext.Describe("listgate_edge_connections_open", "Client connections open now on the public listeners.")
	promtext.Describe("listgate_edge_connections_rejected_total",
		"Client connections answered 503 and closed, by reason: max_connections were open, or max_connections_per_ip from the client's address (an IPv6 /64).")
}

// connLimit bounds the client connections open at once over all the
// edge's listeners: each holds a read buffer (max_header_bytes) and, once
// it has been answered, a write buffer (write_buffer_bytes), so the bound
// bounds that memory. It also bounds the share of one client address (an
// IPv6 /64, clientaddr), so that one client cannot hold every place;
// the connections of trusted proxies (a load balancer's) count only in the
// total. A connection over either bound is answered 503 with the API's
// envelope and closed, before anything of it is read.
//
// The counts are atomic, with no lock: an address's is one of a fixed
// table of counters, chosen by a keyed hash of its group, so two
// addresses that share a slot share its bound (with the table's 65,536
// slots, an address shares a heavy user's slot about once in 65,536).
type connLimit struct {
	max  int64
	open atomic.Int64
	// perIP bounds the connections of one address group; 0 is no bound.
	perIP int32
	// trusted are the peers not bound by perIP.
	trusted []netip.Prefix
	seed    uint64
	// groups counts the open connections of each slot; nil when perIP is 0.
	groups []atomic.Int32
	// rejecting bounds the rejected connections being answered at once;
	// past it they are closed without an answer.
	rejecting     chan struct{}
	rejectedTotal *metrics.Counter
	rejectedPerIP *metrics.Counter
}

// groupBits sets the size of connLimit's table of per-address counters:
// 2^16 counters, 256 KiB.
const groupBits = 16

// newConnLimit bounds the connections open at once to max, and those of
// one address group to perIP (0: no bound), but for peers in trusted.
func newConnLimit(max, perIP int, trusted []netip.Prefix) *connLimit {
	l := &connLimit{max: int64(max), perIP: int32(perIP), trusted: trusted, seed: rand.Uint64(),
		rejecting:     make(chan struct{}, 64),
		rejectedTotal: metrics.GetOrCreateCounter(`listgate_edge_connections_rejected_total{reason="max_connections"}`),
		rejectedPerIP: metrics.GetOrCreateCounter(`listgate_edge_connections_rejected_total{reason="max_connections_per_ip"}`)}
	if perIP > 0 {
		l.groups = make([]atomic.Int32, 1<<groupBits)
	}
	metrics.GetOrCreateGauge(`listgate_edge_connections_open`, func() float64 { return float64(l.open.Load()) })
	return l
}

// group returns the counter of c's address group, or nil when c is not
// bound by perIP: the bound is off, c's peer is a trusted proxy, or c is
// not TCP.
func (l *connLimit) group(c net.Conn) *atomic.Int32 {
	if l.groups == nil {
		return nil
	}
	ta, ok := c.RemoteAddr().(*net.TCPAddr)
	if !ok {
		return nil
	}
	a, _ := netip.AddrFromSlice(ta.IP)
	a = a.Unmap()
	for _, p := range l.trusted {
		if p.Contains(a) {
			return nil
		}
	}
	// The group's 4 or 8 bytes as a number (the length folded in),
	// keyed by the seed and spread by a multiplicative hash: its top 16
	// bits choose the slot.
	var buf [8]byte
	g := clientaddr.AppendGroup(buf[:0], a)
	k := binary.LittleEndian.Uint64(buf[:]) ^ uint64(len(g))<<60 ^ l.seed
	return &l.groups[(k*0x9e3779b97f4a7c15)>>(64-groupBits)]
}

// rejectResponse and rejectPerIPResponse are the whole answers to a
// connection over the limit and over its address's share.
var (
	rejectResponse      = rejectAnswer("too many open connections; retry shortly")
	rejectPerIPResponse = rejectAnswer("too many open connections from your address; retry shortly")
)

func rejectAnswer(message string) []byte {
	body := apierror.AppendJSON(nil, apierror.New(apierror.CodeServiceUnavailable, message), "")
	return []byte("HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json; charset=utf-8\r\n" +
		"Retry-After: 1\r\nConnection: close\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + string(body))
}

// wrap bounds the connections ln accepts by l.
func (l *connLimit) wrap(ln net.Listener) net.Listener { return &limitListener{Listener: ln, l: l} }

type limitListener struct {
	net.Listener
	l *connLimit
}

// Accept returns the next connection within the limits; one over them is
// answered and closed here, and Accept goes on to the next.
func (ln *limitListener) Accept() (net.Conn, error) {
	l := ln.l
	for {
		c, err := ln.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.open.Add(1) > l.max {
			l.open.Add(-1)
			l.rejectedTotal.Inc()
			l.reject(c, rejectResponse)
			continue
		}
		g := l.group(c)
		if g != nil && g.Add(1) > l.perIP {
			g.Add(-1)
			l.open.Add(-1)
			l.rejectedPerIP.Inc()
			l.reject(c, rejectPerIPResponse)
			continue
		}
		return &limitedConn{Conn: c, l: l, group: g}, nil
	}
}

// reject answers c 503 (answer) and closes it. The answer is written at once (a new
// connection's send buffer is empty); the connection is then half-closed
// and what the client sent is read and dropped for up to a second, so that
// closing it does not reset the connection before the client reads the
// answer.
func (l *connLimit) reject(c net.Conn, answer []byte) {
	c.SetDeadline(time.Now().Add(time.Second))
	c.Write(answer)
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
	l *connLimit
	// group is the counter of the connection's address group, nil when
	// it is not bound by max_connections_per_ip.
	group  *atomic.Int32
	closed atomic.Bool
	// hold, while set, makes Write keep what it is given in held instead
	// of sending it; only the connection's own goroutine sets it.
	hold bool
	held []byte
	// iov and bufs are WriteWithBuffered's write vector.
	iov  [2][]byte
	bufs net.Buffers
	// state is the gateway's memory of the connection between requests.
	state gateway.ConnState
}

// GatewayState is the gateway's per-connection state (gateway.ConnState).
func (c *limitedConn) GatewayState() *gateway.ConnState { return &c.state }

func (c *limitedConn) Close() error {
	if c.closed.CompareAndSwap(false, true) {
		c.l.open.Add(-1)
		if c.group != nil {
			c.group.Add(-1)
		}
	}
	return c.Conn.Close()
}

// Write sends p, or keeps it in held while an answer's headers wait for
// their spliced lines (hold, the gateway's state's Splicing).
func (c *limitedConn) Write(p []byte) (int, error) {
	if c.hold || c.state.Splicing() {
		c.held = append(c.held, p...)
		return len(p), nil
	}
	if len(c.held) > 0 {
		// Kept for an answer that was then written without its lines
		// (never expected): it goes first.
		held := len(c.held)
		n, err := c.writeHeld(p)
		return max(0, n-held), err
	}
	return c.Conn.Write(p)
}

// writeHeld sends held, then p, in one write, and empties held.
func (c *limitedConn) writeHeld(p []byte) (int, error) {
	c.iov[0], c.iov[1] = c.held, p
	c.bufs = c.iov[:]
	n, err := c.bufs.WriteTo(c.Conn)
	c.iov = [2][]byte{}
	c.held = c.held[:0]
	return int(n), err
}

// WriteWithBuffered sends what bw holds, with the header lines extra
// spliced in before its headers' end, then body, in one writev: bw's bytes
// are taken by flushing it into held (a copy of the headers, a few hundred
// bytes), the body is sent from where it lies. What held kept already (bw
// filled up while the headers were written into it, behind pipelined
// answers: Write while Splicing) goes first, so the headers are whole in
// held wherever bw was flushed. It returns the body's bytes written.
func (c *limitedConn) WriteWithBuffered(bw *bufio.Writer, extra, body []byte) (int, error) {
	if bw.Buffered() == 0 && len(extra) == 0 && len(c.held) == 0 {
		return c.Conn.Write(body)
	}
	kept, buffered := len(c.held), bw.Buffered()
	c.hold = true
	err := bw.Flush()
	c.hold = false
	if err == nil && len(c.held) != kept+buffered {
		// bw writes elsewhere than to this connection: its bytes are not
		// the headers to send before the body.
		c.held = c.held[:0]
		return 0, errNotConnWriter
	}
	head, ok := gateway.SpliceHeaders(c.held, extra)
	// The grown buffer is kept for the next answer, unless it is large.
	c.held = head[:0]
	if cap(c.held) > 4<<10 {
		c.held = nil
	}
	if err != nil {
		return 0, err
	}
	if !ok {
		return 0, errHeadersFlushed
	}
	// The vector lives in the connection: a local one would be allocated
	// for every answer (WriteTo takes its address).
	c.iov[0], c.iov[1] = head, body
	c.bufs = c.iov[:]
	n, err := c.bufs.WriteTo(c.Conn)
	c.iov = [2][]byte{}
	return int(max(0, n-int64(len(head)))), err
}

// errNotConnWriter refuses a gathered write through a buffered writer
// that is not the connection's own.
var errNotConnWriter = errors.New("edge: gathered write through another writer than the connection's")

// errHeadersFlushed ends a connection whose response headers left before
// the lines to splice into them could be: never expected (what is written
// while they wait is kept).
var errHeadersFlushed = errors.New("edge: response headers flushed before their spliced lines")
