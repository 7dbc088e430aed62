package upstream

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// server is an origin (net/http, as the origin is) on a fixed loopback
// address that can be stopped and started again there, as a deploy does.
type server struct {
	addr string
	srv  *http.Server
	hits atomic.Int64
	done chan error
}

func (s *server) start(tb testing.TB) {
	tb.Helper()
	ln, err := net.Listen("tcp", s.addr)
	if err != nil {
		tb.Fatal(err)
	}
	s.addr = ln.Addr().String()
	s.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		w.Write([]byte("ok"))
	})}
	s.done = make(chan error, 1)
	go func() { s.done <- s.srv.Serve(ln) }()
}

// stop closes the listener and every idle connection, as a graceful
// shutdown does.
func (s *server) stop(tb testing.TB) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.srv.Shutdown(ctx); err != nil {
		tb.Fatal(err)
	}
	<-s.done
}

func post(hc *fasthttp.HostClient, addr string, idempotencyKey string) error {
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.SetRequestURI("http://" + addr + "/v1/leads")
	req.Header.SetMethod("POST")
	if idempotencyKey != "" {
		req.Header.Set("Idempotency-Key", idempotencyKey)
	}
	req.SetBodyString(`{"name":"Sam"}`)
	if err := hc.DoTimeout(req, resp, 5*time.Second); err != nil {
		return err
	}
	if resp.StatusCode() != 200 {
		return errors.New(resp.String())
	}
	return nil
}

// After the origin restarts, a POST on a pooled connection is not lost:
// without Configure the same request fails (the control), with it the
// request goes out once, on a fresh connection, and nothing reaches the
// origin twice.
func TestRestartedOriginCostsNoRequest(t *testing.T) {
	for _, configured := range []bool{false, true} {
		s := &server{addr: "127.0.0.1:0"}
		s.start(t)
		hc := &fasthttp.HostClient{Addr: s.addr}
		stale := 0
		if configured {
			Configure(hc, time.Second, func() { stale++; hc.CloseIdleConnections() })
		}
		for i := 0; i < 3; i++ { // three pooled connections, in turn
			if err := post(hc, s.addr, ""); err != nil {
				t.Fatal(err)
			}
		}
		s.stop(t)
		s.hits.Store(0)
		s.start(t)
		err := post(hc, s.addr, "")
		switch {
		case !configured && err == nil:
			t.Fatal("control: a plain HostClient reused the closed connection without error; the test proves nothing")
		case configured && err != nil:
			t.Fatalf("after the restart: %v", err)
		case configured:
			if n := s.hits.Load(); n != 1 || stale != 1 {
				t.Errorf("the new origin saw %d requests, %d stale connections found; want 1 and 1", n, stale)
			}
			if err := post(hc, s.addr, ""); err != nil || s.hits.Load() != 2 {
				t.Errorf("next request: %v, %d hits", err, s.hits.Load())
			}
		}
		s.stop(t)
	}
}

func TestReplayable(t *testing.T) {
	for _, tc := range []struct {
		method, key string
		want        bool
	}{{"GET", "", true}, {"HEAD", "", true}, {"DELETE", "", true}, {"POST", "", false}, {"POST", "k1", true}} {
		var req fasthttp.Request
		req.Header.SetMethod(tc.method)
		if tc.key != "" {
			req.Header.Set("Idempotency-Key", tc.key)
		}
		if got := Replayable(&req); got != tc.want {
			t.Errorf("%s key %q: %v", tc.method, tc.key, got)
		}
		if _, retry := Retry(&req, 1, ErrStale); !retry {
			t.Errorf("%s: a stale connection is not retried", tc.method)
		}
		if _, retry := Retry(&req, 1, fasthttp.ErrConnectionClosed); retry != tc.want {
			t.Errorf("%s key %q after a written request: retry %v", tc.method, tc.key, retry)
		}
	}
}
