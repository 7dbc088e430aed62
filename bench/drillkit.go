package main

import (
	"bytes"
	"context"
	"errors"
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

	json "github.com/goccy/go-json"
	"github.com/jackc/pgx/v5"
)

// This file is the drills' and the limiter's client side: a load generator
// bounded in time and count, a client that records every request it makes
// (when, to which edge, with what answer), a balancer over the edges that
// retries on connection errors like a load balancer would, and a lead
// client that retries with its Idempotency-Key as a careful API user would.

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

// leadResult is what became of one enquiry after every retry.
type leadResult struct {
	email     string
	leadID    int64
	acked     bool // a 201 came back
	duplicate bool // the 201 said duplicate: true
	attempts  int
	inFlight  int // 409s: the key's claim was still held (by a request the outage cut)
	final     int // the last status (0: transport error)
	body      string
	at        time.Time // when the last answer came
}

// Lead retry policy: a client retries a 503 or a connection error with the
// same Idempotency-Key after Retry-After, and a 409 (the key is still in
// flight) after a second, always with the same key. A claim whose request
// the outage cut is released by the origin's idempotency lease (its lead
// timeout + 5 s), well within leadDeadline.
const (
	leadMaxAttempts = 40
	leadDeadline    = 45 * time.Second
)

// submitLead sends enquiry i of run (unique e-mail, its own Idempotency-Key)
// through the balancer until it is acknowledged or the retries run out.
func (d *driver) submitLead(run string, i int64, key string) leadResult {
	email := fmt.Sprintf("drill-%s-%d@example.com", run, i)
	body := fmt.Appendf(nil, `{"name":"Drill Buyer %d","email":%q,"type":"inquiry","message":"Is it still available? (%s)"}`,
		i, email, run)
	r := leadResult{email: email}
	idem := fmt.Sprintf("drill-%s-%d", run, i)
	deadline := time.Now().Add(leadDeadline)
	for r.attempts < leadMaxAttempts && time.Now().Before(deadline) {
		r.attempts++
		e := d.lb.pick()
		s, b := d.do("lead", e, "POST", "/v1/leads", body, map[string]string{"Authorization": "Bearer " + key,
			"Content-Type": "application/json", "Idempotency-Key": idem})
		r.final, r.body, r.at = s.status, string(b), s.end
		switch {
		case s.status == 201:
			var c struct {
				LeadID    int64 `json:"lead_id"`
				Duplicate bool
			}
			if err := json.Unmarshal(b, &c); err != nil || c.LeadID == 0 {
				return r
			}
			r.acked, r.leadID, r.duplicate = true, c.LeadID, c.Duplicate
			return r
		case s.status == 0:
			d.lb.markDown(e)
			time.Sleep(100 * time.Millisecond)
		case s.status == 503 || s.status == 429:
			time.Sleep(time.Duration(min(max(s.retryAfter, 1), 3)) * time.Second)
		case s.status == 409:
			r.inFlight++
			time.Sleep(time.Second)
		default:
			return r // a 4xx or a 500: not for retrying
		}
	}
	return r
}

// probeWrites sends one lead after another (a new enquiry each, one try,
// every 20 ms) until one is acknowledged or d passes: the moment writes
// work again, free of a client's back-off. It returns the results, the
// acknowledged one last.
func (d *driver) probeWrites(key string, dur time.Duration) []leadResult {
	run := runID() + "p"
	var rs []leadResult
	deadline := time.Now().Add(dur)
	for i := int64(1); time.Now().Before(deadline); i++ {
		email := fmt.Sprintf("drill-%s-%d@example.com", run, i)
		body := fmt.Appendf(nil, `{"name":"Drill Probe %d","email":%q,"type":"general"}`, i, email)
		s, b := d.do("probe", d.lb.pick(), "POST", "/v1/leads", body, map[string]string{"Authorization": "Bearer " + key,
			"Content-Type": "application/json", "Idempotency-Key": "probe-" + run + "-" + strconv.FormatInt(i, 10)})
		r := leadResult{email: email, attempts: 1, final: s.status, body: string(b), at: s.end}
		if s.status == 201 {
			var c struct {
				LeadID int64 `json:"lead_id"`
			}
			if json.Unmarshal(b, &c) == nil && c.LeadID != 0 {
				r.acked, r.leadID = true, c.LeadID
				return append(rs, r)
			}
		}
		rs = append(rs, r)
		time.Sleep(20 * time.Millisecond)
	}
	return rs
}

// acknowledged keeps the results that were acknowledged (for probes, whose
// failures are not retried).
func acknowledged(rs []leadResult) []leadResult {
	var out []leadResult
	for _, r := range rs {
		if r.acked {
			out = append(out, r)
		}
	}
	return out
}

// leadCheck is what the database says of a drill's enquiries.
type leadCheck struct {
	Sent       int `json:"sent"`
	Acked      int `json:"acknowledged"`
	NotAcked   int `json:"not_acknowledged"`
	Missing    int `json:"acknowledged_missing"` // a 201 without its row
	Duplicates int `json:"stored_twice"`         // one enquiry, several leads
	InFlight   int `json:"in_flight_409s"`
	Retried    int `json:"leads_retried"`
	Attempts   int `json:"attempts"`
	Statuses   map[int]int
}

func (c leadCheck) String() string {
	return fmt.Sprintf("%d leads, %d acknowledged (%d after retries, %d attempts), %d not acknowledged, %d acknowledged but missing, %d stored twice, %d retries answered 409 (key still in flight)",
		c.Sent, c.Acked, c.Retried, c.Attempts, c.NotAcked, c.Missing, c.Duplicates, c.InFlight)
}

// err reports the first broken promise: a lead lost, stored twice, or not
// stored after every retry.
func (c leadCheck) err() error {
	switch {
	case c.Missing > 0:
		return fmt.Errorf("%d acknowledged leads missing from Postgres", c.Missing)
	case c.Duplicates > 0:
		return fmt.Errorf("%d enquiries stored more than once", c.Duplicates)
	case c.NotAcked > 0:
		return fmt.Errorf("%d leads not acknowledged after %d attempts or %v", c.NotAcked, leadMaxAttempts, leadDeadline)
	}
	return nil
}

// checkLeads looks every result up in Postgres by its e-mail.
func checkLeads(ctx context.Context, dbURL, site string, results []leadResult) (leadCheck, error) {
	c := leadCheck{Sent: len(results), Statuses: map[int]int{}}
	if len(results) == 0 {
		return c, errors.New("no leads were sent")
	}
	emails := make([]string, len(results))
	for i, r := range results {
		emails[i] = r.email
	}
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return c, err
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT email, id FROM leads WHERE site_id = $1 AND email = ANY($2)`, site, emails)
	if err != nil {
		return c, err
	}
	stored := map[string][]int64{}
	for rows.Next() {
		var email string
		var id int64
		if err := rows.Scan(&email, &id); err != nil {
			return c, err
		}
		stored[email] = append(stored[email], id)
	}
	if err := rows.Err(); err != nil {
		return c, err
	}
	for _, r := range results {
		c.Attempts += r.attempts
		c.InFlight += r.inFlight
		c.Statuses[r.final]++
		if len(stored[r.email]) > 1 {
			c.Duplicates++
		}
		if !r.acked {
			c.NotAcked++
			continue
		}
		c.Acked++
		if r.attempts > 1 {
			c.Retried++
		}
		found := false
		for _, id := range stored[r.email] {
			found = found || id == r.leadID
		}
		if !found {
			c.Missing++
		}
	}
	return c, nil
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
