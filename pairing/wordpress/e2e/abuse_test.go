package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	json "github.com/goccy/go-json"

	"github.com/listgate/listgate/pkg/devwp"
)

// visitorLimit is the plugin's default of uncached API calls one visitor
// may cause a minute (Listgate_Throttle::LIMIT).
const visitorLimit = 10

// freshPlugin makes cached responses fresh for %d seconds, so that the
// API calls a check counts are the ones its page views caused, not
// revalidations of copies that went stale while the test ran.
const freshPlugin = `<?php
/*
 * Plugin Name: Listgate e2e: freshness
 * Description: Written by the end-to-end test: cached Listgate responses are fresh for a fixed time.
 */
add_filter( 'listgate_cache_fresh_seconds', fn() => %d );
`

// cacheCapPlugin lowers the plugin's cap on cached responses to %d, so the
// test can reach it with a few page views.
const cacheCapPlugin = `<?php
/*
 * Plugin Name: Listgate e2e: small cache
 * Description: Written by the end-to-end test: at most a few cached Listgate responses.
 */
add_filter( 'listgate_cache_max_entries', fn() => %d );
`

// abuse is what the steps of TestAbusiveVisitors share.
type abuse struct {
	lg *listgate
	wp *wordpress
	// regular is the visitor at 127.0.0.1 whose pages must keep working.
	regular *visitor
	// suburbs are the filter form's suburbs, from the plugin's page.
	suburbs []string
	// total is the number of the grid's last page.
	total int
	// next numbers the loopback addresses of new visitors.
	next int
}

// TestAbusiveVisitors runs the plugin in a real WordPress against the real
// origin and edge on the Starter plan (60 requests a minute for the
// site) and has visitors, each at a loopback address of its own, send the
// query parameters a script would: 200 made-up suburbs, valid filters in a
// loop, absurd page numbers, listing references that are paths or markup,
// and listings that do not exist. It counts the API calls each causes from
// the edge's request counters and checks that another visitor's listings
// keep working, that answers for missing listings are not kept for a day,
// that the cached responses stay under their cap, and that a 429 from
// Listgate stops the plugin's calls no longer than its Retry-After while
// the last good page is still shown. It needs no browser.
func TestAbusiveVisitors(t *testing.T) {
	devwp.Require(t)
	start := time.Now()
	a := &abuse{lg: startListgate(t), next: 2}
	a.wp = startWordPress(t, transports(t)[0])
	a.regular = newVisitor(t, "127.0.0.1")
	a.pair(t)
	a.writePlugin(t, "listgate-test-fresh-hour", fmt.Sprintf(freshPlugin, 3600))
	a.lg.cli(t, nil, "sites", "set-plan", a.lg.siteID, "starter")
	a.lg.pollRead(t, "the Starter plan", a.lg.readKey, func(r *http.Response) bool {
		return r.StatusCode == http.StatusOK && r.Header.Get("X-RateLimit-Limit") == strconv.Itoa(starterLimit)
	})
	t.Logf("set up in %v", time.Since(start).Round(time.Millisecond))

	for _, step := range []struct {
		name string
		run  func(*testing.T, *abuse)
	}{
		{"grid", testAbuseGrid},
		{"made-up suburbs", testMadeUpSuburbs},
		{"valid filters in a loop", testFilterLoop},
		{"another visitor", testAnotherVisitor},
		{"absurd pages", testAbsurdPages},
		{"bogus listing refs", testBogusListingRefs},
		{"missing listing", testMissingListing},
		{"cache cap", testCacheCap},
		{"retry-after", testRetryAfter},
		{"no PHP errors", func(t *testing.T, a *abuse) { checkNoPHPErrors(t, a.wp) }},
	} {
		// Only the first step's findings are needed by the others.
		if !t.Run(step.name, func(t *testing.T) { step.run(t, a) }) && a.total == 0 {
			t.Fatalf("step %q failed: the later steps need it", step.name)
		}
		t.Logf("%s: done at %v", step.name, time.Since(start).Round(time.Millisecond))
	}
}

// pair connects the plugin the way pairing would leave it: the edge's
// address, a read-only key of the demo site, and the site's id.
func (a *abuse) pair(t *testing.T) {
	t.Helper()
	var key struct{ Key string }
	a.lg.cli(t, &key, "keys", "create", "--site", a.lg.siteID, "--name", "WordPress: abuse test",
		"--scopes", strings.Join(pairedScopes, ","), "--json")
	if _, err := a.wp.PHP(context.Background(), `update_option( 'listgate_base_url', $args['base'] );
listgate_update_private_option( 'listgate_api_key', $args['key'] );
update_option( 'listgate_site_id', $args['site'] );
if ( ! listgate_is_connected() ) {
	fwrite( STDERR, "not connected\n" );
	exit( 1 );
}`, map[string]string{"base": a.lg.edgeURL, "key": key.Key, "site": a.lg.siteID}); err != nil {
		t.Fatal(err)
	}
}

// writePlugin writes a must-use plugin of the test.
func (a *abuse) writePlugin(t *testing.T, name, code string) {
	t.Helper()
	if err := a.wp.WriteMUPlugin(name, code); err != nil {
		t.Fatal(err)
	}
}

// removePlugin removes a must-use plugin of the test. (A plugin is
// replaced by removing it and writing another file: PHP's OPcache may run
// a rewritten file's old code for a few seconds.)
func (a *abuse) removePlugin(t *testing.T, name string) {
	t.Helper()
	if err := os.Remove(filepath.Join(a.wp.Root, "wp-content", "mu-plugins", name+".php")); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
}

// newVisitor returns the visitor after the last one, at a loopback
// address no other visitor of the test has used.
func (a *abuse) newVisitor(t *testing.T) *visitor {
	t.Helper()
	a.next++
	return newVisitor(t, fmt.Sprintf("127.0.0.%d", a.next))
}

// calls returns how many API requests the edge answered while f ran.
func (a *abuse) calls(t *testing.T, f func()) int {
	t.Helper()
	n, _ := a.callsAndLimit(t, f)
	return n
}

// callsAndLimit is calls, with the most a visitor may cause while f ran:
// the plugin counts per UTC minute (fixed windows), so a loop that runs
// across a minute's end may spend one minute's calls and the next's.
func (a *abuse) callsAndLimit(t *testing.T, f func()) (n, limit int) {
	t.Helper()
	before, first := a.lg.edgeRequests(t, 0), time.Now().Unix()/60
	f()
	windows := int(time.Now().Unix()/60 - first + 1)
	return a.lg.edgeRequests(t, 0) - before, windows * visitorLimit
}

// testAbuseGrid has the regular visitor open the grid, which must show
// listings, the suburbs of the filter form and pagination.
func testAbuseGrid(t *testing.T, a *abuse) {
	p := a.regular.listings(t, a.wp, nil)
	p.mustGrid(t)
	a.suburbs = p.suburbs()
	if len(a.suburbs) < 4 {
		t.Fatalf("the filter form has %d suburbs (%q), want at least 4", len(a.suburbs), a.suburbs)
	}
	a.total = p.lastPage()
	if a.total < 2 {
		t.Fatalf("the grid has %d pages, want several", a.total)
	}
	t.Logf("%d suburbs, %d pages", len(a.suburbs), a.total)
}

// testMadeUpSuburbs has one visitor ask for 200 suburbs that the site does
// not have: it may cause no more API calls than a visitor is allowed, and
// every page still shows listings (the unknown suburb is ignored).
func testMadeUpSuburbs(t *testing.T, a *abuse) {
	v := a.newVisitor(t)
	rng := rand.New(rand.NewPCG(1, 2))
	odd := []string{"<script>alert(1)</script>", "' OR 1=1 --", strings.Repeat("Z", 300), "Zürich", "%00", "a&suburb=b"}
	var noGrid []string
	n, limit := a.callsAndLimit(t, func() {
		for i := 0; i < 200; i++ {
			suburb := odd[i%len(odd)]
			if i >= len(odd) {
				suburb = randomWord(rng)
			}
			if p := v.listings(t, a.wp, url.Values{"lg_suburb": {suburb}}); !p.hasGrid() {
				noGrid = append(noGrid, suburb)
			}
		}
	})
	t.Logf("200 made-up suburbs: %d API calls", n)
	if len(noGrid) > 0 {
		t.Errorf("%d made-up suburbs were not ignored: no grid of listings for %.200q", len(noGrid), noGrid)
	}
	if n > limit {
		t.Errorf("200 made-up suburbs caused %d API calls, want at most %d", n, limit)
	}
}

// testFilterLoop has one visitor loop over valid filters (suburb and
// bedrooms), each a new query: it may cause no more API calls than a
// visitor is allowed a minute.
func testFilterLoop(t *testing.T, a *abuse) {
	v := a.newVisitor(t)
	var tried int
	n, limit := a.callsAndLimit(t, func() {
		// The last suburb is kept for the next step.
		for _, suburb := range a.suburbs[:len(a.suburbs)-1] {
			for beds := 1; beds <= 3 && tried < 3*visitorLimit; beds++ {
				tried++
				v.listings(t, a.wp, url.Values{"lg_suburb": {suburb}, "lg_bedrooms": {strconv.Itoa(beds)}})
			}
		}
	})
	t.Logf("%d valid filter combinations: %d API calls", tried, n)
	if tried < 2*visitorLimit {
		t.Fatalf("only %d combinations to try", tried)
	}
	if n > limit {
		t.Errorf("%d valid filter combinations from one visitor caused %d API calls, want at most %d", tried, n, limit)
	}
}

// testAnotherVisitor checks that after the loops another visitor gets a
// suburb's listings (which needs an API call) and the regular visitor the
// grid.
func testAnotherVisitor(t *testing.T, a *abuse) {
	suburb := a.suburbs[len(a.suburbs)-1]
	v := a.newVisitor(t)
	var p sitePage
	n := a.calls(t, func() { p = v.listings(t, a.wp, url.Values{"lg_suburb": {suburb}}) })
	p.mustGrid(t)
	for _, s := range p.cardSuburbs() {
		if !strings.EqualFold(s, suburb) {
			t.Errorf("suburb %q: a card is in %q", suburb, s)
		}
	}
	if n < 1 {
		t.Errorf("suburb %q was shown without an API call: was it cached already?", suburb)
	}
	a.regular.listings(t, a.wp, nil).mustGrid(t)
}

// testAbsurdPages checks that page numbers past the last page show the
// last page and huge ones the first, without an API call once those two
// pages are cached.
func testAbsurdPages(t *testing.T, a *abuse) {
	last := strconv.Itoa(a.total)
	a.regular.listings(t, a.wp, url.Values{"lg_page": {last}}).mustGrid(t)
	v := a.newVisitor(t)
	for _, c := range []struct {
		page, shows string
	}{
		{strconv.Itoa(a.total + 1), last},
		{strconv.Itoa(a.total + 100), last},
		{"500", last},
		{"501", "1"},
		{"10000", "1"},
		{"99999999999999999999", "1"},
		{"-3", "1"},
		{"2e9", "1"},
	} {
		var p sitePage
		n := a.calls(t, func() { p = v.listings(t, a.wp, url.Values{"lg_page": {c.page}}) })
		if n != 0 {
			t.Errorf("lg_page=%s caused %d API calls, want none", c.page, n)
		}
		p.mustGrid(t)
		if got := p.currentPage(); got != c.shows {
			t.Errorf("lg_page=%s shows page %q, want %s", c.page, got, c.shows)
		}
	}
}

// testBogusListingRefs checks that lg_listing values that cannot be a
// listing_ref or listing_id cause no API call and show "no longer
// available".
func testBogusListingRefs(t *testing.T, a *abuse) {
	v := a.newVisitor(t)
	for _, ref := range []string{"../../stats", "../../stats/summary", "<script>alert(1)</script>", "..",
		"1.5", "a b", "x/y", "DEMO:../x", strings.Repeat("7", 100), strings.Repeat("a", 65), "%2e%2e%2fstats"} {
		var p sitePage
		n := a.calls(t, func() { p = v.listings(t, a.wp, url.Values{"lg_listing": {ref}}) })
		if n != 0 {
			t.Errorf("lg_listing=%q caused %d API calls, want none", ref, n)
		}
		if !p.has(`class="listgate-empty"`) || p.has(`class="listgate-unavailable"`) {
			t.Errorf("lg_listing=%q: the page does not say the listing is not available: %.300s", ref, p.plugin())
		}
	}
}

// testMissingListing opens a listing that does not exist: one API call
// (404), "no longer available", and no cached response kept longer than
// a minute for it.
func testMissingListing(t *testing.T, a *abuse) {
	v := a.newVisitor(t)
	before := a.cacheEntries(t)
	var p sitePage
	n := a.calls(t, func() { p = v.listings(t, a.wp, url.Values{"lg_listing": {"NO-SUCH-LISTING-404"}}) })
	if n != 1 {
		t.Errorf("a missing listing caused %d API calls, want 1", n)
	}
	if !p.has(`class="listgate-empty"`) {
		t.Errorf("a missing listing: the page does not say it is not available: %.300s", p.plugin())
	}
	after := a.cacheEntries(t)
	for name, expires := range after.Expires {
		if _, old := before.Expires[name]; old {
			continue
		}
		if left := expires - after.Now; left > 60 {
			t.Errorf("the 404 left the transient %s, expiring in %v", name, time.Duration(left)*time.Second)
		}
	}
}

// testCacheCap lowers the cap on cached responses and has visitors open
// more listings than it allows: each is shown, and the cache holds no
// more entries than the cap.
func testCacheCap(t *testing.T, a *abuse) {
	const limit, perVisitor, visitors = 10, 6, 3
	a.writePlugin(t, "listgate-test-cap", fmt.Sprintf(cacheCapPlugin, limit))
	var refs []string
	for _, n := range []string{"1", "2"} {
		p := a.regular.listings(t, a.wp, url.Values{"lg_page": {n}})
		p.mustGrid(t)
		refs = append(refs, p.cardRefs()...)
	}
	if len(refs) < perVisitor*visitors {
		t.Fatalf("%d listings on two pages, want %d", len(refs), perVisitor*visitors)
	}
	for i := 0; i < visitors; i++ {
		v := a.newVisitor(t)
		for _, ref := range refs[i*perVisitor : (i+1)*perVisitor] {
			p := v.listings(t, a.wp, url.Values{"lg_listing": {ref}})
			if !p.has(`class="listgate listgate-listing"`) {
				t.Fatalf("listing %s is not shown: %.300s", ref, p.plugin())
			}
		}
	}
	if got := len(a.cacheEntries(t).Expires); got > limit {
		t.Errorf("%d cached responses after %d listings were opened, want at most the cap %d", got, perVisitor*visitors, limit)
	}
	a.newVisitor(t).listings(t, a.wp, nil).mustGrid(t)
}

// testRetryAfter makes cached responses stale at once and uses up the
// site's minute. The regular visitor's grid is then the cached one (the
// plugin asked, got 429), the plugin stops calling Listgate no longer
// than the Retry-After, a listing never cached shows "unavailable" without
// a call, and once the Retry-After has passed it shows the listing.
func testRetryAfter(t *testing.T, a *abuse) {
	a.removePlugin(t, "listgate-test-fresh-hour")
	a.removePlugin(t, "listgate-test-cap")
	a.writePlugin(t, "listgate-test-fresh-zero", fmt.Sprintf(freshPlugin, 0))
	// What Clear cache on the settings page does: the copies cached
	// until now are fresh for an hour.
	if _, err := a.wp.PHP(context.Background(), `Listgate_Client::flush_cache();`, nil); err != nil {
		t.Fatal(err)
	}
	want := a.regular.listings(t, a.wp, nil)
	want.mustGrid(t)
	// A listing on the last page, which no step has opened.
	last := a.regular.listings(t, a.wp, url.Values{"lg_page": {strconv.Itoa(a.total)}})
	last.mustGrid(t)
	uncached := last.cardRefs()[len(last.cardRefs())-1]

	(&env{lg: a.lg}).useUpWindow(t)
	resp, _ := a.lg.get(t, "/listings", url.Values{"per_page": {"1"}})
	retryAfter, err := strconv.Atoi(resp.Header.Get("Retry-After"))
	if resp.StatusCode != http.StatusTooManyRequests || err != nil {
		t.Fatalf("the used-up site answers %d with Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	refused := a.lg.edgeRequests(t, http.StatusTooManyRequests)
	got := a.newVisitor(t).listings(t, a.wp, nil)
	if n := a.lg.edgeRequests(t, http.StatusTooManyRequests); n <= refused {
		t.Fatalf("the plugin was not refused (%d 429s before the page view, %d after): did it ask at all?", refused, n)
	}
	got.mustGrid(t)
	if g, w := strings.Join(got.cardRefs(), ","), strings.Join(want.cardRefs(), ","); g != w {
		t.Errorf("while limited the grid shows %s, want the last good one %s", g, w)
	}
	out, err := a.wp.PHP(context.Background(), `echo (int) get_transient( 'listgate_backoff' ) - time();`, nil)
	if err != nil {
		t.Fatal(err)
	}
	if wait, err := strconv.Atoi(out); err != nil || wait > retryAfter+1 {
		t.Errorf("the plugin waits %q s, longer than the Retry-After %d", out, retryAfter)
	}

	v := a.newVisitor(t)
	var p sitePage
	if n := a.calls(t, func() { p = v.listings(t, a.wp, url.Values{"lg_listing": {uncached}}) }); n != 0 {
		t.Errorf("while waiting for Retry-After the plugin made %d API calls", n)
	}
	if !p.has(`class="listgate-unavailable"`) {
		t.Errorf("an uncached listing while limited: %.300s", p.plugin())
	}

	time.Sleep(time.Duration(retryAfter+1) * time.Second)
	deadline := time.Now().Add(15 * time.Second)
	for {
		p = a.newVisitor(t).listings(t, a.wp, url.Values{"lg_listing": {uncached}})
		if p.has(`class="listgate listgate-listing"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("listing %s is still not shown %v after the Retry-After: %.300s", uncached, 15*time.Second, p.plugin())
		}
		time.Sleep(time.Second)
	}
}

// cacheEntries are the plugin's cached responses (transients
// listgate_c_*): their expiry by name, and the database's time.
type cacheEntries struct {
	Now     int64            `json:"now"`
	Expires map[string]int64 `json:"expires"`
}

// cacheEntries reads the plugin's cached responses from the options table
// (the site has no persistent object cache).
func (a *abuse) cacheEntries(t *testing.T) cacheEntries {
	t.Helper()
	out, err := a.wp.PHP(context.Background(), `global $wpdb;
$rows = $wpdb->get_results( $wpdb->prepare( "SELECT option_name, option_value FROM {$wpdb->options} WHERE option_name LIKE %s",
	$wpdb->esc_like( '_transient_timeout_listgate_c_' ) . '%' ), ARRAY_A );
$expires = new stdClass();
foreach ( $rows as $row ) {
	$expires->{ substr( $row['option_name'], strlen( '_transient_timeout_' ) ) } = (int) $row['option_value'];
}
echo wp_json_encode( array( 'now' => time(), 'expires' => $expires ) );`, nil)
	if err != nil {
		t.Fatal(err)
	}
	var c cacheEntries
	if err := json.Unmarshal([]byte(out), &c); err != nil {
		t.Fatalf("cache entries: %q: %v", out, err)
	}
	return c
}

// randomWord returns a made-up suburb name.
func randomWord(rng *rand.Rand) string {
	const letters = "abcdefghijklmnopqrstuvwxyz"
	b := make([]byte, 6+rng.IntN(10))
	for i := range b {
		b[i] = letters[rng.IntN(len(letters))]
	}
	b[0] -= 'a' - 'A'
	return string(b)
}
