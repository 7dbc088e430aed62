package gateway

import (
	"bufio"
	"bytes"
	"slices"
	"strings"
	"testing"
)

// keepingConn is memConn keeping what is written to it while the gateway
// says its answer's lines are still to be spliced in (ConnState.Splicing),
// as the edge's connections do (edge/connlimit.go), so that the lines are
// spliced into whole headers.
type keepingConn struct{ *memConn }

func (c keepingConn) Write(p []byte) (int, error) {
	if c.Splicing() {
		c.held = append(c.held, p...)
		return len(p), nil
	}
	return c.memConn.Write(p)
}

// Pipelined answers fill the write buffer up to where a spliced answer's
// headers are cut by its end (1, 2, 3… bytes before theirs, where no
// blank line is left to splice the lines before): the buffer is flushed
// in the middle of the headers, and the gateway must have said (Splicing) that
// the answer's lines are still to come, so that the flushed bytes are kept
// and the lines spliced into the whole headers; once the answer is
// written, it says so no more. Each answer is the one a plain connection
// gets.
func TestSplicingAcrossTheWriteBuffer(t *testing.T) {
	key := mustKey(t)
	big := bytes.Repeat([]byte(`{"listing":"a fine house by the sea"},`), 200)
	g, base := cachedPages(t, key, big)
	srv := edgeServer(g)
	srv.WriteBufferSize = 4 << 10
	small := func(id int) string {
		return "GET " + base + "/agents HTTP/1.1\r\nHost: edge\r\nAuthorization: Bearer " + key + "\r\nX-Request-Id: " + strings.Repeat("r", id) + "\r\n\r\n"
	}
	spliced := rawRequest("GET", base+"/listings", key, "Origin: "+allowedOrigin+"\r\n")
	// The size of a small answer with a one-character request id (each
	// character more is a byte more), and of the headers fasthttp writes
	// for the spliced answer (before the lines are spliced in).
	var out bytes.Buffer
	if err := srv.ServeConn(&memConn{req: []byte(small(1) + small(1)), left: 1, out: &out}); err != nil {
		t.Fatal(err)
	}
	size := out.Len() / 2
	m := &measuringConn{memConn: &memConn{req: []byte(spliced), left: 1}}
	if err := srv.ServeConn(m); err != nil || m.head == 0 {
		t.Fatalf("%v, headers of %d bytes", err, m.head)
	}
	for _, cut := range []int{1, 2, 3, 4, 5, 6, m.head / 2, m.head - 1, m.head} {
		// Small answers fill the buffer up to cut bytes before the end of
		// the spliced answer's headers.
		before := srv.WriteBufferSize + cut - m.head
		n := before / size
		extra := before - n*size
		var raw strings.Builder
		for range n {
			add := min(extra, 63)
			extra -= add
			raw.WriteString(small(1 + add))
		}
		if extra > 0 {
			t.Fatalf("cut %d: %d bytes left over", cut, extra)
		}
		raw.WriteString(spliced + small(1))
		heads := make([]bool, n+2)
		var kept, plain bytes.Buffer
		mc := &memConn{req: []byte(raw.String()), left: 1, out: &kept}
		var during []bool
		if err := srv.ServeConn(&trackingConn{keepingConn: keepingConn{mc}, during: &during}); err != nil {
			t.Fatalf("cut %d: %v", cut, err)
		}
		if !slices.Contains(during, true) {
			t.Errorf("cut %d: the buffer was flushed in the middle of the headers without the gateway saying the lines were to come", cut)
		}
		if mc.Splicing() {
			t.Errorf("cut %d: still splicing after the answers", cut)
		}
		if err := srv.ServeConn(plainConn{&memConn{req: []byte(raw.String()), left: 1, out: &plain}}); err != nil {
			t.Fatal(err)
		}
		a, b := readResponses(t, kept.Bytes(), heads), readResponses(t, plain.Bytes(), heads)
		for i := range a {
			if a[i].status != b[i].status || !bytes.Equal(a[i].body, b[i].body) || !slices.Equal(a[i].headers, b[i].headers) {
				t.Errorf("cut %d, answer %d:\nspliced %d %q\n  plain %d %q", cut, i, a[i].status, a[i].headers, b[i].status, b[i].headers)
			}
		}
	}
}

// measuringConn notes the bytes buffered when a gathered answer is sent:
// its headers, when it is the connection's first answer.
type measuringConn struct {
	*memConn
	head int
}

func (c *measuringConn) WriteWithBuffered(bw *bufio.Writer, extra, body []byte) (int, error) {
	c.head = bw.Buffered()
	return c.memConn.WriteWithBuffered(bw, extra, body)
}

// trackingConn notes, at each write, whether the answer's lines were still
// to come.
type trackingConn struct {
	keepingConn
	during *[]bool
}

func (c *trackingConn) Write(p []byte) (int, error) {
	*c.during = append(*c.during, c.Splicing())
	return c.keepingConn.Write(p)
}
