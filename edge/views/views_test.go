package views

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"log/slog"
	"net/netip"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/listgate/listgate/pkg/internalapi"
)

const (
	siteA = "6f1c2a8e-0000-4000-8000-00000000000a"
	siteB = "6f1c2a8e-0000-4000-8000-00000000000b"
	ua    = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36"
)

// origin records the reports a counter sends and answers status (or err).
type origin struct {
	mu      sync.Mutex
	reports []internalapi.ViewReport
	status  int
	err     error
}

func (o *origin) send(_ context.Context, body []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.err != nil {
		return 0, o.err
	}
	var r internalapi.ViewReport
	if err := json.Unmarshal(body, &r); err != nil {
		return 0, err
	}
	o.reports = append(o.reports, r)
	return o.status, nil
}

// totals sums what the origin took per site/listing/day, each batch id once.
func (o *origin) totals() map[string][2]int64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	seen := map[string]bool{}
	out := map[string][2]int64{}
	for _, r := range o.reports {
		if seen[r.BatchID] {
			continue
		}
		seen[r.BatchID] = true
		for _, c := range r.Counts {
			k := fmt.Sprintf("%s/%d/%s", c.SiteID[len(c.SiteID)-1:], c.ListingRef, c.Day)
			v := out[k]
			out[k] = [2]int64{v[0] + c.Views, v[1] + c.Visitors}
		}
	}
	return out
}

func newCounter(t *testing.T, o *origin, opts Options) *Counter {
	t.Helper()
	opts.Metrics = metrics.NewSet()
	return New(o.send, opts, slog.New(slog.DiscardHandler))
}

func ip(s string) netip.Addr { return netip.MustParseAddr(s) }

func TestCountUniqueVisitorsPerDayInZone(t *testing.T) {
	o := &origin{status: 204}
	c := newCounter(t, o, Options{})
	syd, _ := time.LoadLocation("Australia/Sydney")
	// 13:30 UTC is already the next day in Sydney (UTC+11 in November).
	now := time.Date(2026, 11, 26, 13, 30, 0, 0, time.UTC)
	c.CountView(siteA, syd, 1, ip("192.0.2.1"), []byte(ua), false, now)
	c.CountView(siteA, syd, 1, ip("192.0.2.1"), []byte(ua), false, now.Add(time.Minute)) // the same visitor
	c.CountView(siteA, syd, 1, ip("192.0.2.1"), []byte(ua+" x"), false, now)             // another browser
	c.CountView(siteA, syd, 1, ip("192.0.2.2"), []byte(ua), false, now)                  // another address
	c.CountView(siteA, syd, 2, ip("192.0.2.1"), []byte(ua), false, now)                  // another listing
	c.CountView(siteB, nil, 1, ip("192.0.2.1"), []byte(ua), false, now)                  // another site, UTC
	c.CountView(siteA, syd, 1, ip("192.0.2.1"), []byte("Googlebot/2.1"), false, now)     // a bot
	c.CountView(siteA, syd, 1, ip("192.0.2.1"), []byte(""), false, now)                  // no User-Agent
	c.CountView(siteA, syd, 1, ip("192.0.2.3"), []byte(ua), true, now)                   // a prefetch
	c.CountView(siteA, syd, 1, ip("192.0.2.3"), []byte("curl/8.5.0"), false, now)        // a library
	c.CountView(siteA, syd, 1, ip("192.0.2.3"), []byte("facebookexternalhit/1.1"), false, now)
	if err := c.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	// The same visitor later the same day (next flush) is not new.
	c.CountView(siteA, syd, 1, ip("192.0.2.1"), []byte(ua), false, now.Add(2*time.Hour))
	if err := c.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := map[string][2]int64{"a/1/2026-11-27": {5, 3}, "a/2/2026-11-27": {1, 1}, "b/1/2026-11-26": {1, 1}}
	if got := o.totals(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("reported %v, want %v", got, want)
	}
	// A new day: the same visitor counts again.
	c.CountView(siteA, syd, 1, ip("192.0.2.1"), []byte(ua), false, now.Add(24*time.Hour))
	c.Flush(context.Background())
	if got := o.totals()["a/1/2026-11-28"]; got != [2]int64{1, 1} {
		t.Errorf("next day %v", got)
	}
}

func TestClientLimit(t *testing.T) {
	o := &origin{status: 204}
	c := newCounter(t, o, Options{ClientLimit: 10})
	now := time.Date(2026, 11, 26, 1, 0, 5, 0, time.UTC)
	for i := range 25 {
		c.CountView(siteA, nil, int64(1+i%3), ip("198.51.100.7"), []byte(fmt.Sprint(ua, i)), false, now)
	}
	// An IPv6 /64 is one client.
	for i := range 15 {
		c.CountView(siteA, nil, 9, ip(fmt.Sprintf("2001:db8:1:2::%x", i+1)), []byte(ua), false, now)
	}
	c.CountView(siteA, nil, 9, ip("2001:db8:1:3::1"), []byte(ua), false, now) // another /64
	c.CountView(siteA, nil, 1, ip("198.51.100.7"), []byte(ua), false, now.Add(time.Minute))
	c.Flush(context.Background())
	var views int64
	for _, v := range o.totals() {
		views += v[0]
	}
	if views != 10+10+1+1 {
		t.Errorf("%d views counted, want 22", views)
	}
}

func TestBounds(t *testing.T) {
	o := &origin{status: 204}
	c := newCounter(t, o, Options{MaxVisitors: 100, MaxVisitorsPerSite: 100, MaxListingsPerSite: 5, MaxEntries: 8, ClientLimit: 1 << 20})
	now := time.Date(2026, 11, 26, 1, 0, 0, 0, time.UTC)
	// A flood of made-up visitors: views count, visitors stop at the bound.
	for i := range 1000 {
		c.CountView(siteA, nil, 1, ip("203.0.113.9"), []byte(fmt.Sprint(ua, i)), false, now)
	}
	if n := c.visitors.Load(); n != 100 {
		t.Errorf("%d visitor hashes held, want the bound 100", n)
	}
	// Made-up listings: a site takes at most 5 entries an interval, all
	// sites at most 8.
	for ref := range int64(50) {
		c.CountView(siteA, nil, 100+ref, ip("203.0.113.9"), []byte(ua), false, now)
		c.CountView(siteB, nil, 100+ref, ip("203.0.113.9"), []byte(ua), false, now)
	}
	c.Flush(context.Background())
	got := o.totals()
	if v := got["a/1/2026-11-26"]; v != [2]int64{1000, 100} {
		t.Errorf("flooded listing %v, want 1000 views, 100 visitors", v)
	}
	perSite := map[byte]int{}
	for k := range got {
		perSite[k[0]]++
	}
	if perSite['a'] != 5 || perSite['b'] != 3 {
		t.Errorf("entries per site %v, want a:5 (its bound) b:3 (the total's 8)", perSite)
	}
	// The next interval takes entries again; an expired day frees its hashes.
	c.CountView(siteB, nil, 500, ip("203.0.113.9"), []byte(ua), false, now)
	c.expire(now.Add(72 * time.Hour))
	if n := c.visitors.Load(); n != 0 {
		t.Errorf("%d visitor hashes after their day expired", n)
	}
	if n := len(*c.days.Load()); n != 0 {
		t.Errorf("%d day seeds after their day expired", n)
	}
	c.Flush(context.Background())
	if v := o.totals()["b/500/2026-11-26"]; v[0] != 1 {
		t.Errorf("next interval: %v", v)
	}
}

// A flood of made-up visitors for one site stops at that site's share of
// the visitor hashes: another site's visitors are still told apart, and
// the next day gives the flooded site its share again.
func TestVisitorsPerSite(t *testing.T) {
	o := &origin{status: 204}
	c := newCounter(t, o, Options{MaxVisitors: 1000, MaxVisitorsPerSite: 50, ClientLimit: 1 << 20})
	now := time.Date(2026, 11, 26, 1, 0, 0, 0, time.UTC)
	// Sites sharing a slot of the day's table share the bound: the other
	// site is one whose slot differs from the flooded one's (the slots
	// come from the day's random seed, as CountView takes them).
	ds := c.seed(localDay(now, time.UTC), now)
	slot := func(site string) uint64 {
		var h maphash.Hash
		h.SetSeed(ds.seed)
		h.WriteString(site)
		return h.Sum64() % siteSlots
	}
	other := siteB
	for _, last := range "bcdef" {
		if other = siteB[:len(siteB)-1] + string(last); slot(other) != slot(siteA) {
			break
		}
	}
	for i := range 2000 {
		c.CountView(siteA, nil, 1, ip("203.0.113.9"), []byte(fmt.Sprint(ua, i)), false, now)
	}
	for i := range 20 {
		c.CountView(other, nil, 1, ip("198.51.100.7"), []byte(fmt.Sprint(ua, i)), false, now)
	}
	c.CountView(siteA, nil, 1, ip("203.0.113.9"), []byte(ua+"x"), false, now.Add(24*time.Hour))
	c.Flush(context.Background())
	got := o.totals()
	if v := got["a/1/2026-11-26"]; v != [2]int64{2000, 50} {
		t.Errorf("flooded site %v, want 2000 views, 50 visitors (its share)", v)
	}
	if v := got[other[len(other)-1:]+"/1/2026-11-26"]; v != [2]int64{20, 20} {
		t.Errorf("the other site %v, want 20 views, 20 visitors", v)
	}
	if v := got["a/1/2026-11-27"]; v != [2]int64{1, 1} {
		t.Errorf("the flooded site the next day %v, want its visitor counted", v)
	}
}

func TestFlushRetriesTheSameBatch(t *testing.T) {
	o := &origin{status: 204, err: errors.New("connection refused")}
	c := newCounter(t, o, Options{MaxBatch: 2})
	now := time.Date(2026, 11, 26, 1, 0, 0, 0, time.UTC)
	for ref := range int64(3) {
		c.CountView(siteA, nil, ref+1, ip("192.0.2.1"), []byte(ua), false, now)
	}
	if err := c.Flush(context.Background()); err == nil || c.Pending() != 3 {
		t.Fatalf("flush to a down origin: %v, %d pending", err, c.Pending())
	}
	c.CountView(siteA, nil, 1, ip("192.0.2.1"), []byte(ua), false, now)
	// The origin answers 503 once: kept.
	o.err, o.status = nil, 503
	if err := c.Flush(context.Background()); err == nil || c.Pending() != 4 {
		t.Fatalf("flush answered 503: %v, %d pending", err, c.Pending())
	}
	o.status = 204
	if err := c.Flush(context.Background()); err != nil || c.Pending() != 0 {
		t.Fatalf("flush: %v, %d pending", err, c.Pending())
	}
	// Reports: the first batch (503, then 204) was sent twice with the same
	// id; three batches in all.
	ids := map[string]int{}
	for _, r := range o.reports {
		ids[r.BatchID]++
		if len(r.Counts) > 2 || r.EdgeID == "" {
			t.Errorf("report %+v", r)
		}
	}
	var n []int
	for _, v := range ids {
		n = append(n, v)
	}
	sort.Ints(n)
	if fmt.Sprint(n) != "[1 1 2]" {
		t.Errorf("sends per batch id %v, want [1 1 2]", n)
	}
	if got := o.totals(); got["a/1/2026-11-26"] != [2]int64{2, 1} || len(got) != 3 {
		t.Errorf("totals %v", got)
	}
	// A report the origin refuses as malformed is dropped, not retried.
	c.CountView(siteA, nil, 7, ip("192.0.2.1"), []byte(ua), false, now)
	o.status = 422
	if err := c.Flush(context.Background()); err != nil || c.Pending() != 0 {
		t.Errorf("refused report: %v, %d pending", err, c.Pending())
	}
}

func TestRunFlushesOnStop(t *testing.T) {
	o := &origin{status: 204}
	c := newCounter(t, o, Options{Interval: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); c.Run(ctx) }()
	c.CountView(siteA, nil, 1, ip("192.0.2.1"), []byte(ua), false, time.Now())
	cancel()
	<-done
	if len(o.totals()) != 1 {
		t.Errorf("stopping did not report: %v", o.totals())
	}
}

func TestConcurrentCounting(t *testing.T) {
	o := &origin{status: 204}
	c := newCounter(t, o, Options{ClientLimit: 1 << 20})
	now := time.Date(2026, 11, 26, 1, 0, 0, 0, time.UTC)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 500 {
				c.CountView(siteA, nil, int64(1+i%7), ip(fmt.Sprintf("10.0.%d.%d", g, i%50)), []byte(ua), false, now)
				if i%100 == 0 {
					c.Flush(context.Background())
				}
			}
		})
	}
	wg.Wait()
	c.Flush(context.Background())
	var views, visitors int64
	for _, v := range o.totals() {
		views, visitors = views+v[0], visitors+v[1]
	}
	// 8 goroutines × 50 addresses × 7 listings: each pair once.
	if views != 4000 || visitors != 8*50*7 {
		t.Errorf("%d views, %d visitors; want 4000, 2800", views, visitors)
	}
}

func TestIsBot(t *testing.T) {
	for ua, want := range map[string]bool{
		"": true,
		"Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)":   true,
		"Mozilla/5.0 (compatible; bingbot/2.0)":                                      true,
		"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.0)": true,
		"python-requests/2.31": true,
		"Go-http-client/1.1":   true,
		ua:                     false,
		"Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148":                     false,
		"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/131.0.0.0 Safari/537.36": false,
	} {
		if got := IsBot([]byte(ua)); got != want {
			t.Errorf("IsBot(%q) = %v", ua, got)
		}
	}
}

// Reports pile up while the origin is down, up to MaxPending entries: then
// the oldest go.
func TestPendingBound(t *testing.T) {
	o := &origin{err: errors.New("connection refused")}
	c := newCounter(t, o, Options{MaxPending: 5, MaxBatch: 2, ClientLimit: 1 << 20})
	now := time.Date(2026, 11, 26, 1, 0, 0, 0, time.UTC)
	for round := range int64(4) {
		for ref := range int64(2) {
			c.CountView(siteA, nil, 10*round+ref+1, ip("192.0.2.1"), []byte(ua), false, now)
		}
		c.Flush(context.Background())
		if c.Pending() > 5 {
			t.Fatalf("round %d: %d entries pending, bound 5", round, c.Pending())
		}
	}
	o.err, o.status = nil, 204
	if err := c.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := o.totals()
	if len(got) != 4 || got["a/31/2026-11-26"][0] != 1 || got["a/1/2026-11-26"][0] != 0 {
		t.Errorf("after the outage the origin got %v, want the newest 4 entries", got)
	}
}
