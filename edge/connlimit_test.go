package main

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"
)

// stubListener hands out the same connection on every Accept: the accept
// path's own cost, without the kernel's.
type stubListener struct {
	net.Listener
	c net.Conn
}

func (l *stubListener) Accept() (net.Conn, error) { return l.c, nil }

// stubConn is a connection from addr that does nothing.
type stubConn struct {
	net.Conn
	addr net.Addr
}

func (c *stubConn) RemoteAddr() net.Addr { return c.addr }
func (c *stubConn) Close() error         { return nil }

// BenchmarkAcceptPath accepts and closes a connection through the limit:
// what each new client connection costs in the accept loop and at its
// close.
func BenchmarkAcceptPath(b *testing.B) {
	for _, tc := range []struct{ name, addr string }{
		{"ipv4", "192.0.2.7:40000"},
		{"ipv6", "[2001:db8:1:2::7]:40000"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			a, err := net.ResolveTCPAddr("tcp", tc.addr)
			if err != nil {
				b.Fatal(err)
			}
			l := newConnLimit(10_000, 1_000, nil)
			ln := l.wrap(&stubListener{c: &stubConn{addr: a}})
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				c, err := ln.Accept()
				if err != nil {
					b.Fatal(err)
				}
				c.Close()
			}
		})
	}
	b.Run("parallel", func(b *testing.B) {
		l := newConnLimit(1_000_000, 1_000_000, nil)
		var n atomic.Int32
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			// A client address of its own for each goroutine.
			a := &net.TCPAddr{IP: net.IPv4(192, 0, 2, byte(n.Add(1))), Port: 40000}
			ln := l.wrap(&stubListener{c: &stubConn{addr: a}})
			for pb.Next() {
				c, _ := ln.Accept()
				c.Close()
			}
		})
	})
}

// queueListener hands out its connections in order.
type queueListener struct {
	net.Listener
	conns []net.Conn
}

func (l *queueListener) Accept() (net.Conn, error) {
	c := l.conns[0]
	l.conns = l.conns[1:]
	return c, nil
}

// refusedConn records what the edge wrote to a refused connection.
type refusedConn struct {
	stubConn
	wrote  []byte
	closed chan struct{}
}

func (c *refusedConn) Write(p []byte) (int, error) {
	c.wrote = append(c.wrote, p...)
	return len(p), nil
}
func (c *refusedConn) Read(p []byte) (int, error)  { return 0, io.EOF }
func (c *refusedConn) SetDeadline(time.Time) error { return nil }
func (c *refusedConn) Close() error                { close(c.closed); return nil }

// One address group's share: IPv6 addresses of one /64 count together,
// another /64 and an IPv4 address apart, a trusted proxy not at all, and
// 0 turns the share off.
func TestConnLimitPerAddressGroup(t *testing.T) {
	conn := func(addr string) net.Conn {
		return &stubConn{addr: net.TCPAddrFromAddrPort(netip.MustParseAddrPort(addr))}
	}
	refused := func(addr string) *refusedConn {
		return &refusedConn{stubConn: stubConn{addr: net.TCPAddrFromAddrPort(netip.MustParseAddrPort(addr))}, closed: make(chan struct{})}
	}
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}

	l := newConnLimit(100, 2, trusted)
	r := refused("[2001:db8:1:2::99]:1")
	ln := l.wrap(&queueListener{conns: []net.Conn{
		conn("[2001:db8:1:2::1]:1"), conn("[2001:db8:1:2:ffff::2]:1"),
		r, // the third of the /64: refused, and Accept goes on
		conn("[2001:db8:1:3::1]:1"), conn("192.0.2.1:1"), conn("[::ffff:192.0.2.1]:1"),
		conn("10.1.1.1:1"), conn("10.1.1.1:1"), conn("10.1.1.1:1"),
	}})
	var open []net.Conn
	for range 8 {
		c, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		open = append(open, c)
	}
	<-r.closed
	if !bytes.Contains(r.wrote, []byte("503 Service Unavailable")) || !bytes.Contains(r.wrote, []byte("from your address")) {
		t.Errorf("the third connection of a /64 was answered %q", r.wrote)
	}
	if got := l.open.Load(); got != 8 {
		t.Errorf("open = %d, want 8", got)
	}
	// 192.0.2.1 twice (once mapped) is at its share; one closed gives a
	// place back.
	r = refused("192.0.2.1:3")
	ln = l.wrap(&queueListener{conns: []net.Conn{r, conn("198.51.100.1:1")}})
	if _, err := ln.Accept(); err != nil {
		t.Fatal(err)
	}
	<-r.closed
	if !bytes.Contains(r.wrote, []byte("from your address")) {
		t.Errorf("a third connection of 192.0.2.1 (one mapped) was answered %q", r.wrote)
	}
	open[3].Close()
	open[3].Close()
	ln = l.wrap(&queueListener{conns: []net.Conn{conn("192.0.2.1:2")}})
	if _, err := ln.Accept(); err != nil {
		t.Fatal(err)
	}
	for _, c := range open {
		c.Close()
	}
	for i := range l.groups {
		if n := l.groups[i].Load(); n != 0 && n != 1 {
			t.Fatalf("slot %d counts %d after the closes", i, n)
		}
	}

	off := newConnLimit(100, 0, nil)
	ln = off.wrap(&queueListener{conns: []net.Conn{conn("192.0.2.1:1"), conn("192.0.2.1:2"), conn("192.0.2.1:3")}})
	for i := range 3 {
		if _, err := ln.Accept(); err != nil {
			t.Fatalf("connection %d with no share: %v", i+1, err)
		}
	}
	if off.groups != nil {
		t.Error("a table of counters with the share off")
	}
}

// A gathered answer leaves as the buffered headers with the extra lines
// spliced before their end, then the body, over a real socket, and costs
// no allocation.
func TestWriteWithBuffered(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	server, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	c := &limitedConn{Conn: server, l: &connLimit{}}
	defer c.Close()
	bw := bufio.NewWriterSize(c, 4<<10)
	head, extra, body := "HTTP/1.1 200 OK\r\nContent-Length: 8192\r\n\r\n", "X-Cache: HIT\r\n", bytes.Repeat([]byte("b"), 8192)
	send := func() {
		bw.WriteString(head)
		if n, err := c.WriteWithBuffered(bw, []byte(extra), body); n != len(body) || err != nil {
			t.Fatalf("wrote %d of the body: %v", n, err)
		}
	}
	send()
	want := "HTTP/1.1 200 OK\r\nContent-Length: 8192\r\n" + extra + "\r\n" + string(body)
	got := make([]byte, len(want))
	if _, err := io.ReadFull(client, got); err != nil || string(got) != want {
		t.Fatalf("read %q… %v", got[:min(len(got), 80)], err)
	}
	if raceEnabled {
		return // the race detector changes allocation counts
	}
	done := make(chan struct{})
	go func() { io.Copy(io.Discard, client); close(done) }()
	if n := testing.AllocsPerRun(100, send); n != 0 {
		t.Errorf("WriteWithBuffered: %v allocations an answer", n)
	}
	c.Close()
	<-done
}

// A gathered write through a buffered writer that does not write to the
// connection is refused: its bytes are not this answer's headers.
func TestWriteWithBufferedOtherWriter(t *testing.T) {
	var elsewhere bytes.Buffer
	conn := &recordConn{}
	c := &limitedConn{Conn: conn, l: &connLimit{}}
	bw := bufio.NewWriter(&elsewhere)
	bw.WriteString("HTTP/1.1 200 OK\r\n\r\n")
	if _, err := c.WriteWithBuffered(bw, nil, []byte("body")); err == nil || conn.sent.Len() > 0 {
		t.Fatalf("a write through another writer was taken: %v, the connection got %q", err, conn.sent.Bytes())
	}
}

// recordConn keeps what is written to it.
type recordConn struct {
	net.Conn
	sent bytes.Buffer
}

func (c *recordConn) Write(p []byte) (int, error) { return c.sent.Write(p) }
