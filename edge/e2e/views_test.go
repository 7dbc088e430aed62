package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

const chromeUA = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"

// viewCounts reads what the origin stored for a listing, all days.
func (s *system) viewCounts(site string, ref int64) (views, visitors int64) {
	s.tb.Helper()
	conn, err := pgx.Connect(context.Background(), s.dbURL)
	if err != nil {
		s.tb.Fatal(err)
	}
	defer conn.Close(context.Background())
	if err := conn.QueryRow(context.Background(), `SELECT coalesce(sum(views), 0), coalesce(sum(visitors), 0)
		FROM listing_views WHERE site_id = $1 AND listing_ref = $2`, site, ref).Scan(&views, &visitors); err != nil {
		s.tb.Fatal(err)
	}
	return views, visitors
}

// awaitViews waits until the origin has views for the listing (the edge
// reports every 200 ms here), at most 10 s.
func (s *system) awaitViews(site string, ref int64, want int64) (views, visitors int64) {
	s.tb.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		views, visitors = s.viewCounts(site, ref)
		if views >= want || time.Now().After(deadline) {
			return views, visitors
		}
	}
}

// awaitFreshDay waits, when less than need is left of the current date in
// the site's time zone, until the next date has begun there. A visitor is
// unique per date of the site's (the edge's visitor hashes are seeded per
// date): beacons of one visitor on both sides of midnight there (13:00 or
// 14:00 UTC for Australia/Sydney) are two unique visitors.
func (s *system) awaitFreshDay(site string, need time.Duration) {
	s.tb.Helper()
	conn, err := pgx.Connect(context.Background(), s.dbURL)
	if err != nil {
		s.tb.Fatal(err)
	}
	defer conn.Close(context.Background())
	var tz string
	if err := conn.QueryRow(context.Background(), `SELECT timezone FROM sites WHERE id = $1`, site).Scan(&tz); err != nil {
		s.tb.Fatal(err)
	}
	zone, err := time.LoadLocation(tz)
	if err != nil {
		s.tb.Fatalf("site time zone %q: %v", tz, err)
	}
	now := time.Now().In(zone)
	y, m, d := now.Date()
	if left := time.Date(y, m, d+1, 0, 0, 0, 0, zone).Sub(now); left < need {
		s.tb.Logf("%v left of %s in %s: waiting for the next date", left.Round(time.Second), now.Format(time.DateOnly), tz)
		time.Sleep(left + time.Second)
	}
}

func (s *system) beaconID(site string) string {
	s.tb.Helper()
	var b struct {
		BeaconID string `json:"beacon_id"`
	}
	s.cli(&b, "sites", "beacon-id", site, "--json")
	return b.BeaconID
}

func (s *system) firstListingRef(edgeURL, site string) int64 {
	s.tb.Helper()
	k := s.key(site, "listings:read")
	r := do(s.tb, "GET", edgeURL+"/v1/sites/"+site+"/listings", nil, bearer(k.Key))
	var page struct {
		Data []struct {
			ListingRef int64 `json:"listing_ref"`
		}
	}
	if json.Unmarshal(r.body, &page); r.status != 200 || len(page.Data) == 0 {
		s.tb.Fatalf("listings: %d %s", r.status, r.body)
	}
	return page.Data[0].ListingRef
}

// Beacons from a browser through the edge reach the stats API: views,
// unique visitors, leads; bots and prefetches are not counted; a beacon id
// counts for its own site only and reads nothing; the stats are cached at
// the edge.
func TestViewsReachTheStats(t *testing.T) {
	s := newSystem(t)
	edge := s.startEdge(edgeOpts{yaml: "views_interval: 200ms\n"})
	site, other := s.site("starter"), s.site("enterprise")
	s.importFeed(site, feed("2024-02-01-10:00:00", "Viewed house"))
	s.importFeed(other, feed("2024-02-01-10:00:00", "Other house"))
	ref, otherRef := s.firstListingRef(edge.url(), site), s.firstListingRef(edge.url(), other)
	beacon, otherBeacon := s.beaconID(site), s.beaconID(other)
	if beacon == "" || beacon == otherBeacon {
		t.Fatalf("beacon ids %q %q", beacon, otherBeacon)
	}
	base := edge.url() + "/v1/sites/" + site
	send := func(body, ct string, hdr map[string]string) response {
		h := map[string]string{"Content-Type": ct, "User-Agent": chromeUA, "Origin": "https://agency.example"}
		for k, v := range hdr {
			h[k] = v
		}
		return do(t, "POST", base+"/views?k="+url.QueryEscape(beacon), []byte(body), h)
	}
	// Visitor 1 three times (sendBeacon's text/plain, JSON, a form); visitor
	// 2 (another browser) twice, once by the pixel. The starter plan's 60 a
	// minute does not apply. All on one date of the site's, where each is
	// one unique visitor.
	s.awaitFreshDay(site, time.Minute)
	for _, b := range []struct{ body, ct string }{
		{fmt.Sprintf(`{"listing": %d, "path": "/property/1"}`, ref), "text/plain;charset=UTF-8"},
		{fmt.Sprintf(`{"listing": "%d"}`, ref), "application/json"},
		{fmt.Sprintf(`listing=%d&path=%%2Fproperty%%2F1`, ref), "application/x-www-form-urlencoded"},
	} {
		if r := send(b.body, b.ct, nil); r.status != 204 || r.header.Get("Access-Control-Allow-Origin") != "*" {
			t.Fatalf("beacon: %d %s %v", r.status, r.body, r.header)
		}
	}
	firefox := map[string]string{"User-Agent": "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0"}
	send(fmt.Sprintf(`{"listing": %d}`, ref), "text/plain", firefox)
	if r := do(t, "GET", fmt.Sprintf("%s/views.gif?k=%s&listing=%d", base, beacon, ref), nil, firefox); r.status != 200 ||
		r.header.Get("Content-Type") != "image/gif" {
		t.Fatalf("pixel: %d %v", r.status, r.header)
	}
	// Not counted, answered alike.
	for _, hdr := range []map[string]string{
		{"User-Agent": "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"},
		{"Sec-Purpose": "prefetch"},
	} {
		if r := send(fmt.Sprintf(`{"listing": %d}`, ref), "text/plain", hdr); r.status != 204 {
			t.Fatalf("bot beacon: %d", r.status)
		}
	}
	// Another site's listing named on this site's path: answered, dropped
	// by the origin. This beacon id on the other site's path: 403.
	send(fmt.Sprintf(`{"listing": %d}`, otherRef), "text/plain", nil)
	if r := do(t, "POST", edge.url()+"/v1/sites/"+other+"/views?k="+beacon, []byte(fmt.Sprintf(`{"listing": %d}`, otherRef)),
		map[string]string{"Content-Type": "text/plain", "User-Agent": chromeUA}); r.status != 403 {
		t.Errorf("beacon id on another site: %d", r.status)
	}
	// A beacon id reads nothing, of its site or another.
	for _, p := range []string{base + "/listings", base + "/stats/listings", base + "/stats/summary", edge.url() + "/v1/sites/" + other + "/listings"} {
		if r := do(t, "GET", p, nil, bearer(beacon)); r.status != 403 {
			t.Errorf("beacon id reading %s: %d", p, r.status)
		}
	}
	// A lead for the listing.
	lead := s.key(site, "leads:write")
	if r := do(t, "POST", edge.url()+"/v1/leads", []byte(fmt.Sprintf(`{"name": "Vera", "email": "vera@example.com", "listing_ref": %d}`, ref)),
		map[string]string{"Authorization": "Bearer " + lead.Key, "Content-Type": "application/json"}); r.status != 201 {
		t.Fatalf("lead: %d %s", r.status, r.body)
	}

	if views, visitors := s.awaitViews(site, ref, 5); views != 5 || visitors != 2 {
		t.Fatalf("origin has %d views, %d visitors; want 5 and 2", views, visitors)
	}
	if views, _ := s.viewCounts(other, otherRef); views != 0 {
		t.Errorf("the other site's listing has %d views", views)
	}

	stats := s.key(site, "stats:read")
	var perf struct {
		ListingRef int64 `json:"listing_ref"`
		Days       []struct{ Views int64 }
		Totals     struct {
			Views            int64    `json:"views"`
			UniqueVisitors   int64    `json:"unique_visitors"`
			Leads            int64    `json:"leads"`
			LeadsPer100Views *float64 `json:"leads_per_100_views"`
		}
	}
	r := do(t, "GET", fmt.Sprintf("%s/stats/listings/%d", base, ref), nil, bearer(stats.Key))
	if err := json.Unmarshal(r.body, &perf); r.status != 200 || err != nil {
		t.Fatalf("listing stats: %d %s", r.status, r.body)
	}
	if perf.Totals.Views != 5 || perf.Totals.UniqueVisitors != 2 || perf.Totals.Leads != 1 || perf.Totals.LeadsPer100Views == nil ||
		*perf.Totals.LeadsPer100Views != 20 || len(perf.Days) != 30 {
		t.Errorf("listing stats %s", r.body)
	}
	if again := do(t, "GET", fmt.Sprintf("%s/stats/listings/%d", base, ref), nil, bearer(stats.Key)); again.header.Get("X-Cache") != "HIT" {
		t.Errorf("listing stats not cached at the edge: %q", again.header.Get("X-Cache"))
	}
	r = do(t, "GET", base+"/stats/listings?sort=-views&limit=5", nil, bearer(stats.Key))
	if r.status != 200 || !strings.Contains(string(r.body), fmt.Sprintf(`"listing_ref":%d`, ref)) || !strings.Contains(string(r.body), `"views":5`) {
		t.Errorf("top listings: %d %s", r.status, r.body)
	}
	if r := do(t, "GET", fmt.Sprintf("%s/stats/listings/%d", base, otherRef), nil, bearer(stats.Key)); r.status != 404 {
		t.Errorf("another site's listing through this site's stats: %d", r.status)
	}
}

// A stopped edge (SIGTERM) reports what it counted before it exits, long
// before its interval; and a report applied twice counts once.
func TestViewsFlushOnStopAndOnce(t *testing.T) {
	s := newSystem(t)
	edge := s.startEdge(edgeOpts{yaml: "views_interval: 1h\n"})
	site := s.site("enterprise")
	s.importFeed(site, feed("2024-02-01-10:00:00", "Viewed house"))
	ref := s.firstListingRef(edge.url(), site)
	beacon := s.beaconID(site)
	for i := range 3 {
		r := do(t, "POST", edge.url()+"/v1/sites/"+site+"/views?k="+beacon, []byte(fmt.Sprintf(`{"listing": %d}`, ref)),
			map[string]string{"Content-Type": "text/plain", "User-Agent": fmt.Sprintf("%s %d", chromeUA, i)})
		if r.status != 204 {
			t.Fatalf("beacon: %d %s", r.status, r.body)
		}
	}
	if views, _ := s.viewCounts(site, ref); views != 0 {
		t.Fatalf("reported before the interval: %d", views)
	}
	edge.stop()
	if views, visitors := s.viewCounts(site, ref); views != 3 || visitors != 3 {
		t.Fatalf("after SIGTERM the origin has %d views, %d visitors; want 3 and 3", views, visitors)
	}

	// The same report twice (an edge retrying after a lost answer).
	report := fmt.Sprintf(`{"batch_id": "6f1c2a8e-0000-4000-8000-0000000000e2", "edge_id": "e2e", "counts": [{"site_id": %q, "listing_ref": %d, "day": %q, "views": 4, "visitors": 1}]}`,
		site, ref, time.Now().UTC().Format(time.DateOnly))
	for range 2 {
		r := do(t, "POST", s.origin.url()+"/internal/v1/views", []byte(report),
			map[string]string{"Content-Type": "application/json", "X-Listgate-Internal-Token": token})
		if r.status != 204 {
			t.Fatalf("report: %d %s", r.status, r.body)
		}
	}
	if views, _ := s.viewCounts(site, ref); views != 7 {
		t.Errorf("after one report sent twice the origin has %d views, want 7", views)
	}
}

// An edge killed (SIGKILL) loses at most what it counted since its last
// report: every beacon of a report that reached the origin stays counted,
// and none is counted twice.
func TestViewsKilledEdgeLosesAtMostTheLastInterval(t *testing.T) {
	s := newSystem(t)
	edge := s.startEdge(edgeOpts{yaml: "views_interval: 300ms\n"})
	site := s.site("enterprise")
	s.importFeed(site, feed("2024-02-01-10:00:00", "Viewed house"))
	ref := s.firstListingRef(edge.url(), site)
	beacon := s.beaconID(site)
	send := func(from, n int) {
		for i := from; i < from+n; i++ {
			r := do(t, "POST", edge.url()+"/v1/sites/"+site+"/views?k="+beacon, []byte(fmt.Sprintf(`{"listing": %d}`, ref)),
				map[string]string{"Content-Type": "text/plain", "User-Agent": fmt.Sprintf("%s %d", chromeUA, i)})
			if r.status != 204 {
				t.Fatalf("beacon: %d %s", r.status, r.body)
			}
		}
	}
	send(0, 5)
	if views, _ := s.awaitViews(site, ref, 5); views != 5 {
		t.Fatalf("the first report: %d views, want 5", views)
	}
	// Counted, and the edge killed before (or while) it reports them.
	send(5, 4)
	edge.kill()
	views, visitors := s.viewCounts(site, ref)
	if views < 5 || views > 9 || visitors != views {
		t.Fatalf("after SIGKILL the origin has %d views, %d visitors; want 5 to 9, one visitor each", views, visitors)
	}
	t.Logf("SIGKILL lost %d of the 4 beacons counted since the last report", 9-views)
}
