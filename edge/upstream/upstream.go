// Package upstream is how the edge connects to its origins: Origins is the
// edge's one client to them (balanced, health-checked, with the internal
// token), used for forwarding, cache fills, introspection, usage reports
// and the event stream's address, so that a restarted origin costs no
// request. A pooled connection the origin has
// closed (a deploy, a restart) is found before a request is written to it,
// and the request goes out again on a fresh connection; a request that
// failed after it was written is sent again only when that is safe (an
// idempotent method, or an Idempotency-Key the origin deduplicates on).
package upstream

import (
	"errors"
	"net"
	"time"

	"github.com/valyala/fasthttp"
)

// ErrStale is the error of a write to a pooled connection that the origin
// has already closed: nothing was sent, so any request may be sent again.
var ErrStale = errors.New("upstream: connection closed by the origin while idle")

// MaxAttempts bounds the tries of one request.
const MaxAttempts = 3

// Configure sets hc's dialer and retry rule. onStale, if not nil, runs
// when a pooled connection is found closed: the others in the pool most
// likely are too (the origin restarted), and a caller may drop them.
func Configure(hc *fasthttp.HostClient, dialTimeout time.Duration, onStale func()) {
	if dialTimeout <= 0 {
		dialTimeout = 3 * time.Second
	}
	d := &net.Dialer{Timeout: dialTimeout, KeepAlive: 30 * time.Second}
	hc.Dial = func(addr string) (net.Conn, error) {
		c, err := d.Dial("tcp", addr)
		if err != nil {
			return nil, dialError{err}
		}
		return wrap(c, onStale), nil
	}
	hc.MaxIdemponentCallAttempts = MaxAttempts
	hc.RetryIfErr = Retry
}

// Retry is the retry rule (fasthttp.RetryIfErrFunc): a request that never
// left (ErrStale) always, any other failure only when the request is safe
// to repeat.
func Retry(req *fasthttp.Request, attempts int, err error) (resetTimeout, retry bool) {
	if errors.Is(err, ErrStale) {
		return false, true
	}
	return false, Replayable(req)
}

// Replayable reports whether a request may be sent twice: an idempotent
// method (RFC 9110 §9.2.2) or an Idempotency-Key, which the origin
// deduplicates on.
func Replayable(req *fasthttp.Request) bool {
	h := &req.Header
	switch string(h.Method()) {
	case fasthttp.MethodGet, fasthttp.MethodHead, fasthttp.MethodOptions, fasthttp.MethodPut, fasthttp.MethodDelete:
		return true
	}
	return len(h.Peek("Idempotency-Key")) > 0
}

// conn notes when a response has been read from it: the next write then
// starts a request on a reused connection, and first checks that the
// origin has not closed it.
type conn struct {
	net.Conn
	reused  bool
	onStale func()
}

func (c *conn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.reused = true
	return n, err
}

func (c *conn) Write(p []byte) (int, error) {
	if c.reused {
		c.reused = false
		if closedByPeer(c.Conn) {
			if c.onStale != nil {
				c.onStale()
			}
			return 0, ErrStale
		}
	}
	return c.Conn.Write(p)
}

func wrap(c net.Conn, onStale func()) net.Conn { return &conn{Conn: c, onStale: onStale} }
