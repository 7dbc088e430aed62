package upstream

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/valyala/fasthttp"

	"github.com/listgate/listgate/pkg/internalapi"
	"github.com/listgate/listgate/pkg/promtext"
)

func init() {
	promtext.Describe("listgate_edge_origin_retries_total",
		"Requests to an origin sent again to another one (the first never reached its origin, or was idempotent or carried Idempotency-Key).")
	promtext.Describe("listgate_edge_origin_up", "1 while the origin (label origin, its URL) answers its /readyz health check, 0 while it is ejected.")
}

// Options configure New. Zero fields take the defaults documented on them.
type Options struct {
	// URLs are the origins' base URLs, such as http://127.0.0.1:8081.
	// At least one.
	URLs []string
	// InternalToken goes to the origins with every request. Required.
	InternalToken string
	// MaxConns bounds the pooled connections to each origin. Default 1024.
	MaxConns int
	// Timeout bounds reading an answer. Default 30 s.
	Timeout time.Duration
	// StreamTimeout bounds writing a streamed request body (a feed
	// upload). Default Timeout.
	StreamTimeout time.Duration
	// MaxResponseBytes bounds an answer. Default 64 MiB.
	MaxResponseBytes int
	// HealthInterval is how often each origin's /readyz is asked. Default
	// 1 s.
	HealthInterval time.Duration
	// Log receives ejections and returns. Nil: slog.Default().
	Log *slog.Logger
}

// Origins is the edge's one client to its origins. Requests are balanced
// across the origins whose /readyz answers 200 (round robin); an origin
// that refuses a connection, drops one or fails its check is ejected until
// its /readyz answers 200 again. A request that did not reach an origin
// goes to the next one; one that did is sent again, to the next one, only
// when it is replayable (Replayable). When no origin is healthy, every
// origin is still tried: a stale health state costs no request.
type Origins struct {
	list []*Origin
	next atomic.Uint64
	opts Options
	log  *slog.Logger
	back chan struct{}

	retries *metrics.Counter
}

// Origin is one origin of Origins.
type Origin struct {
	// URL is the origin's base URL, without a trailing slash.
	URL    string
	addr   string
	tls    bool
	pooled *fasthttp.HostClient
	// fresh carries streamed bodies, each on a new connection: a body
	// stream cannot be sent twice, so it must not meet a connection the
	// origin closed while it was idle.
	fresh *fasthttp.HostClient
	up    atomic.Bool
	gauge *metrics.Gauge
	token string
}

// New checks opts and builds the clients; it starts no goroutine (Run
// checks the origins' health).
func New(opts Options) (*Origins, error) {
	if len(opts.URLs) == 0 || len(opts.URLs) > 64 {
		return nil, fmt.Errorf("upstream: between 1 and 64 origin URLs, not %d", len(opts.URLs))
	}
	if opts.InternalToken == "" {
		return nil, errors.New("upstream: the internal token is required")
	}
	if opts.MaxConns <= 0 {
		opts.MaxConns = 1024
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 30 * time.Second
	}
	if opts.StreamTimeout <= 0 {
		opts.StreamTimeout = opts.Timeout
	}
	if opts.MaxResponseBytes <= 0 {
		opts.MaxResponseBytes = 64 << 20
	}
	if opts.HealthInterval <= 0 {
		opts.HealthInterval = time.Second
	}
	o := &Origins{opts: opts, log: opts.Log, back: make(chan struct{}, 1),
		retries: metrics.GetOrCreateCounter(`listgate_edge_origin_retries_total`)}
	if o.log == nil {
		o.log = slog.Default()
	}
	seen := map[string]bool{}
	for _, raw := range opts.URLs {
		or, err := newOrigin(raw, opts)
		if err != nil {
			return nil, err
		}
		if seen[or.URL] {
			return nil, fmt.Errorf("upstream: origin %s listed twice", or.URL)
		}
		seen[or.URL] = true
		o.list = append(o.list, or)
	}
	return o, nil
}

func newOrigin(raw string, opts Options) (*Origin, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.User != nil {
		return nil, fmt.Errorf("upstream: origin URL %q must be http(s)://host[:port]", raw)
	}
	host := u.Host
	if u.Port() == "" {
		host += map[string]string{"http": ":80", "https": ":443"}[u.Scheme]
	}
	or := &Origin{URL: u.Scheme + "://" + u.Host, addr: host, tls: u.Scheme == "https", token: opts.InternalToken}
	or.pooled = &fasthttp.HostClient{
		Addr: host, IsTLS: or.tls, MaxConns: opts.MaxConns,
		MaxIdleConnDuration: 30 * time.Second,
		ReadTimeout:         opts.Timeout, WriteTimeout: opts.Timeout,
		MaxResponseBodySize:      opts.MaxResponseBytes,
		NoDefaultUserAgentHeader: true, DisablePathNormalizing: true,
	}
	// A restarted origin costs no request: a pooled connection it closed
	// is found before anything is written, and the request goes out on a
	// new one (MaxAttempts). Every other retry is the pool's.
	Configure(or.pooled, 0, or.pooled.CloseIdleConnections)
	or.pooled.RetryIfErr = func(_ *fasthttp.Request, _ int, err error) (bool, bool) {
		return false, errors.Is(err, ErrStale)
	}
	or.fresh = &fasthttp.HostClient{
		Addr: host, IsTLS: or.tls, MaxConns: opts.MaxConns,
		ReadTimeout: opts.Timeout, WriteTimeout: opts.StreamTimeout,
		MaxResponseBodySize:      opts.MaxResponseBytes,
		NoDefaultUserAgentHeader: true, DisablePathNormalizing: true,
	}
	Configure(or.fresh, 0, nil)
	or.up.Store(true)
	or.gauge = metrics.GetOrCreateGauge(fmt.Sprintf(`listgate_edge_origin_up{origin=%q}`, or.URL), nil)
	or.gauge.Set(1)
	return or, nil
}

// List returns the origins, in configuration order.
func (o *Origins) List() []*Origin { return o.list }

// Up reports whether the origin is taking requests.
func (or *Origin) Up() bool { return or.up.Load() }

// Do sends req to this origin alone, once (with the fresh-connection retry
// of a pooled one found closed), within timeout.
func (or *Origin) Do(req *fasthttp.Request, resp *fasthttp.Response, timeout time.Duration) error {
	req.Header.Set(internalapi.HeaderInternalToken, or.token)
	req.URI().SetScheme(map[bool]string{false: "http", true: "https"}[or.tls])
	req.URI().SetHost(or.addr)
	return or.pooled.DoTimeout(req, resp, timeout)
}

// Ready reports whether any origin is up.
func (o *Origins) Ready() bool {
	for _, or := range o.list {
		if or.Up() {
			return true
		}
	}
	return false
}

// Do sends req to an origin and reads the answer into resp, within
// timeout; a failed request is sent again to the next origin when it did
// not reach the failed one, or is Replayable.
func (o *Origins) Do(req *fasthttp.Request, resp *fasthttp.Response, timeout time.Duration) error {
	return o.do(req, resp, time.Now().Add(timeout), Replayable(req), false)
}

// DoSafe is Do for a request without effects whatever its method (a key
// introspection): every failure is retried on the next origin.
func (o *Origins) DoSafe(req *fasthttp.Request, resp *fasthttp.Response, deadline time.Time) error {
	return o.do(req, resp, deadline, true, false)
}

// Stream sends a request whose body is a stream (req.SetBodyStream) on a
// new connection; it goes to another origin only when the connection could
// not be made, since a stream cannot be read twice.
func (o *Origins) Stream(req *fasthttp.Request, resp *fasthttp.Response, deadline time.Time) error {
	return o.do(req, resp, deadline, false, true)
}

func (o *Origins) do(req *fasthttp.Request, resp *fasthttp.Response, deadline time.Time, replay, stream bool) error {
	req.Header.Set(internalapi.HeaderInternalToken, o.opts.InternalToken)
	var tried uint64
	var err error
	for {
		or, i := o.pick(tried)
		if or == nil {
			return err
		}
		req.URI().SetScheme(map[bool]string{false: "http", true: "https"}[or.tls])
		req.URI().SetHost(or.addr)
		hc := or.pooled
		if stream {
			hc = or.fresh
			req.SetConnectionClose()
		}
		err = hc.DoDeadline(req, resp, deadline)
		if err == nil {
			return nil
		}
		if errors.Is(err, fasthttp.ErrTimeout) || !time.Now().Before(deadline) {
			return err // the origin is slow, not gone: no time for another
		}
		notSent := NotSent(err)
		o.eject(or, err)
		if !notSent && !replay {
			return err
		}
		tried |= 1 << i
		o.retries.Inc()
	}
}

// pick returns the next origin not yet tried, healthy ones first, and its
// index; nil when every origin has been tried.
func (o *Origins) pick(tried uint64) (*Origin, int) {
	n := len(o.list)
	start := int(o.next.Add(1) % uint64(n))
	for pass := 0; pass < 2; pass++ {
		for k := 0; k < n; k++ {
			i := (start + k) % n
			if tried&(1<<i) == 0 && (pass == 1 || o.list[i].Up()) {
				return o.list[i], i
			}
		}
	}
	return nil, -1
}

// Pick returns an origin to open a long-lived request to (the event
// stream): the next healthy one, or any when none is.
func (o *Origins) Pick() *Origin {
	or, _ := o.pick(0)
	return or
}

// InternalToken returns the token the origins expect, for a caller that
// makes its own requests (the event stream).
func (o *Origins) InternalToken() string { return o.opts.InternalToken }

// eject takes an origin out of the rotation after a failed request, until
// its /readyz answers 200.
func (o *Origins) eject(or *Origin, err error) {
	if or.up.Swap(false) {
		or.gauge.Set(0)
		or.pooled.CloseIdleConnections()
		o.log.Warn("origin ejected", "origin", or.URL, "err", err)
	}
}

// Run checks every origin's /readyz each HealthInterval until ctx ends: an
// origin answering 200 takes requests, any other answer ejects it.
func (o *Origins) Run(ctx context.Context) {
	t := time.NewTicker(o.opts.HealthInterval)
	defer t.Stop()
	for {
		o.Check()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Check asks every origin's /readyz once, at the same time, and waits for
// the answers.
func (o *Origins) Check() {
	var wg sync.WaitGroup
	for _, or := range o.list {
		wg.Add(1)
		go func() {
			defer wg.Done()
			o.check(or)
		}()
	}
	wg.Wait()
}

func (o *Origins) check(or *Origin) {
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.SetRequestURI("/readyz")
	err := or.Do(req, resp, min(o.opts.HealthInterval, 2*time.Second))
	if err == nil && resp.StatusCode() != fasthttp.StatusOK {
		err = fmt.Errorf("/readyz answered %d", resp.StatusCode())
	}
	if err != nil {
		o.eject(or, err)
		return
	}
	if !or.up.Swap(true) {
		or.gauge.Set(1)
		o.log.Info("origin back", "origin", or.URL)
		select {
		case o.back <- struct{}{}:
		default:
		}
	}
}

// Back receives when an ejected origin answers its /readyz again (one
// pending signal at most): the event stream waits on it to reconnect at
// once instead of at the end of its back-off.
func (o *Origins) Back() <-chan struct{} { return o.back }

// NotSent reports whether a failed request never reached the origin: the
// connection could not be made, or a pooled one was found closed before
// anything was written. Such a request may go to another origin whatever
// it is.
func NotSent(err error) bool {
	var d dialError
	return errors.Is(err, ErrStale) || errors.As(err, &d) || errors.Is(err, fasthttp.ErrNoFreeConns) ||
		errors.Is(err, fasthttp.ErrDialTimeout)
}

// dialError is a connection that could not be made.
type dialError struct{ err error }

func (e dialError) Error() string { return e.err.Error() }
func (e dialError) Unwrap() error { return e.err }
