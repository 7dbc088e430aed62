package gateway

import (
	"bufio"
	"io"
	"sync"

	"github.com/valyala/fasthttp"
)

// gatherWriter is a client connection that can send what a response's
// buffered writer holds (the status line and headers) and a body in one
// write (writev) without copying the body: the edge's listeners hand out
// such connections (edge/connlimit.go).
type gatherWriter interface {
	WriteWithBuffered(bw *bufio.Writer, body []byte) (int, error)
}

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
	b := entryBodies.Get().(*entryBody)
	b.body, b.conn = body, gw
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
	if bw, ok := w.(*bufio.Writer); ok && b.conn != nil {
		n, err := b.conn.WriteWithBuffered(bw, rest)
		return int64(n), err
	}
	n, err := w.Write(rest)
	return int64(n), err
}

// Close gives the stream back: fasthttp closes a body stream once, when
// the response is written or reset.
func (b *entryBody) Close() error {
	*b = entryBody{}
	entryBodies.Put(b)
	return nil
}
