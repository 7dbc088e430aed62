package upstream

import (
	"bytes"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/listgate/listgate/pkg/internalapi"
)

const testToken = "token-0123456789abcdef0123456789abcdef"

// origin is a test origin on a fixed loopback address: its answers to
// /readyz and to requests can be changed, it can drop the connection of the
// next request it reads (as a killed process does), and it can be stopped
// and started again on the same address.
type origin struct {
	server
	ready   atomic.Int32 // /readyz status
	drop    atomic.Bool  // drop requests after reading them
	tokenOK atomic.Int64 // requests that carried the internal token
	bodies  atomic.Int64 // request bytes read
}

func newTestOrigin(tb testing.TB) *origin {
	o := &origin{server: server{addr: "127.0.0.1:0"}}
	o.ready.Store(200)
	o.startOrigin(tb)
	tb.Cleanup(func() { o.srv.Close() })
	return o
}

func (o *origin) startOrigin(tb testing.TB) {
	tb.Helper()
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		tb.Fatal(err)
	}
	o.addr = ln.Addr().String()
	o.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/readyz" {
			w.WriteHeader(int(o.ready.Load()))
			return
		}
		n, _ := io.Copy(io.Discard, r.Body)
		o.bodies.Add(n)
		o.hits.Add(1)
		if r.Header.Get(internalapi.HeaderInternalToken) == testToken {
			o.tokenOK.Add(1)
		}
		if o.drop.Load() {
			c, _, _ := w.(http.Hijacker).Hijack()
			c.Close()
			return
		}
		io.WriteString(w, o.addr)
	})}
	o.done = make(chan error, 1)
	go func() { o.done <- o.srv.Serve(ln) }()
}

func (o *origin) url() string { return "http://" + o.addr }

func newOrigins(tb testing.TB, os ...*origin) *Origins {
	tb.Helper()
	urls := make([]string, len(os))
	for i, o := range os {
		urls[i] = o.url()
	}
	p, err := New(Options{URLs: urls, InternalToken: testToken, Timeout: 2 * time.Second, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// send sends method /v1/leads with an optional Idempotency-Key and returns
// which origin answered.
func send(p *Origins, method, idempotencyKey string) (string, error) {
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.SetRequestURI("/v1/leads")
	req.Header.SetMethod(method)
	if idempotencyKey != "" {
		req.Header.Set("Idempotency-Key", idempotencyKey)
	}
	if method == "POST" {
		req.SetBodyString(`{"name":"Sam"}`)
	}
	if err := p.Do(req, resp, 2*time.Second); err != nil {
		return "", err
	}
	return string(resp.Body()), nil
}

// Requests are balanced across the origins, each carrying the internal
// token.
func TestOriginsBalance(t *testing.T) {
	a, b := newTestOrigin(t), newTestOrigin(t)
	p := newOrigins(t, a, b)
	for i := 0; i < 10; i++ {
		if _, err := send(p, "GET", ""); err != nil {
			t.Fatal(err)
		}
	}
	if a.hits.Load() != 5 || b.hits.Load() != 5 {
		t.Errorf("hits %d and %d, want 5 and 5", a.hits.Load(), b.hits.Load())
	}
	if a.tokenOK.Load()+b.tokenOK.Load() != 10 {
		t.Errorf("%d of 10 requests carried the internal token", a.tokenOK.Load()+b.tokenOK.Load())
	}
}

// An origin that is stopped (a deploy) costs no request, not even one that
// is not replayable: it is ejected on the refused connection, and the
// request goes to the other. It takes requests again once its /readyz
// answers.
func TestOriginsStoppedOriginIsEjected(t *testing.T) {
	a, b := newTestOrigin(t), newTestOrigin(t)
	p := newOrigins(t, a, b)
	for i := 0; i < 4; i++ { // pooled connections to both
		if _, err := send(p, "POST", ""); err != nil {
			t.Fatal(err)
		}
	}
	a.stop(t)
	for i := 0; i < 10; i++ {
		got, err := send(p, "POST", "")
		if err != nil || got != b.addr {
			t.Fatalf("POST %d with an origin stopped: %q %v", i, got, err)
		}
	}
	if p.List()[0].Up() || !p.List()[1].Up() || !p.Ready() {
		t.Errorf("up: %v %v", p.List()[0].Up(), p.List()[1].Up())
	}
	a.startOrigin(t)
	p.Check()
	if !p.List()[0].Up() {
		t.Fatal("a restarted origin whose /readyz answers 200 is not taken back")
	}
	before := a.hits.Load()
	for i := 0; i < 4; i++ {
		send(p, "GET", "")
	}
	if a.hits.Load()-before != 2 {
		t.Errorf("the restarted origin got %d of 4 requests", a.hits.Load()-before)
	}
}

// An origin whose /readyz fails is ejected by the check, and back when it
// answers 200; with no origin up, requests are still tried.
func TestOriginsReadyzEjects(t *testing.T) {
	a, b := newTestOrigin(t), newTestOrigin(t)
	p := newOrigins(t, a, b)
	a.ready.Store(503)
	p.Check()
	for i := 0; i < 6; i++ {
		if got, err := send(p, "GET", ""); err != nil || got != b.addr {
			t.Fatalf("GET %d: %q %v", i, got, err)
		}
	}
	b.ready.Store(503)
	p.Check()
	if p.Ready() {
		t.Error("ready with every /readyz failing")
	}
	if _, err := send(p, "GET", ""); err != nil {
		t.Errorf("no origin up: the request was not tried: %v", err)
	}
	select {
	case <-p.Back():
		t.Error("Back signalled before any origin came back")
	default:
	}
	a.ready.Store(200)
	p.Check()
	if !p.Ready() || !p.List()[0].Up() {
		t.Error("not back after /readyz answered 200")
	}
	select {
	case <-p.Back():
	default:
		t.Error("Back did not signal when an ejected origin came back")
	}
}

// An origin that dies with a request in flight (kill -9): a replayable
// request goes to the other origin; one that is not is not sent twice.
func TestOriginsDroppedRequest(t *testing.T) {
	for _, tc := range []struct {
		method, key string
		retried     bool
	}{{"GET", "", true}, {"POST", "idem-1", true}, {"POST", "", false}} {
		a, b := newTestOrigin(t), newTestOrigin(t)
		p := newOrigins(t, a, b)
		a.drop.Store(true)
		if got, err := send(p, "GET", ""); err != nil || got != b.addr { // round robin: b, then a
			t.Fatalf("warm-up: %q %v", got, err)
		}
		_, err := send(p, tc.method, tc.key)
		dropper, other := a, b
		switch {
		case tc.retried && err != nil:
			t.Errorf("%s %q: %v", tc.method, tc.key, err)
		case !tc.retried && err == nil:
			t.Errorf("%s %q: answered, so it was sent again", tc.method, tc.key)
		}
		if dropper.hits.Load() != 1 {
			t.Errorf("%s %q: the dropping origin saw %d requests", tc.method, tc.key, dropper.hits.Load())
		}
		want := int64(1)
		if tc.retried {
			want = 2
		}
		if other.hits.Load() != want {
			t.Errorf("%s %q: the other origin saw %d requests, want %d", tc.method, tc.key, other.hits.Load(), want)
		}
	}
}

// A streamed body (a feed upload) is never sent on a pooled connection the
// origin may have closed, and goes to the other origin when one is down.
func TestOriginsStream(t *testing.T) {
	a, b := newTestOrigin(t), newTestOrigin(t)
	p := newOrigins(t, a, b)
	stream := func() error {
		req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
		defer fasthttp.ReleaseRequest(req)
		defer fasthttp.ReleaseResponse(resp)
		req.SetRequestURI("/v1/feeds")
		req.Header.SetMethod("POST")
		body := strings.Repeat("<listing/>", 10_000)
		req.SetBodyStream(bytes.NewReader([]byte(body)), len(body))
		if err := p.Stream(req, resp, time.Now().Add(2*time.Second)); err != nil {
			return err
		}
		if resp.StatusCode() != 200 {
			return io.ErrUnexpectedEOF
		}
		return nil
	}
	for i := 0; i < 4; i++ {
		if err := stream(); err != nil {
			t.Fatal(err)
		}
	}
	// Both restart: a pooled connection would now be stale.
	a.stop(t)
	b.stop(t)
	a.startOrigin(t)
	b.startOrigin(t)
	if err := stream(); err != nil {
		t.Fatalf("after a restart: %v", err)
	}
	b.stop(t)
	for i := 0; i < 3; i++ {
		if err := stream(); err != nil {
			t.Fatalf("one origin down: %v", err)
		}
	}
	if got := a.bodies.Load() + b.bodies.Load(); got != 8*100_000 {
		t.Errorf("origins read %d body bytes, want %d", got, 8*100_000)
	}
}

func TestOriginsOptions(t *testing.T) {
	for name, urls := range map[string][]string{
		"none": nil, "path": {"http://a:1/x"}, "scheme": {"ftp://a:1"}, "twice": {"http://a:1", "http://a:1"},
		"query": {"http://a:1?x=1"}, "user": {"http://u:p@a:1"},
	} {
		if _, err := New(Options{URLs: urls, InternalToken: testToken}); err == nil {
			t.Errorf("%s: accepted %q", name, urls)
		}
	}
	if _, err := New(Options{URLs: []string{"http://a:1"}}); err == nil {
		t.Error("no token accepted")
	}
}
