// Package views counts listing views at the edge: the view beacons of
// sites' pages (POST /v1/sites/{site}/views, GET …/views.gif) are counted
// in memory per site, listing and day (the day in the site's time zone),
// with the listing's unique visitors of the day, and reported to the
// origin in batches (POST /internal/v1/views) every interval, each batch
// with an id the origin applies once, so a report retried after a lost
// answer is not counted twice.
//
// Unique visitors are told apart by a 64-bit hash of the client address,
// User-Agent, site and listing, keyed by a random seed made for each date
// (hash/maphash): the seed lives in this process's memory only, is never
// stored, logged or sent, and is dropped once its date is over in every
// time zone, after which the day's hashes (dropped with it) can be linked
// to nothing. No cookies, nothing personal leaves the process.
//
// Memory is bounded whatever clients send: the visitor hashes of all live
// days together (Options.MaxVisitors, and Options.MaxVisitorsPerSite a site
// and day; past them views still count, unique visitors no longer do), the
// counted (site, listing, day) entries waiting
// for a report (Options.MaxEntries, and Options.MaxListingsPerSite a site
// and interval; past them a beacon is not counted), the reports waiting for
// the origin (Options.MaxPending), and the per-client table (a fixed
// array). One client address (an IPv6 /64) counts at most
// Options.ClientLimit beacons a minute. Known bots and prefetches are not
// counted. Nothing here calls the origin on a beacon.
package views

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"hash/maphash"
	"log/slog"
	"math"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/valyala/fasthttp"

	"github.com/listgate/listgate/edge/upstream"
	"github.com/listgate/listgate/pkg/internalapi"
	"github.com/listgate/listgate/pkg/promtext"
)

// Options tune New. Zero fields take the defaults they document.
type Options struct {
	// Interval is how often counts are reported. Default 10 s.
	Interval time.Duration
	// ClientLimit bounds the beacons counted from one client address (IPv4,
	// or IPv6 /64) a minute. Default 60.
	ClientLimit int
	// MaxVisitors bounds the visitor hashes held for all live days
	// together, 8 bytes each (at 3/4 load). Default 1,000,000.
	MaxVisitors int
	// MaxVisitorsPerSite bounds the visitor hashes of one site and day, so
	// that beacons flooding one site with made-up visitors cannot use up
	// MaxVisitors for the others. Sites are told apart by a slot of a
	// fixed table per day (siteSlots): sites sharing a slot share the
	// bound. Default a quarter of MaxVisitors.
	MaxVisitorsPerSite int
	// MaxEntries bounds the (site, listing, day) entries counted in one
	// interval. Default 200,000.
	MaxEntries int
	// MaxListingsPerSite bounds one site's listings counted in one
	// interval, so that beacons naming made-up listings of one site cannot
	// crowd out the others. Default 20,000.
	MaxListingsPerSite int
	// MaxPending bounds the entries of reports the origin has not taken
	// (it is down): past it the oldest report is dropped. Default 400,000
	// (about 55 MB of reports at most).
	MaxPending int
	// MaxBatch bounds the entries of one report. Default 10,000.
	MaxBatch int
	// Metrics receives the counters; nil: the process's default set.
	Metrics *metrics.Set
}

func (o *Options) defaults() {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	if o.Interval <= 0 {
		o.Interval = 10 * time.Second
	}
	def(&o.ClientLimit, 60)
	def(&o.MaxVisitors, 1_000_000)
	def(&o.MaxVisitorsPerSite, max(o.MaxVisitors/4, 1))
	def(&o.MaxEntries, 200_000)
	def(&o.MaxListingsPerSite, 20_000)
	def(&o.MaxPending, 400_000)
	def(&o.MaxBatch, 10_000)
}

// Sender sends one report (the JSON body of POST /internal/v1/views) to
// the origin and returns its status; an error means no answer came.
type Sender func(ctx context.Context, body []byte) (status int, err error)

const shards = 32

// Counter is safe for concurrent use.
type Counter struct {
	opts Options
	send Sender
	log  *slog.Logger

	shards [shards]shard
	// entries counts the (site, listing, day) entries of this interval;
	// visitors the hashes held for all live days.
	entries  atomic.Int64
	visitors atomic.Int64
	// perSite counts each site's entries this interval (site → *atomic.Int64).
	perSite atomic.Pointer[sync.Map]

	days    atomic.Pointer[[]daySeed]
	daysMu  sync.Mutex
	clients clientTable

	edgeID string
	// sendMu serializes Flush; pending are the reports not yet taken, in
	// order, each with its batch id.
	sendMu       sync.Mutex
	pending      []report
	pendingCount int

	counted, bots, flooded, crowded, saturated, dropped *metrics.Counter
}

type daySeed struct {
	day  int32 // days since 1970-01-01 of the local date
	seed maphash.Seed
	// sites counts the visitor hashes held for the day, per slot of a site
	// (MaxVisitorsPerSite).
	sites *[siteSlots]atomic.Int32
}

// siteSlots is the size of a day's table of visitor counts per site.
const siteSlots = 4096

type key struct {
	site string
	ref  int64
	day  int32
}

type figures struct{ views, visitors int64 }

type shard struct {
	mu     sync.Mutex
	counts map[key]*figures
	// sets holds the visitor hashes of each live day.
	sets map[int32]*set64
	_    [40]byte // keep shards on separate cache lines
}

type report struct {
	id     string
	body   []byte
	counts int
}

func init() {
	promtext.Describe("listgate_edge_view_beacons_total",
		"Listing view beacons received, by outcome: counted, bot (a known bot or a prefetch), client_limit (the address's minute limit), entry_limit (past the bounds of an interval).")
	promtext.Describe("listgate_edge_view_visitors_unsaved_total",
		"Views counted without telling unique visitors apart: the visitor hashes held reached views_max_visitors, or the site's quarter of it for the day.")
	promtext.Describe("listgate_edge_view_counts_dropped_total",
		"View counts dropped: refused by the origin, or the oldest of too many reports waiting for it.")
}

// New returns a counter reporting through send.
func New(send Sender, opts Options, log *slog.Logger) *Counter {
	opts.defaults()
	if log == nil {
		log = slog.Default()
	}
	if opts.Metrics == nil {
		opts.Metrics = metrics.GetDefaultSet()
	}
	c := &Counter{opts: opts, send: send, log: log, edgeID: randomHex(8)}
	for i := range c.shards {
		c.shards[i].counts = map[key]*figures{}
		c.shards[i].sets = map[int32]*set64{}
	}
	c.perSite.Store(&sync.Map{})
	c.days.Store(&[]daySeed{})
	c.clients.init()
	m := opts.Metrics
	c.counted = m.NewCounter(`listgate_edge_view_beacons_total{outcome="counted"}`)
	c.bots = m.NewCounter(`listgate_edge_view_beacons_total{outcome="bot"}`)
	c.flooded = m.NewCounter(`listgate_edge_view_beacons_total{outcome="client_limit"}`)
	c.crowded = m.NewCounter(`listgate_edge_view_beacons_total{outcome="entry_limit"}`)
	c.saturated = m.NewCounter(`listgate_edge_view_visitors_unsaved_total`)
	c.dropped = m.NewCounter(`listgate_edge_view_counts_dropped_total`)
	return c
}

// Interval is how often Run reports.
func (c *Counter) Interval() time.Duration { return c.opts.Interval }

// CountView counts one beacon of site's listing ref, seen now from client
// with userAgent; zone is the site's time zone (nil: UTC). A prefetch, a
// known bot, a client over its minute's limit, or an entry past the
// bounds is not counted. userAgent is not retained.
func (c *Counter) CountView(site string, zone *time.Location, ref int64, client netip.Addr, userAgent []byte, prefetch bool, now time.Time) {
	if prefetch || IsBot(userAgent) {
		c.bots.Inc()
		return
	}
	if !c.clients.allow(client, now, c.opts.ClientLimit) {
		c.flooded.Inc()
		return
	}
	if zone == nil {
		zone = time.UTC
	}
	day := localDay(now, zone)
	ds := c.seed(day, now)
	var h maphash.Hash
	h.SetSeed(ds.seed)
	h.WriteString(site)
	siteCount := &ds.sites[h.Sum64()%siteSlots]
	var buf [8]byte
	for i := range buf {
		buf[i] = byte(ref >> (8 * i))
	}
	h.Write(buf[:])
	slot := h.Sum64() // the listing's, before the visitor is added
	a := client.As16()
	h.Write(a[:])
	h.Write(userAgent)
	visitor := h.Sum64()

	s := &c.shards[slot%shards]
	k := key{site: site, ref: ref, day: day}
	s.mu.Lock()
	f := s.counts[k]
	if f == nil {
		if !c.admit(site) {
			s.mu.Unlock()
			c.crowded.Inc()
			return
		}
		f = &figures{}
		s.counts[k] = f
	}
	f.views++
	set := s.sets[day]
	if set == nil {
		set = &set64{}
		s.sets[day] = set
	}
	switch set.add(visitor, &c.visitors, int64(c.opts.MaxVisitors), siteCount, int32(min(c.opts.MaxVisitorsPerSite, math.MaxInt32))) {
	case added:
		f.visitors++
	case full:
		c.saturated.Inc()
	}
	s.mu.Unlock()
	c.counted.Inc()
}

// admit takes one more entry for site this interval, within MaxEntries and
// MaxListingsPerSite.
func (c *Counter) admit(site string) bool {
	if c.entries.Add(1) > int64(c.opts.MaxEntries) {
		c.entries.Add(-1)
		return false
	}
	m := c.perSite.Load()
	v, ok := m.Load(site)
	if !ok {
		v, _ = m.LoadOrStore(site, new(atomic.Int64))
	}
	if v.(*atomic.Int64).Add(1) > int64(c.opts.MaxListingsPerSite) {
		c.entries.Add(-1)
		return false
	}
	return true
}

// localDay is now's date in zone, as days since 1970-01-01.
func localDay(now time.Time, zone *time.Location) int32 {
	y, m, d := now.In(zone).Date()
	return int32(time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix() / 86400)
}

// seed returns the date's seed, made on first use.
func (c *Counter) seed(day int32, now time.Time) daySeed {
	for _, d := range *c.days.Load() {
		if d.day == day {
			return d
		}
	}
	c.daysMu.Lock()
	defer c.daysMu.Unlock()
	old := *c.days.Load()
	for _, d := range old {
		if d.day == day {
			return d
		}
	}
	next := append(make([]daySeed, 0, len(old)+1), old...)
	next = append(next, daySeed{day: day, seed: maphash.MakeSeed(), sites: new([siteSlots]atomic.Int32)})
	c.days.Store(&next)
	return next[len(next)-1]
}

// expire drops the seeds and visitor hashes of dates over in every time
// zone (UTC−12 to UTC+14): those before yesterday's UTC date.
func (c *Counter) expire(now time.Time) {
	first := int32(now.UTC().Unix()/86400) - 1
	c.daysMu.Lock()
	var keep []daySeed
	for _, d := range *c.days.Load() {
		if d.day >= first {
			keep = append(keep, d)
		}
	}
	c.days.Store(&keep)
	c.daysMu.Unlock()
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		for day, set := range s.sets {
			if day < first {
				c.visitors.Add(-int64(set.n))
				delete(s.sets, day)
			}
		}
		s.mu.Unlock()
	}
}

// Run reports every interval until ctx ends, then flushes once more
// (bounded by 10 s): a stopped edge reports what it counted.
func (c *Counter) Run(ctx context.Context) {
	t := time.NewTicker(c.opts.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			defer cancel()
			if err := c.Flush(fctx); err != nil {
				c.log.Error("view counts not reported before stopping", "err", err, "counts", c.Pending())
			}
			return
		case now := <-t.C:
			c.Flush(ctx)
			c.expire(now)
		}
	}
}

// Pending is the number of counted entries not yet taken by the origin.
func (c *Counter) Pending() int {
	c.sendMu.Lock()
	defer c.sendMu.Unlock()
	return c.pendingCount
}

// Flush takes what was counted since the last flush into reports, then
// sends every report the origin has not taken yet, oldest first, each with
// its batch id (a report that failed is sent again as it was). It stops at
// the first failure and returns it; a report the origin refuses as
// malformed (4xx) is dropped, as sending it again cannot help.
func (c *Counter) Flush(ctx context.Context) error {
	c.sendMu.Lock()
	defer c.sendMu.Unlock()
	c.cut()
	for len(c.pending) > 0 {
		r := c.pending[0]
		status, err := c.send(ctx, r.body)
		if err == nil && status >= 500 {
			err = fmt.Errorf("origin answered %d", status)
		}
		if err != nil {
			c.log.Warn("view report failed; kept for the next one", "err", err, "batch_id", r.id, "reports", len(c.pending))
			return err
		}
		if status != 204 {
			c.dropped.Add(r.counts)
			c.log.Error("view report refused; dropped", "status", status, "batch_id", r.id, "counts", r.counts)
		}
		c.pending = c.pending[1:]
		c.pendingCount -= r.counts
	}
	return nil
}

// cut moves this interval's counts into reports of at most MaxBatch
// entries. Called with sendMu held.
func (c *Counter) cut() {
	var taken []struct {
		k key
		f figures
	}
	for i := range c.shards {
		s := &c.shards[i]
		s.mu.Lock()
		if len(s.counts) > 0 {
			for k, f := range s.counts {
				taken = append(taken, struct {
					k key
					f figures
				}{k, *f})
			}
			s.counts = make(map[key]*figures, len(s.counts))
		}
		s.mu.Unlock()
	}
	c.entries.Store(0)
	c.perSite.Store(&sync.Map{})
	for len(taken) > 0 {
		n := min(len(taken), c.opts.MaxBatch)
		id := newUUID()
		var b bytes.Buffer
		b.Grow(64 + n*140)
		fmt.Fprintf(&b, `{"batch_id":%q,"edge_id":%q,"counts":[`, id, c.edgeID)
		for i, t := range taken[:n] {
			if i > 0 {
				b.WriteByte(',')
			}
			day := time.Unix(int64(t.k.day)*86400, 0).UTC().Format(time.DateOnly)
			fmt.Fprintf(&b, `{"site_id":%q,"listing_ref":%d,"day":%q,"views":%d,"visitors":%d}`,
				t.k.site, t.k.ref, day, t.f.views, t.f.visitors)
		}
		b.WriteString("]}")
		c.pending = append(c.pending, report{id: id, body: b.Bytes(), counts: n})
		c.pendingCount += n
		taken = taken[n:]
	}
	for c.pendingCount > c.opts.MaxPending && len(c.pending) > 1 {
		r := c.pending[0]
		c.pending = c.pending[1:]
		c.pendingCount -= r.counts
		c.dropped.Add(r.counts)
		c.log.Error("view reports piling up while the origin is unreachable; the oldest dropped", "batch_id", r.id, "counts", r.counts)
	}
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// newUUID returns a random (version 4) UUID.
func newUUID() string {
	var u [16]byte
	rand.Read(u[:])
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	h := hex.EncodeToString(u[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// OriginSender returns a Sender posting reports to the origins
// (internalapi.PathViews), each bounded by 5 s.
func OriginSender(origins *upstream.Origins) Sender {
	return func(ctx context.Context, body []byte) (int, error) {
		req := fasthttp.AcquireRequest()
		resp := fasthttp.AcquireResponse()
		defer fasthttp.ReleaseRequest(req)
		defer fasthttp.ReleaseResponse(resp)
		req.SetRequestURI(internalapi.PathViews)
		req.Header.SetMethod("POST")
		req.Header.SetContentType("application/json")
		req.SetBody(body)
		timeout := 5 * time.Second
		if d, ok := ctx.Deadline(); ok && time.Until(d) < timeout {
			timeout = max(time.Until(d), time.Millisecond)
		}
		if err := origins.Do(req, resp, timeout); err != nil {
			return 0, err
		}
		return resp.StatusCode(), nil
	}
}
