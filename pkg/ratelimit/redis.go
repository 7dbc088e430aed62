package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/redis/rueidis"
)

// RedisOptions configures [NewRedis]. URL is required; every other field
// has a default.
type RedisOptions struct {
	// URL names the Redis server, as rueidis.ParseURL reads it:
	// redis://[[user]:password@]host:port[/db], rediss:// for TLS,
	// unix:///path for a socket. Required. It never appears in errors or
	// logs (it may hold a password).
	URL string
	// Timeout bounds each request's call to Redis; an answer slower than
	// that counts as Redis being down. Default 5 ms.
	Timeout time.Duration
	// ExpectedEdges is how many edges share the limit. While Redis is down
	// each edge admits limit/ExpectedEdges (at least 1) per site and window
	// on its own. Default 1.
	ExpectedEdges int
	// Log receives one warning when the limiter falls back to local
	// decisions and one info line when it returns to Redis. Default
	// slog.Default().
	Log *slog.Logger
	// OnFallback, when set, is called with true when the limiter falls back
	// to local decisions and with false when it returns to Redis: once per
	// change, in order, never concurrently. It runs synchronously on the
	// goroutine that noticed the change (a request's, NewRedis's or the
	// probe's), so it must return quickly and must not call the limiter.
	OnFallback func(active bool)
	// Metrics is where the limiter's metrics are registered (see the
	// package doc). Default: the process-wide set (metrics.GetDefaultSet()).
	Metrics *metrics.Set
}

const (
	defaultTimeout = 5 * time.Millisecond
	// connectTimeout bounds connecting (dial and handshake) and the first
	// script load, at start and in the probe.
	connectTimeout = time.Second
	// probeInterval is how often a limiter in fallback checks Redis.
	probeInterval = time.Second
	// slowCallsToFallback is how many calls in a row over the timeout make
	// the limiter fall back; a failed call does at once.
	slowCallsToFallback = 3
)

// Redis is a [Limiter] that keeps the count in Redis, so every edge that
// uses the same Redis shares one count per site and window. Each decision is
// one atomic Lua script (EVALSHA, see script.go) sent through rueidis'
// auto-pipelining client: concurrent requests share connections and round
// trips. Counters are keys lg:rl:{site}:{window start, Unix seconds} that
// expire 120 s after their window's first request.
//
// When a call fails, or slowCallsToFallback calls in a row take longer than
// RedisOptions.Timeout, that request and every later one are decided by a
// local fallback limiter at limit/ExpectedEdges (at least 1), without
// calling Redis, until a background
// probe (every second: PING, then the script in its read-only form within
// Timeout) sees Redis answer again. Falling back and returning each log one
// line, call OnFallback once and move the metrics (see the package doc);
// requests never fail because of Redis. A slow call short of that run is
// decided by the fallback limiter alone: one scheduling hiccup on a busy
// host does not take the edge off Redis for a second.
//
// Counts are exact while Redis answers. Around an outage they are not: a
// call that timed out may still have been counted in Redis, and the fallback
// counts from zero and is not copied back, so a window that spans a change
// may admit up to limit (in Redis, all edges together) plus
// limit/ExpectedEdges on each edge in fallback: about twice the limit.
// Edges' clocks pick the window, so they should be NTP-synchronised.
//
// A Redis is safe for concurrent use. Create it with [NewRedis]; Close it to
// stop the probe and the connections.
type Redis struct {
	timeout    time.Duration
	edges      int
	log        *slog.Logger
	onFallback func(bool)
	option     rueidis.ClientOption
	addr       string // for logs: host:port, no credentials
	probeEvery time.Duration

	script   *rueidis.Lua
	fallback *Local
	decision decisionCounters
	metrics  redisMetrics

	// client is set once: by NewRedis, or by the probe while down is true.
	// Allow reads it only after loading down == false, which orders it
	// after that write.
	client rueidis.Client
	down   atomic.Bool // deciding locally
	closed atomic.Bool
	// slow counts the calls in a row that took longer than the timeout.
	slow atomic.Int32

	mu        sync.Mutex // serialises falling back, returning and Close
	stop      chan struct{}
	probes    sync.WaitGroup
	closeOnce sync.Once
}

// NewRedis connects to the Redis at opts.URL and loads the script. ctx
// bounds that start (and so does a limit of 1 s); it is not used after
// NewRedis returns.
//
// It returns an error only for options that can never work: an empty or
// unparsable URL, a negative Timeout or ExpectedEdges, or a ctx already
// done. A Redis that cannot be reached at start is not an error: the
// limiter starts in fallback (logging it and calling OnFallback(true)
// before NewRedis returns) and switches to Redis once the probe reaches it.
func NewRedis(ctx context.Context, opts RedisOptions) (*Redis, error) {
	return newRedis(ctx, opts, probeInterval)
}

func newRedis(ctx context.Context, opts RedisOptions, probeEvery time.Duration) (*Redis, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("ratelimit: start Redis limiter: %w", err)
	}
	option, err := clientOption(opts.URL)
	if err != nil {
		return nil, err
	}
	switch {
	case opts.Timeout < 0:
		return nil, fmt.Errorf("ratelimit: negative Redis timeout %v", opts.Timeout)
	case opts.ExpectedEdges < 0:
		return nil, fmt.Errorf("ratelimit: negative expected edges %d", opts.ExpectedEdges)
	}
	set := metricsSet(opts.Metrics)
	r := &Redis{
		timeout:    opts.Timeout,
		edges:      opts.ExpectedEdges,
		log:        opts.Log,
		onFallback: opts.OnFallback,
		option:     option,
		addr:       strings.Join(option.InitAddress, ","),
		probeEvery: probeEvery,
		script:     newAllowScript(),
		fallback:   newLocal(LocalOptions{Metrics: set}, backendFallback),
		decision:   newDecisionCounters(set, backendRedis),
		metrics:    newRedisMetrics(set),
		stop:       make(chan struct{}),
	}
	if r.timeout == 0 {
		r.timeout = defaultTimeout
	}
	if r.edges == 0 {
		r.edges = 1
	}
	if r.log == nil {
		r.log = slog.Default()
	}
	ctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	client, err := r.connect(ctx)
	if err != nil {
		r.enterFallback(err)
		return r, nil
	}
	r.client = client
	return r, nil
}

// clientOption parses the URL without ever echoing it: url.Parse errors
// quote the whole URL, password included.
func clientOption(raw string) (rueidis.ClientOption, error) {
	if raw == "" {
		return rueidis.ClientOption{}, errors.New("ratelimit: Redis URL is empty")
	}
	option, err := rueidis.ParseURL(raw)
	if err != nil {
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err
		}
		return rueidis.ClientOption{}, fmt.Errorf("ratelimit: invalid Redis URL: %w", err)
	}
	option.DisableCache = true // no client-side caching: every call must reach the server
	option.ClientName = "listgate-ratelimit"
	option.Dialer.Timeout = connectTimeout
	return option, nil
}

// connect makes a client and loads the script into Redis, so the first
// EVALSHA finds it.
func (r *Redis) connect(ctx context.Context) (rueidis.Client, error) {
	client, err := rueidis.NewClient(r.option)
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	if err := client.Do(ctx, client.B().ScriptLoad().Script(allowScript).Build()).Error(); err != nil {
		client.Close()
		return nil, fmt.Errorf("load script: %w", err)
	}
	return client, nil
}

// Allow decides one request of site against limit in the window holding now
// (see [Limiter]); it never returns an error and never waits much longer
// than the Timeout.
//
// With Redis up it runs the script on lg:rl:{site}:{window start} and
// admits the request when the window's count is below limit. With Redis down
// (or after Close, or with ctx already done) the fallback limiter decides at
// max(limit/ExpectedEdges, 1); the decision still reports Limit = limit,
// while Remaining is what is left of this edge's share.
//
// ctx's cancellation is not watched during the call (the Timeout bounds it,
// and a fasthttp RequestCtx would otherwise cost a goroutine per call).
// Limits 0 and below are decided without Redis.
func (r *Redis) Allow(ctx context.Context, site string, limit int, now time.Time) Decision {
	switch {
	case limit == 0:
		return r.decision.count(unlimited())
	case limit < 0:
		return r.decision.count(rejected(limit, windowStart(now), now))
	case r.down.Load() || r.closed.Load() || ctx.Err() != nil:
		return r.allowLocally(site, limit, now)
	}
	ws := windowStart(now)
	n, err := r.eval(counterKey(site, ws), limit, r.timeout)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && r.slow.Add(1) < slowCallsToFallback {
			r.metrics.slowCalls.Inc()
			return r.allowLocally(site, limit, now)
		}
		r.slow.Store(0)
		r.enterFallback(err)
		return r.allowLocally(site, limit, now)
	}
	if r.slow.Load() != 0 {
		r.slow.Store(0)
	}
	if n == 0 {
		return r.decision.count(rejected(limit, ws, now))
	}
	return r.decision.count(admitted(limit, int(n), ws))
}

// eval runs the script on key within timeout and returns its result.
func (r *Redis) eval(key string, limit int, timeout time.Duration) (int64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	start := time.Now()
	n, err := r.script.Exec(ctx, r.client, []string{key}, []string{strconv.Itoa(limit), counterTTL}).AsInt64()
	r.metrics.latency.UpdateDuration(start)
	return n, err
}

// allowLocally decides with the fallback limiter at this edge's share.
func (r *Redis) allowLocally(site string, limit int, now time.Time) Decision {
	d := r.fallback.Allow(context.Background(), site, max(limit/r.edges, 1), now)
	d.Limit = limit
	return d
}

// Close stops the probe and closes the connections. Allow keeps working
// after Close, deciding locally. Close is safe to call more than once and
// concurrently with Allow.
func (r *Redis) Close() {
	r.closeOnce.Do(func() {
		r.mu.Lock()
		r.closed.Store(true)
		if r.down.Load() {
			r.metrics.fallbackActive.Dec()
		}
		r.mu.Unlock()
		close(r.stop)
		r.probes.Wait()
		if r.client != nil {
			r.client.Close()
		}
	})
}
