package main

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// This file is the drills' and the limiter's client side: a load generator
// bounded in time and count, a client that records every request it makes
// (when, to which edge, with what answer), a balancer over the edges that
// retries on connection errors like a load balancer would, and a lead
// client that retries with its Idempotency-Key as a careful API user would
// (drill_leads.go).

// sample is one HTTP exchange as the client saw it.
type sample struct {
	kind       string // what the request was for: "read", "lead", "limit", …
	edge       int    // index of the edge it went to
	start, end time.Time
	status     int    // 0: no response (a transport error)
	err        string // the transport error
	cache      string // X-Cache
	reset      int64  // X-RateLimit-Reset (window end, epoch seconds); 0 when absent
	retryAfter int    // Retry-After in seconds; 0 when absent
}

// recorder keeps every sample, and tells waiters about the first sample
// that matches what they wait for. Safe for concurrent use.
type recorder struct {
	mu       sync.Mutex
	samples  []sample
	watchers []*watcher
}

type watcher struct {
	match func(sample) bool
	c     chan sample
}

func (r *recorder) add(s sample) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.samples = append(r.samples, s)
	keep := r.watchers[:0]
	for _, w := range r.watchers {
		if w.match(s) {
			w.c <- s
			continue
		}
		keep = append(keep, w)
	}
	r.watchers = keep
}

// all returns a copy of the samples so far.
func (r *recorder) all() []sample {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]sample(nil), r.samples...)
}

// watch starts watching for the first sample recorded from now on that
// matches; wait for it with wait.
func (r *recorder) watch(match func(sample) bool) *watcher {
	w := &watcher{match: match, c: make(chan sample, 1)}
	r.mu.Lock()
	r.watchers = append(r.watchers, w)
	r.mu.Unlock()
	return w
}

// wait returns the sample w watched for, or false when none came within d.
func (r *recorder) wait(w *watcher, d time.Duration) (sample, bool) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case s := <-w.c:
		return s, true
	case <-t.C:
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, x := range r.watchers {
		if x == w {
			r.watchers = append(r.watchers[:i], r.watchers[i+1:]...)
			break
		}
	}
	select { // it may have matched meanwhile
	case s := <-w.c:
		return s, true
	default:
		return sample{}, false
	}
}

// await returns the first sample recorded from now on that matches, or
// false when none came within d.
func (r *recorder) await(match func(sample) bool, d time.Duration) (sample, bool) {
	return r.wait(r.watch(match), d)
}

// balancer spreads requests round-robin over the edges that are up and
// takes an edge out of rotation at its first connection error, as a load
// balancer with passive health checks does. The last edge is never taken
// out.
type balancer struct {
	urls []string
	down []atomic.Bool
	next atomic.Uint64
	// markedDown is when each edge was taken out (zero while it is in).
	mu         sync.Mutex
	markedDown []time.Time
}

func newBalancer(urls []string) *balancer {
	return &balancer{urls: urls, down: make([]atomic.Bool, len(urls)), markedDown: make([]time.Time, len(urls))}
}

// pick returns the next edge in rotation.
func (b *balancer) pick() int {
	n := len(b.urls)
	for range n {
		i := int(b.next.Add(1) % uint64(n))
		if !b.down[i].Load() {
			return i
		}
	}
	return int(b.next.Add(1) % uint64(n))
}

// markDown takes edge i out of rotation unless it is the last one up.
func (b *balancer) markDown(i int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.down[i].Load() {
		return
	}
	up := 0
	for j := range b.down {
		if !b.down[j].Load() {
			up++
		}
	}
	if up > 1 {
		b.down[i].Store(true)
		b.markedDown[i] = time.Now()
	}
}

// driver sends the drills' requests through a balancer and records them.
type driver struct {
	client *http.Client
	lb     *balancer
	rec    *recorder
}

func newDriver(edgeURLs []string) *driver {
	tr := &http.Transport{MaxIdleConnsPerHost: 64, DisableCompression: true,
		DialContext: (&net.Dialer{Timeout: 2 * time.Second}).DialContext}
	return &driver{client: &http.Client{Transport: tr, Timeout: 10 * time.Second},
		lb: newBalancer(edgeURLs), rec: &recorder{}}
}

func (d *driver) close() { d.client.CloseIdleConnections() }

// do sends one request to edge e and records it. body may be nil.
func (d *driver) do(kind string, e int, method, path string, body []byte, hdr map[string]string) (sample, []byte) {
	s := sample{kind: kind, edge: e, start: time.Now()}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, d.lb.urls[e]+path, rd)
	if err != nil {
		panic(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := d.client.Do(req)
	var b []byte
	if err == nil {
		b, err = io.ReadAll(resp.Body)
		resp.Body.Close()
		if err == nil {
			s.status = resp.StatusCode
			s.cache = resp.Header.Get("X-Cache")
			s.reset, _ = strconv.ParseInt(resp.Header.Get("X-RateLimit-Reset"), 10, 64)
			s.retryAfter, _ = strconv.Atoi(resp.Header.Get("Retry-After"))
		}
	}
	if err != nil {
		s.err = shortErr(err)
	}
	s.end = time.Now()
	d.rec.add(s)
	return s, b
}

// shortErr names a transport error by its kind.
func shortErr(err error) string {
	msg := err.Error()
	for _, k := range []string{"connection refused", "connection reset", "EOF", "timeout", "broken pipe"} {
		if strings.Contains(msg, k) {
			return k
		}
	}
	return msg
}

// get reads path with key through the balancer: a connection error takes
// the edge out of rotation and the request goes to another edge (at most
// three tries). It returns the last attempt.
func (d *driver) get(kind, path, key string) sample {
	var s sample
	for range 3 {
		e := d.lb.pick()
		s, _ = d.do(kind, e, "GET", path, nil, map[string]string{"Authorization": "Bearer " + key})
		if s.status != 0 {
			return s
		}
		d.lb.markDown(e)
	}
	return s
}

// warm reads each path on every edge until the edge answers it from its
// cache (X-Cache: HIT), so the drill starts with the entries cached.
func (d *driver) warm(paths []string, key string) error {
	deadline := time.Now().Add(10 * time.Second)
	hdr := map[string]string{"Authorization": "Bearer " + key}
	for e := range d.lb.urls {
		for _, p := range paths {
			for {
				s, b := d.do("warm", e, "GET", p, nil, hdr)
				if s.status == 200 && s.cache == "HIT" {
					break
				}
				if s.status != 200 && s.status != 0 || time.Now().After(deadline) {
					return fmt.Errorf("warming %s on edge %d: %d %s %s", p, e, s.status, s.err, b)
				}
			}
		}
	}
	return nil
}

// loadGen runs workers that each start operations back to back until it is
// halted, its duration is over or its operation budget is spent.
type loadGen struct {
	stop chan struct{}
	once sync.Once
	wg   sync.WaitGroup
	n    atomic.Int64
	t    *time.Timer
}

// startLoad starts workers calling op(i) with i = 1, 2, … for at most d
// and at most max operations in all.
func startLoad(workers int, d time.Duration, max int64, op func(i int64)) *loadGen {
	g := &loadGen{stop: make(chan struct{})}
	g.t = time.AfterFunc(d, g.signal)
	for range workers {
		g.wg.Go(func() {
			for {
				select {
				case <-g.stop:
					return
				default:
				}
				i := g.n.Add(1)
				if i > max {
					return
				}
				op(i)
			}
		})
	}
	return g
}

func (g *loadGen) signal() { g.once.Do(func() { close(g.stop) }) }

// halt stops starting operations and waits for those under way (a lead
// being retried finishes its retries).
func (g *loadGen) halt() {
	g.t.Stop()
	g.signal()
	g.wg.Wait()
}

// wait waits until the operation budget is spent or the duration is over.
func (g *loadGen) wait() {
	g.wg.Wait()
	g.t.Stop()
}

// between reports whether t is in [from, to).
func between(t, from, to time.Time) bool { return !t.Before(from) && t.Before(to) }

// statusCounts counts samples by status (0: transport error).
func statusCounts(ss []sample, keep func(sample) bool) map[int]int {
	m := map[int]int{}
	for _, s := range ss {
		if keep(s) {
			m[s.status]++
		}
	}
	return m
}

// errorsByKind counts transport errors by their kind.
func errorsByKind(ss []sample, keep func(sample) bool) map[string]int {
	m := map[string]int{}
	for _, s := range ss {
		if s.status == 0 && keep(s) {
			m[s.err]++
		}
	}
	return m
}

// count5xx counts answers of 500 and above, 503 apart when allow503.
func count5xx(ss []sample, allow503 bool) map[int]int {
	m := map[int]int{}
	for _, s := range ss {
		if s.status >= 500 && !(allow503 && s.status == 503) {
			m[s.status]++
		}
	}
	return m
}

// msSince is t - from in milliseconds, one decimal.
func msSince(from, t time.Time) float64 {
	return float64(t.Sub(from).Microseconds()/100) / 10
}

// distribution is the min, median and max of xs.
func distribution(xs []float64) map[string]float64 {
	if len(xs) == 0 {
		return nil
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return map[string]float64{"min": s[0], "median": s[len(s)/2], "max": s[len(s)-1]}
}

// awaitWindow waits, when less than need is left in the current UTC
// minute, for the next minute to begin, so that what follows runs inside
// one rate-limit window. It returns the end of the window it runs in.
func awaitWindow(need time.Duration) time.Time {
	now := time.Now().UTC()
	end := now.Truncate(time.Minute).Add(time.Minute)
	if end.Sub(now) < need {
		time.Sleep(end.Sub(now) + 50*time.Millisecond)
		end = end.Add(time.Minute)
	}
	return end
}

// runID is a short id that makes a run's e-mails and keys unique.
func runID() string { return strconv.FormatInt(time.Now().UnixNano()%1e10, 36) }
