package gateway

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/listgate/listgate/pkg/apikey"
)

// BenchmarkServeConn is the cached page served by a fasthttp server set up
// as the edge's (edge/main.go: streamed bodies, HeaderReceived, timeouts,
// a 32 KiB write buffer) over an in-memory keep-alive connection, beside
// the bench's bare fasthttp yardstick serving the same bytes over the same
// connection: request parsing, the handler and the response's writing, all
// but the kernel. Instructions per op (valgrind --tool=cachegrind) of the
// two sub-benchmarks give the edge's userland cost against the bare
// server's independently of the machine's load.
//
// "edge" is a site with a plan limit, whose answers carry the rate-limit
// headers; "edge-unlimited" a site without one (Enterprise), as the bench's
// edge-hit serves.
func BenchmarkServeConn(b *testing.B) {
	key := mustKey(b)
	path := "/v1/sites/" + testSite + "/listings"
	page := make([]byte, 16<<10)
	for i := range page {
		page[i] = 'a' + byte(i%26)
	}
	edge, unlimited := serveConnServer(b, key, 1<<30, path, page), serveConnServer(b, key, 0, path, page)
	bare := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) {
		ctx.Response.Header.SetContentType("application/json")
		ctx.Response.SetBodyRaw(page)
	}, NoDefaultServerHeader: true, ReadBufferSize: 16 << 10, WriteBufferSize: 32 << 10}
	// As wrk sends it.
	req := []byte("GET " + path + "?page=2 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nAuthorization: Bearer " + key + "\r\n\r\n")
	for _, bc := range []struct {
		name string
		srv  *fasthttp.Server
	}{{"edge", edge}, {"edge-unlimited", unlimited}, {"bare", bare}} {
		b.Run(bc.name, func(b *testing.B) {
			c := &memConn{req: req, left: b.N}
			b.ReportAllocs()
			b.ResetTimer()
			if err := bc.srv.ServeConn(c); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			if c.written < int64(b.N)*int64(len(page)) {
				b.Fatalf("%d bytes written for %d requests", c.written, b.N)
			}
		})
	}
}

// serveConnServer is a fasthttp server set up as the edge's (edge/main.go)
// in front of a gateway whose key's site has limit, page cached at path.
func serveConnServer(b *testing.B, key string, limit int, path string, page []byte) *fasthttp.Server {
	g, cache := newTestGateway(b, key, limit)
	k := mustAppendKey(b, cache, []byte(testSite), []byte(path), []byte("page=2"))
	if cache.Put(k, 200, []byte("application/json"), []byte("max-age=600"), []byte(`"e"`), page, time.Now()) == nil {
		b.Fatal("not stored")
	}
	return edgeServer(g)
}

// memConn is a keep-alive client connection in memory: each Read is the
// next of left requests, writes are counted and dropped. It gathers as the
// edge's listeners' connections do (gatherWriter).
type memConn struct {
	ConnState
	req     []byte
	left    int
	written int64
	// out, when set, keeps what was written.
	out  *bytes.Buffer
	hold bool
	held []byte
}

func (c *memConn) Read(p []byte) (int, error) {
	if c.left == 0 {
		return 0, io.EOF
	}
	c.left--
	return copy(p, c.req), nil
}

func (c *memConn) Write(p []byte) (int, error) {
	if c.hold {
		c.held = append(c.held, p...)
		return len(p), nil
	}
	c.written += int64(len(p))
	if c.out != nil {
		c.out.Write(p)
	}
	return len(p), nil
}

func (c *memConn) WriteWithBuffered(bw *bufio.Writer, extra, body []byte) (int, error) {
	c.hold = true
	bw.Flush()
	c.hold = false
	head, ok := SpliceHeaders(c.held, extra)
	c.held = c.held[:0]
	if !ok {
		return 0, errExtraHeaders
	}
	c.Write(head)
	c.written += int64(len(body))
	if c.out != nil {
		c.out.Write(body)
	}
	return len(body), nil
}

func (c *memConn) GatewayState() *ConnState { return &c.ConnState }
func (c *memConn) Close() error             { return nil }
func (c *memConn) LocalAddr() net.Addr      { return memLocal }
func (c *memConn) RemoteAddr() net.Addr     { return memRemote }

var (
	memLocal  = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}
	memRemote = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40000}
)

func (c *memConn) SetDeadline(t time.Time) error      { return nil }
func (c *memConn) SetReadDeadline(t time.Time) error  { return nil }
func (c *memConn) SetWriteDeadline(t time.Time) error { return nil }

// A connection remembers the hash of the last key it presented; another
// key on the same connection is hashed anew, never answered with the last
// one's hash.
func TestKeyHashPerConnection(t *testing.T) {
	a, b := mustKey(t), mustKey(t)
	c := &memConn{}
	var ctx fasthttp.RequestCtx
	ctx.Init2(c, nil, false)
	for i, k := range []string{a, a, b, a, b, b} {
		if got := keyHash(&ctx, []byte(k)); *got != apikey.Hash(k) {
			t.Fatalf("request %d: hash of another key", i)
		}
	}
	if string(c.key[:]) != b || !c.set {
		t.Errorf("the connection does not hold its last key's hash")
	}
	// Without a connection state (a plain net.Conn), every key is hashed.
	ctx.Init2(plainConn{c}, nil, false)
	if *keyHash(&ctx, []byte(a)) != apikey.Hash(a) {
		t.Error("plain connection: wrong hash")
	}
}

type plainConn struct{ net.Conn }

// A connection's peer is worked out once; a trusted proxy's connection
// still takes each request's X-Forwarded-For, an untrusted one never.
func TestClientIPPerConnection(t *testing.T) {
	g, _ := newTestGateway(t, mustKey(t), 0)
	g.cfg.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
	var ctx fasthttp.RequestCtx
	ctx.Init2(&memConn{}, nil, false)
	for _, xff := range []string{"203.0.113.7", "198.51.100.9", ""} {
		ctx.Request.Header.Set("X-Forwarded-For", xff)
		want := xff
		if want == "" {
			want = "127.0.0.1"
		}
		if got := g.clientIP(&ctx).String(); got != want {
			t.Errorf("X-Forwarded-For %q from a trusted peer: client %s, want %s", xff, got, want)
		}
	}
	untrusted, _ := newTestGateway(t, mustKey(t), 0)
	ctx.Init2(&memConn{}, nil, false)
	ctx.Request.Header.Set("X-Forwarded-For", "203.0.113.7")
	for range 2 {
		if got := untrusted.clientIP(&ctx).String(); got != "127.0.0.1" {
			t.Errorf("an untrusted peer's X-Forwarded-For believed: %s", got)
		}
	}
}
