package gateway

import (
	"bytes"
	"errors"
	"io"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/listgate/listgate/pkg/apierror"
)

// The server streams request bodies (fasthttp.Server.StreamRequestBody):
// it reads at most 8 KiB of a body before the handler runs, and the
// request path reads the rest only after the route, the key or token, the
// scope and the limits have been checked, and only up to the route's limit.
// A body the handler did not read to its end leaves the connection closed
// after the response (Handler), so its bytes can never be read as the next
// request.

var (
	errUploadsBusy  = apierror.Unavailable(5, nil)
	errNoBearer     = apierror.Unauthorized("missing access token")
	errBodyRead     = apierror.New(apierror.CodeBadRequest, "request body could not be read")
	errNoBodyWanted = apierror.New(apierror.CodePayloadTooLarge, "this route takes no request body")
)

// tooLarge are the 413s of each route limit, built once.
var tooLarge sync.Map // int → *apierror.Error

func errTooLargeFor(limit int) *apierror.Error {
	if limit == 0 {
		return errNoBodyWanted
	}
	if e, ok := tooLarge.Load(limit); ok {
		return e.(*apierror.Error)
	}
	e, _ := tooLarge.LoadOrStore(limit, apierror.PayloadTooLarge(int64(limit)))
	return e.(*apierror.Error)
}

// hasBody reports whether the request announces a body: a Content-Length
// over 0, or chunked.
func hasBody(h *fasthttp.RequestHeader) bool {
	n := h.ContentLength()
	return n > 0 || n == -1
}

// checkBodySize refuses, before any of it is read, a body its route does
// not take or whose Content-Length is over the route's limit.
func checkBodySize(ctx *fasthttp.RequestCtx, limit int) *apierror.Error {
	h := &ctx.Request.Header
	if !hasBody(h) {
		return nil
	}
	if limit == 0 || h.ContentLength() > limit {
		return errTooLargeFor(limit)
	}
	return nil
}

var bodyBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// readBody reads the rest of a streamed body, at most limit bytes, into the
// request, where forwarding finds it. A chunked body that grows past the
// limit is refused when it does, without reading further.
func readBody(ctx *fasthttp.RequestCtx, limit int) *apierror.Error {
	if e := checkBodySize(ctx, limit); e != nil {
		return e
	}
	s := ctx.RequestBodyStream()
	if s == nil {
		// Not streamed (a request built in memory): it is whole already.
		if len(ctx.Request.Body()) > limit {
			return errTooLargeFor(limit)
		}
		return nil
	}
	if !hasBody(&ctx.Request.Header) {
		return nil
	}
	buf := bodyBufs.Get().(*bytes.Buffer)
	defer bodyBufs.Put(buf)
	buf.Reset()
	n, err := buf.ReadFrom(io.LimitReader(s, int64(limit)+1))
	switch {
	case n > int64(limit):
		return errTooLargeFor(limit)
	case err != nil:
		return errBodyRead
	}
	ctx.Request.SetBody(buf.Bytes()) // copies, and ends the stream
	return nil
}

// Lingering close of a connection whose body was not read: the answer is
// written first, then up to lingerBytes of what the client still sends
// are read and dropped for at most lingerTime before the connection
// closes, so that a client still writing its body reads the answer
// instead of a reset (what nginx's lingering_close and net/http do; 256 KiB
// is net/http's).
const (
	lingerBytes = 256 << 10
	lingerTime  = 2 * time.Second
)

// endUnreadBody deals with a body the request path did not read (it
// refused the request first). A small one (at most drainLimit bytes, most
// often already read ahead with the header) is read and dropped, and the
// connection goes on. A larger one ends the connection: the answer says
// "Connection: Close" and a lingering close follows it. (fasthttp closes
// at once, running no hijack, on the lower-case "close" it knows; the
// token is case-insensitive, so clients read "Close" the same.)
func endUnreadBody(ctx *fasthttp.RequestCtx) {
	if n := ctx.Request.Header.ContentLength(); n >= 0 && n <= drainLimit {
		// A client that announced a small body and sends none gets a
		// second, not the read timeout.
		ctx.Conn().SetReadDeadline(time.Now().Add(drainTime))
		if _, err := io.Copy(io.Discard, ctx.RequestBodyStream()); err == nil {
			ctx.Request.CloseBodyStream()
			return
		}
	}
	if ctx.Request.Header.ConnectionClose() {
		return
	}
	ctx.Response.Header.Set(fasthttp.HeaderConnection, "Close")
	ctx.Hijack(lingerClose)
}

// drainLimit is the largest unread body dropped to keep a connection, and
// drainTime the longest wait for it.
const (
	drainLimit = 64 << 10
	drainTime  = time.Second
)

func lingerClose(c net.Conn) {
	c.SetReadDeadline(time.Now().Add(lingerTime))
	io.CopyN(io.Discard, c, lingerBytes)
}

// HeaderReceived is fasthttp.Server.HeaderReceived: it runs on each
// request's header, before any of the body is read. It honours connection
// options as RFC 9110 has them (case-insensitive, a token list: fasthttp
// itself only sees "close" spelled so), and closes the connection after a
// request that carries both Content-Length and Transfer-Encoding (RFC 9112
// §6.1). Every request keeps the server's read timeout until the request
// path has checked it; a feed upload gets more time only then
// (forwardUpload).
func (g *Gateway) HeaderReceived(h *fasthttp.RequestHeader) fasthttp.RequestConfig {
	if !h.ConnectionClose() && (asksClose(h.RawHeaders()) ||
		(h.ContentLength() == -1 && hasRawField(h.RawHeaders(), "content-length"))) {
		h.SetConnectionClose()
	}
	return fasthttp.RequestConfig{}
}

// isUpload reports whether the request is a feed upload with a bearer
// token, the one request allowed a large body.
func isUpload(h *fasthttp.RequestHeader) bool {
	return h.IsPost() && string(h.RequestURI()) == "/v1/feeds" && hasBearer(h.Peek(fasthttp.HeaderAuthorization))
}

// ExpectContinue is fasthttp.Server.ExpectHandler: it answers "Expect:
// 100-continue" with 100 only when the body may be sent: a feed upload
// with a bearer token within the upload limit, or a body within the
// largest limit of the other routes (each route checks its own again).
// Anything else is refused, in the API's envelope, before the client sends
// its body.
func (g *Gateway) ExpectContinue(ctx *fasthttp.RequestCtx) int {
	h := &ctx.Request.Header
	var e *apierror.Error
	switch {
	case isUpload(h):
		if h.ContentLength() > g.cfg.MaxUploadBytes {
			e = errTooLargeFor(g.cfg.MaxUploadBytes)
		}
	case string(h.RequestURI()) == "/v1/feeds" && h.IsPost():
		e = errNoBearer
	case h.ContentLength() > maxSmallBody:
		e = errTooLargeFor(maxSmallBody)
	}
	if e == nil {
		return fasthttp.StatusContinue
	}
	g.requestID(ctx)
	writeError(ctx, e)
	return e.Code.Status()
}

// forwardUpload streams a feed upload to the origin: the token must be
// there (the origin checks it), the size within the limit, the client
// address not already uploading, and one of the MaxUploads slots free, all
// before the body is read. The body must then keep coming: each read waits
// at most UploadIdleTimeout, and the whole upload at most UploadTimeout.
// Whatever the origin did not read is left unread, and Handler ends the
// connection.
func (g *Gateway) forwardUpload(ctx *fasthttp.RequestCtx, rt *route, ip netip.Addr) *apierror.Error {
	h := &ctx.Request.Header
	if !hasBearer(h.Peek(fasthttp.HeaderAuthorization)) {
		return errNoBearer
	}
	if h.ContentLength() > g.cfg.MaxUploadBytes {
		return errTooLargeFor(g.cfg.MaxUploadBytes)
	}
	if !g.uploaders.enter(ip) {
		return errUploadsBusy
	}
	defer g.uploaders.leave(ip)
	select {
	case g.uploads <- struct{}{}:
		defer func() { <-g.uploads }()
	default:
		return errUploadsBusy
	}
	req := fasthttp.AcquireRequest()
	defer fasthttp.ReleaseRequest(req)
	ctx.Request.CopyTo(req)
	var body *limitedReader
	if s := ctx.RequestBodyStream(); s != nil && hasBody(h) {
		body = &limitedReader{r: s, n: int64(g.cfg.MaxUploadBytes), conn: ctx.Conn(),
			idle: g.cfg.UploadIdleTimeout, end: time.Now().Add(g.cfg.UploadTimeout)}
		req.SetBodyStream(body, h.ContentLength())
	}
	g.prepare(req, nil, requestIDOf(ctx), ip)
	resp := &ctx.Response
	span := g.originSpan(traceParentOf(ctx), req)
	err := g.origin.Stream(req, resp, time.Now().Add(g.cfg.UploadTimeout+g.cfg.OriginTimeout))
	endOriginSpan(span, resp, err)
	resp.Header.SetBytesV("X-Request-Id", req.Header.Peek("X-Request-Id"))
	if body != nil && body.eof {
		// Read to its end: the connection may carry the next request.
		ctx.Request.CloseBodyStream()
	}
	switch {
	case err == nil:
		for _, name := range hopHeaders {
			resp.Header.Del(name)
		}
		return nil
	case body != nil && body.over:
		return errTooLargeFor(g.cfg.MaxUploadBytes)
	case body != nil && body.readErr != nil:
		return errUploadStalled // the client stopped sending: not the origin's fault
	default:
		return g.originFailed(ctx, rt, err)
	}
}

var errUploadStalled = apierror.New(apierror.CodeRequestTimeout, "the upload stopped arriving")

// uploaders counts each client address's uploads in progress: one at a
// time per address, so that a few addresses cannot hold every slot.
type uploaders struct {
	mu sync.Mutex
	m  map[netip.Addr]struct{}
}

func (u *uploaders) enter(ip netip.Addr) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	if _, busy := u.m[ip]; busy {
		return false
	}
	if u.m == nil {
		u.m = map[netip.Addr]struct{}{}
	}
	u.m[ip] = struct{}{}
	return true
}

func (u *uploaders) leave(ip netip.Addr) {
	u.mu.Lock()
	delete(u.m, ip)
	u.mu.Unlock()
}

// limitedReader reads at most n bytes and fails past them.
type limitedReader struct {
	r       io.Reader
	n       int64
	over    bool  // the body went past n
	eof     bool  // the body was read to its end
	readErr error // the client's side failed (it stopped sending)

	// conn, when set, gets a read deadline before each read: idle from
	// now, never past end.
	conn interface{ SetReadDeadline(time.Time) error }
	idle time.Duration
	end  time.Time
}

var errOverLimit = errors.New("request body over the limit")

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.conn != nil {
		d := time.Now().Add(l.idle)
		if d.After(l.end) {
			d = l.end
		}
		l.conn.SetReadDeadline(d)
	}
	k, err := l.read(p)
	if err != nil && err != io.EOF && err != errOverLimit {
		l.readErr = err
	}
	return k, err
}

func (l *limitedReader) read(p []byte) (int, error) {
	if l.n <= 0 {
		var one [1]byte
		k, err := l.r.Read(one[:])
		if k > 0 {
			l.over = true
			return 0, errOverLimit
		}
		l.eof = err == io.EOF
		return 0, err
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	k, err := l.r.Read(p)
	l.n -= int64(k)
	l.eof = err == io.EOF
	return k, err
}

// hasBearer reports whether an Authorization value is a non-empty Bearer
// credential.
func hasBearer(auth []byte) bool {
	scheme, rest, ok := bytes.Cut(bytes.TrimSpace(auth), []byte(" "))
	return ok && bytes.EqualFold(scheme, []byte("Bearer")) && len(bytes.TrimSpace(rest)) > 0
}

// hasRawField reports whether a raw header block has a field of this
// (lower-case) name: fasthttp forgets a Content-Length it overrode with
// chunked framing.
func hasRawField(raw []byte, name string) bool {
	for len(raw) > 0 {
		var line []byte
		line, raw = nextRawLine(raw)
		if _, ok := rawField(line, name); ok {
			return true
		}
	}
	return false
}

// asksClose reports whether a Connection field of the raw header block
// lists "close" (every Connection line counts, as RFC 9110 §5.3 combines
// them). One scan of the block; a line is looked at further only when
// its name is as long as "Connection".
func asksClose(raw []byte) bool {
	const name = "connection"
	for len(raw) > 0 {
		var line []byte
		line, raw = nextRawLine(raw)
		if len(line) <= len(name) || line[len(name)] != ':' && line[len(name)] != ' ' && line[len(name)] != '\t' {
			continue
		}
		if v, ok := rawField(line, name); ok && hasToken(v, "close") {
			return true
		}
	}
	return false
}

// nextRawLine splits a raw header block's first line (without its '\n')
// from the rest.
func nextRawLine(raw []byte) (line, rest []byte) {
	if i := bytes.IndexByte(raw, '\n'); i >= 0 {
		return raw[:i], raw[i+1:]
	}
	return raw, nil
}

// rawField returns the value of a raw header line when its field is named
// name (lower case; the line's name compared case-insensitively, spaces
// around it ignored).
func rawField(line []byte, name string) (value []byte, ok bool) {
	k, v, found := bytes.Cut(line, []byte(":"))
	return v, found && bytes.EqualFold(bytes.TrimSpace(k), []byte(name))
}

// hasToken reports whether a comma-separated header value lists token,
// compared case-insensitively (RFC 9110 §5.6.1, §7.6.1).
func hasToken(v []byte, token string) bool {
	for len(v) > 0 {
		var t []byte
		if i := bytes.IndexByte(v, ','); i >= 0 {
			t, v = v[:i], v[i+1:]
		} else {
			t, v = v, nil
		}
		if bytes.EqualFold(bytes.TrimSpace(t), []byte(token)) {
			return true
		}
	}
	return false
}
