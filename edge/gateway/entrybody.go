package gateway

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"sync"

	"github.com/valyala/fasthttp"
)

// gatherWriter is a client connection that can send what a response's
// buffered writer holds (the status line and headers), more header lines
// (extra, spliced before the headers' end with SpliceHeaders) and a body
// in one write (writev) without copying the body: the edge's listeners
// hand out such connections (edge/connlimit.go).
type gatherWriter interface {
	WriteWithBuffered(bw *bufio.Writer, extra, body []byte) (int, error)
}

// SpliceHeaders appends extra, whole header lines ("Name: value\r\n"…),
// to head, a response's status line and headers ending in the blank line,
// before that blank line. It reports false, and leaves head as it was,
// when head does not end in the blank line.
func SpliceHeaders(head, extra []byte) ([]byte, bool) {
	if len(extra) == 0 {
		return head, true
	}
	if !bytes.HasSuffix(head, crlfcrlf) {
		return head, false
	}
	head = append(head[:len(head)-2], extra...)
	return append(head, crlfcrlf[2:]...), true
}

var crlfcrlf = []byte("\r\n\r\n")

// zeroCopyMin is the body size from which a cached body is sent by
// gathering instead of being copied into the connection's write buffer:
// below it the copy costs less than the setup.
const zeroCopyMin = 4 << 10

// setEntryBody answers body, bytes of an immutable cache entry. A large
// body on a connection that gathers goes out in one write with the
// headers, straight from the entry (as nginx sends a file with its
// headers); anything else is copied into the write buffer as usual.
func setEntryBody(ctx *fasthttp.RequestCtx, body []byte) {
	gw, ok := ctx.Conn().(gatherWriter)
	if !ok || len(body) < zeroCopyMin {
		ctx.Response.SetBodyRaw(body)
		return
	}
	setGatheredBody(ctx, gw, body, nil)
}

// setGatheredBody answers body, from a cache entry, on a connection that
// gathers; extra, when not nil, is header lines the connection sends with
// the response's headers (rawHeaders), read when the response is written.
//
// With extra, everything written to the connection is kept until the
// answer's headers leave with the lines (ConnState.Splicing).
func setGatheredBody(ctx *fasthttp.RequestCtx, gw gatherWriter, body []byte, extra *[]byte) {
	b := entryBodies.Get().(*entryBody)
	b.body, b.conn, b.extra = body, gw, extra
	if cs, ok := ctx.Conn().(connStater); ok && extra != nil {
		b.state = cs.GatewayState()
		b.state.splicing = true
	}
	ctx.Response.SetBodyStream(b, len(body))
}

var entryBodies = sync.Pool{New: func() any { return new(entryBody) }}

// entryBody is a cached body as fasthttp's body stream. fasthttp writes a
// stream of known size by writing the headers into the connection's
// buffered writer and then calling WriteTo with that writer; WriteTo sends
// both in one write. Read serves every other reader (Response.Body).
type entryBody struct {
	body []byte
	off  int
	conn gatherWriter
	// extra is header lines to send with the headers (rawHeaders).
	extra *[]byte
	// state is the connection's, whose splicing is set while the lines
	// are not sent.
	state *ConnState
}

// endSplicing lets the connection send what is written to it again.
func (b *entryBody) endSplicing() {
	if b.state != nil {
		b.state.splicing = false
		b.state = nil
	}
}

func (b *entryBody) Read(p []byte) (int, error) {
	if b.off >= len(b.body) {
		return 0, io.EOF
	}
	n := copy(p, b.body[b.off:])
	b.off += n
	return n, nil
}

// SupportsBodyWriteTo tells fasthttp that WriteTo writes what Read would
// read, so it may call it.
func (b *entryBody) SupportsBodyWriteTo() bool { return true }

func (b *entryBody) WriteTo(w io.Writer) (int64, error) {
	rest := b.body[b.off:]
	b.off = len(b.body)
	b.endSplicing()
	if bw, ok := w.(*bufio.Writer); ok && b.conn != nil {
		var extra []byte
		if b.extra != nil {
			extra = *b.extra
		}
		n, err := b.conn.WriteWithBuffered(bw, extra, rest)
		return int64(n), err
	}
	if b.extra != nil && len(*b.extra) > 0 {
		// The headers are gone without the lines: never send the body
		// of a response that lacks them.
		return 0, errExtraHeaders
	}
	n, err := w.Write(rest)
	return int64(n), err
}

// Close gives the stream back: fasthttp closes a body stream once, when
// the response is written or reset.
func (b *entryBody) Close() error {
	b.endSplicing() // an answer reset before it was written
	*b = entryBody{}
	entryBodies.Put(b)
	return nil
}

var errExtraHeaders = errors.New("gateway: response headers written without their spliced lines")
