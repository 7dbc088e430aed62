package e2e

import (
	"context"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	json "github.com/goccy/go-json"

	"github.com/listgate/listgate/pkg/devbrowser"
	"github.com/listgate/listgate/pkg/model"
)

// viewsInterval is how often the tests' edges report counted views to the
// origin (LISTGATE_VIEWS_INTERVAL, set by TestMain): short, so a view
// reaches Postgres moments after its beacon.
const viewsInterval = "250ms"

// botUserAgent is a crawler's User-Agent, whose views are not counted.
const botUserAgent = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"

// beacons records the answers to a tab's view beacons (POST .../views and
// the pixel, GET .../views.gif) as DevTools' Network domain reports them.
type beacons struct {
	prefix string
	mu     sync.Mutex
	seen   []string // "METHOD STATUS" of each answered beacon, in order
	wake   chan struct{}
}

// recordBeacons starts recording b's beacons to the edge at edgeURL.
func recordBeacons(b *devbrowser.Browser, edgeURL, site string) *beacons {
	b.TB.Helper()
	r := &beacons{prefix: edgeURL + "/v1/sites/" + site + "/views", wake: make(chan struct{}, 1)}
	methods := map[network.RequestID]string{}
	err := chromedp.Listen(b.Ctx, func(ev any) {
		switch ev := ev.(type) {
		case *network.EventRequestWillBeSent:
			if strings.HasPrefix(ev.Request.URL, r.prefix) {
				r.mu.Lock()
				methods[ev.RequestID] = ev.Request.Method
				r.mu.Unlock()
			}
		case *network.EventResponseReceived:
			if strings.HasPrefix(ev.Response.URL, r.prefix) {
				r.mu.Lock()
				r.seen = append(r.seen, methods[ev.RequestID]+" "+strconv.FormatInt(ev.Response.Status, 10))
				r.mu.Unlock()
				select {
				case r.wake <- struct{}{}:
				default:
				}
			}
		}
	})
	if err != nil {
		b.TB.Fatal(err)
	}
	return r
}

// count is how many beacons have been answered.
func (r *beacons) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.seen)
}

// await waits until the beacon after the first n has been answered and
// returns its "METHOD STATUS", failing tb after 10 s.
func (r *beacons) await(tb testing.TB, n int) string {
	tb.Helper()
	deadline := time.After(10 * time.Second)
	for {
		r.mu.Lock()
		if len(r.seen) > n {
			s := r.seen[n]
			r.mu.Unlock()
			return s
		}
		r.mu.Unlock()
		select {
		case <-r.wake:
		case <-deadline:
			tb.Fatalf("no view beacon answered within 10 s (%d before)", n)
		}
	}
}

// viewsRow returns the listing's views and visitors in Postgres today,
// summed over the days stored (a listing viewed only in this test has one).
func (l *listgate) viewsRow(tb testing.TB, ref string) (views, visitors int64) {
	tb.Helper()
	l.query(tb, `SELECT coalesce(sum(views), 0), coalesce(sum(visitors), 0) FROM listing_views WHERE site_id = $1 AND listing_ref = $2`,
		[]any{l.siteID, ref}, &views, &visitors)
	return views, visitors
}

// awaitViews waits until Postgres holds at least want views of the
// listing (the edge reports every viewsInterval) and returns its figures,
// failing tb after 10 s.
func (l *listgate) awaitViews(tb testing.TB, ref string, want int64) (views, visitors int64) {
	tb.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		views, visitors = l.viewsRow(tb, ref)
		if views >= want {
			return views, visitors
		}
		if time.Now().After(deadline) {
			tb.Fatalf("listing %s has %d views in Postgres 10 s on, want %d", ref, views, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// awaitFreshDay waits, when less than need is left of the current date in
// the site's time zone, until the next date has begun there: the views a
// test counts and the stats of "today" it reads them back from must fall
// on one date of the site's. Near midnight there (13:00 or 14:00 UTC for
// Australia/Sydney) a view counted before it and the stats read after it
// were a day apart.
func (l *listgate) awaitFreshDay(tb testing.TB, need time.Duration) {
	tb.Helper()
	var tz string
	l.query(tb, `SELECT timezone FROM sites WHERE id = $1`, []any{l.siteID}, &tz)
	zone, err := time.LoadLocation(tz)
	if err != nil {
		tb.Fatalf("site time zone %q: %v", tz, err)
	}
	now := time.Now().In(zone)
	y, m, d := now.Date()
	if left := time.Date(y, m, d+1, 0, 0, 0, 0, zone).Sub(now); left < need {
		tb.Logf("%v left of %s in %s: waiting for the next date", left.Round(time.Second), now.Format(time.DateOnly), tz)
		time.Sleep(left + time.Second)
	}
}

// performance is GET /stats/listings/{ref} with q, which must answer 200.
func (l *listgate) performance(tb testing.TB, ref string, q url.Values) model.ListingPerformance {
	tb.Helper()
	resp, body := l.get(tb, "/stats/listings/"+ref, q)
	var p model.ListingPerformance
	if resp.StatusCode != 200 || json.Unmarshal(body, &p) != nil {
		tb.Fatalf("stats of listing %s %v: %d %.300s", ref, q, resp.StatusCode, body)
	}
	return p
}

// checkToday checks that p's last day is today in the site's time zone and
// has views and visitors, as its totals do.
func checkToday(tb testing.TB, p model.ListingPerformance, views, visitors int64) {
	tb.Helper()
	zone, err := time.LoadLocation(p.Timezone)
	if err != nil {
		tb.Fatalf("stats time zone %q: %v", p.Timezone, err)
	}
	today := time.Now().In(zone).Format(time.DateOnly)
	if p.To != today || len(p.Days) == 0 {
		tb.Fatalf("stats period %s to %s with %d days, want it to end today in %s (%s)", p.From, p.To, len(p.Days), p.Timezone, today)
	}
	last := p.Days[len(p.Days)-1]
	if last.Date != today || last.Views != views || last.UniqueVisitors != visitors {
		tb.Errorf("stats of %s: %+v, want %d views and %d unique visitors", today, last, views, visitors)
	}
	if p.Totals.Views != views || p.Totals.UniqueVisitors != visitors {
		tb.Errorf("stats totals %+v, want %d views and %d unique visitors", p.Totals, views, visitors)
	}
}

// beaconMarkup counts the page's view beacon scripts and pixels.
func beaconMarkup(b *devbrowser.Browser) int {
	b.TB.Helper()
	return devbrowser.Get(b, chromedp.Evaluate[int](`document.querySelectorAll('script[id^="listgate-view-"]').length +
		Array.from(document.querySelectorAll('noscript')).filter(n => n.textContent.includes('/views.gif')).length`))
}

// testViews is the vendor report's path end to end: a visitor's view of a
// listing page in Chromium sends the beacon, the edge counts it and reports
// it to the origin, and the stats API and the plugin's dashboard widget
// show it; the same browser's second view (without JavaScript, through the
// <noscript> pixel) is a view but no new visitor; a crawler's view and the
// administrator's are not counted; with the switch off the page has no
// beacon.
func testViews(t *testing.T, e *env) {
	start := time.Now()
	var beaconID struct {
		BeaconID string `json:"beacon_id"`
	}
	e.lg.cli(t, &beaconID, "sites", "beacon-id", e.lg.siteID, "--json")
	var stored string
	e.wp.option(t, "listgate_beacon_id", &stored)
	if stored == "" || stored != beaconID.BeaconID {
		t.Fatalf("the plugin's beacon id is %q, want the site's %q (delivered by pairing)", stored, beaconID.BeaconID)
	}

	// A listing nobody has viewed yet: earlier steps viewed others.
	var ref string
	for _, r := range refsOf(e.lg.listings(t, url.Values{"per_page": {strconv.Itoa(perPage)}})) {
		if v, _ := e.lg.viewsRow(t, r); v == 0 && r != e.listingRef {
			ref = r
			break
		}
	}
	if ref == "" {
		t.Fatal("every listing of the first page has views already")
	}
	pageURL := e.wp.listingsURL + "?lg_listing=" + ref
	listingSel := chromedp.CSS(`div.listgate-listing[data-listing-ref="` + ref + `"]`)

	// The administrator (who can edit posts) gets no beacon.
	open(e.admin, pageURL, listingSel)
	if n := beaconMarkup(e.admin); n != 0 {
		t.Errorf("the administrator's listing page has %d beacon elements, want none", n)
	}

	// From the first view to the top listings of "today", one date of
	// the site's (this part takes seconds).
	e.lg.awaitFreshDay(t, 2*time.Minute)

	// A visitor's first view: the script sends the beacon after load.
	v := e.visitor
	rec := recordBeacons(v, e.lg.edgeURL, e.lg.siteID)
	n := rec.count()
	open(v, pageURL, listingSel)
	if got := beaconMarkup(v); got != 2 {
		t.Errorf("the visitor's listing page has %d beacon elements, want the script and the pixel", got)
	}
	if got := rec.await(t, n); got != "POST 204" {
		t.Fatalf("the view beacon was answered %q, want POST 204", got)
	}
	views, visitors := e.lg.awaitViews(t, ref, 1)
	if views != 1 || visitors != 1 {
		t.Fatalf("after one view Postgres has %d views and %d visitors, want 1 and 1", views, visitors)
	}
	first := e.lg.performance(t, ref, nil)
	checkToday(t, first, 1, 1)
	t.Logf("first view in the stats API at %v", time.Since(start).Round(time.Millisecond))

	// A crawler's view, in a tab of its own: answered, not counted.
	bot := e.admin.Incognito()
	botRec := recordBeacons(bot, e.lg.edgeURL, e.lg.siteID)
	if _, err := chromedp.Call(bot.Ctx, emulation.SetUserAgentOverride, emulation.SetUserAgentOverrideParams{UserAgent: botUserAgent}); err != nil {
		t.Fatal(err)
	}
	open(bot, pageURL, listingSel)
	if got := botRec.await(t, 0); got != "POST 204" {
		t.Fatalf("the crawler's beacon was answered %q, want POST 204", got)
	}

	// The visitor's second view, JavaScript off: the <noscript> pixel.
	if _, err := chromedp.Call(v.Ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true}); err != nil {
		t.Fatal(err)
	}
	n = rec.count()
	devbrowser.Get(v, chromedp.WaitEvent(page.LoadEventFired, nil, chromedp.Navigate(pageURL)))
	got := rec.await(t, n)
	if _, err := chromedp.Call(v.Ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: false}); err != nil {
		t.Fatal(err)
	}
	if got != "GET 200" {
		t.Fatalf("the pixel was answered %q, want GET 200", got)
	}
	// The crawler's beacon was answered before this view's pixel was
	// sent, so a report with the pixel's view has the crawler's too.
	views, visitors = e.lg.awaitViews(t, ref, 2)
	if views != 2 || visitors != 1 {
		t.Fatalf("after a second view and a crawler's Postgres has %d views and %d visitors, want 2 and 1", views, visitors)
	}
	// Other queries than before: the edge caches stats for 30 s.
	today := first.To
	checkToday(t, e.lg.performance(t, ref, url.Values{"from": {today}, "to": {today}}), 2, 1)
	resp, body := e.lg.get(t, "/stats/listings", url.Values{"sort": {"-views"}, "from": {today}, "limit": {"100"}})
	var top model.TopListings
	if resp.StatusCode != 200 || json.Unmarshal(body, &top) != nil {
		t.Fatalf("top listings: %d %.300s", resp.StatusCode, body)
	}
	found := false
	for _, l := range top.Data {
		if strconv.FormatInt(l.ListingRef, 10) == ref {
			found = l.Views == 2 && l.UniqueVisitors == 1
		}
	}
	if !found {
		t.Errorf("top listings of %s: %.500s, want listing %s with 2 views and 1 visitor", today, body, ref)
	}

	t.Logf("views counted and in the stats API at %v", time.Since(start).Round(time.Millisecond))

	// The vendor report in Listgate's dashboard.
	checkVendorReport(t, e, ref, "2", "1")
	t.Logf("vendor report checked at %v", time.Since(start).Round(time.Millisecond))

	// The plugin's dashboard widget: the site's top listings this week.
	open(e.admin, e.wp.URL+"/wp-admin/index.php", `#listgate_top_listings`)
	row := `#listgate_top_listings tr.listgate-top-row[data-listing-ref="` + ref + `"]`
	e.admin.Do(chromedp.WaitVisible(chromedp.CSS(row)))
	cells := evalStrings(e.admin, `Array.from(document.querySelectorAll('`+row+` td.num'), c => c.textContent.trim())`)
	if strings.Join(cells, " ") != "2 1 0" {
		t.Errorf("the widget's row of listing %s: %q, want views 2, visitors 1, enquiries 0", ref, cells)
	}
	e.admin.ScreenshotOf("wordpress-top-listings", `#listgate_top_listings`)
	t.Logf("dashboard widget checked at %v", time.Since(start).Round(time.Millisecond))

	// Switched off on the settings page: no beacon markup at all.
	open(e.admin, e.settingsURL(), `#listgate_views_enabled`)
	if !devbrowser.Get(e.admin, chromedp.Evaluate[bool](`document.querySelector('#listgate_views_enabled').checked`)) {
		t.Error("counting views is not on by default")
	}
	e.admin.Do(chromedp.Click(chromedp.CSS(`#listgate_views_enabled`)))
	clickToLoad(e.admin, `#listgate-save`)
	var on string
	if e.wp.option(t, "listgate_views_enabled", &on); on != "0" {
		t.Fatalf("listgate_views_enabled is %q after unticking it, want 0", on)
	}
	open(v, pageURL, listingSel)
	if html := devbrowser.Get(v, chromedp.Evaluate[string](`document.documentElement.outerHTML`)); strings.Contains(html, "/views") || beaconMarkup(v) != 0 {
		t.Error("with counting switched off the listing page still has beacon markup")
	}
	if _, err := e.wp.PHP(context.Background(), `update_option( 'listgate_views_enabled', '1' );`, nil); err != nil {
		t.Fatal(err)
	}
}

// checkVendorReport signs in to Listgate's dashboard as the site's staff
// (testFeatured's user), in a browser context of its own, and checks that
// the listing's printable vendor report has the views and unique visitors
// since listed.
func checkVendorReport(t *testing.T, e *env, ref, views, visitors string) {
	t.Helper()
	staff := e.admin.Incognito()
	staff.Do(chromedp.Navigate(e.lg.edgeURL+"/dashboard/login"),
		chromedp.WaitVisible(chromedp.CSS(`#email`)),
		chromedp.SetValue(chromedp.CSS(`#email`), staffEmail),
		chromedp.SetValue(chromedp.CSS(`#password`), staffPassword))
	clickToLoad(staff, `#sign-in`)
	open(staff, e.lg.edgeURL+"/dashboard/sites/"+e.lg.siteID+"/listings/"+ref+"/report", `#report-totals`)
	got := evalStrings(staff, `['views', 'visitors'].map(k => document.querySelector('#report-totals dd[data-total="' + k + '"]').textContent.trim())`)
	if len(got) != 2 || got[0] != views || got[1] != visitors {
		t.Errorf("the vendor report of listing %s shows views and visitors %q, want %s and %s", ref, got, views, visitors)
	}
}

// viewsMarkupScript renders the beacon markup and the top listings widget
// in the site under test, in the cases their tests need, and prints each
// output by case as JSON. It restores every option it changes.
const viewsMarkupScript = `
require_once ABSPATH . 'wp-admin/includes/user.php';
require_once ABSPATH . 'wp-admin/includes/class-wp-screen.php';
require_once ABSPATH . 'wp-admin/includes/screen.php';
$site   = get_option( 'listgate_site_id' );
$beacon = get_option( 'listgate_beacon_id' );
$out    = array( 'site' => $site, 'beacon' => $beacon, 'sites' => listgate_api_url( 'sites' ) );
wp_set_current_user( 0 );
$out['on']         = Listgate_Views::markup( 101 );
$out['again']      = Listgate_Views::markup( 101 );
$out['string_ref'] = Listgate_Views::markup( '102' );
$out['bad_ref']    = Listgate_Views::markup( '103"><b>' );
update_option( 'listgate_views_enabled', '0' );
$out['off'] = Listgate_Views::markup( 104 );
ob_start();
Listgate_Views::render_top_listings( array( 'error' => '', 'data' => array( 'data' => array() ) ) );
$out['widget_off'] = ob_get_clean();
update_option( 'listgate_views_enabled', '1' );
delete_option( 'listgate_beacon_id' );
$out['no_beacon'] = Listgate_Views::markup( 105 );
update_option( 'listgate_beacon_id', 'lgk_"><script>alert(0)</script>' );
$out['bad_beacon'] = Listgate_Views::markup( 106 );
update_option( 'listgate_beacon_id', $beacon );
wp_set_current_user( 1 );
$out['administrator'] = Listgate_Views::markup( 107 );
$editor = wp_insert_user( array( 'user_login' => 'lg-editor', 'user_pass' => wp_generate_password(), 'role' => 'editor', 'user_email' => 'lg-editor@agency.example' ) );
$subscriber = wp_insert_user( array( 'user_login' => 'lg-subscriber', 'user_pass' => wp_generate_password(), 'role' => 'subscriber', 'user_email' => 'lg-subscriber@agency.example' ) );
wp_set_current_user( $editor );
$out['editor'] = Listgate_Views::markup( 108 );
wp_set_current_user( $subscriber );
$out['subscriber'] = Listgate_Views::markup( 109 );
wp_set_current_user( 0 );
wp_delete_user( $editor );
wp_delete_user( $subscriber );
add_filter( 'listgate_count_view', '__return_false' );
$out['filtered'] = Listgate_Views::markup( 110 );
remove_filter( 'listgate_count_view', '__return_false' );
$GLOBALS['wp_query']->is_preview = true;
$out['preview'] = Listgate_Views::markup( 111 );
$GLOBALS['wp_query']->is_preview = false;
set_current_screen( 'dashboard' );
$out['admin_page'] = Listgate_Views::markup( 112 );
$GLOBALS['current_screen'] = null;
update_option( 'listgate_site_id', 'x"><script>alert(1)</script>' );
$_SERVER['REQUEST_URI'] = '/listings/"><svg onload=alert(2)>/?lg_listing=113';
$out['hostile'] = Listgate_Views::markup( 113 );
update_option( 'listgate_site_id', $site );
$out['unchanged'] = wp_json_encode( array( get_option( 'listgate_site_id' ), get_option( 'listgate_beacon_id' ), get_option( 'listgate_views_enabled' ) ) );

// The settings page's check of a beacon id entered by hand.
$check = new ReflectionMethod( 'Listgate_Settings', 'check_beacon_id' );
$check->setAccessible( true );
$out['check_beacon']     = $check->invoke( null, $beacon );
$out['check_paired_key'] = $check->invoke( null, get_option( 'listgate_api_key' ) );
$out['check_read_key']   = $check->invoke( null, $args['read_key'] );
$out['check_unknown']    = $check->invoke( null, 'lgk_' . str_repeat( 'a', 36 ) );
$out['check_malformed']  = $check->invoke( null, 'lgk_"><b>' );

$cases = array(
	'table'        => array( 'error' => '', 'data' => array(
		'data' => array(
			array( 'listing_ref' => 7, 'headline' => '<img src=x onerror=alert(3)> Sea views', 'views' => 1234, 'unique_visitors' => 987, 'leads' => 5 ),
			array( 'listing_ref' => 8, 'headline' => null, 'views' => 2, 'unique_visitors' => 1, 'leads' => 0 ),
		),
		'meta' => array( 'from' => '2026-11-20', 'to' => '2026-11-26' ),
	) ),
	'empty'        => array( 'error' => '', 'data' => array( 'data' => array(), 'meta' => array() ) ),
	'unauthorized' => array( 'error' => 'unauthorized', 'data' => null ),
	'unavailable'  => array( 'error' => 'unavailable', 'data' => null ),
	'not_connected' => array( 'error' => 'not_connected', 'data' => null ),
);
foreach ( $cases as $name => $result ) {
	ob_start();
	Listgate_Views::render_top_listings( $result );
	$out[ 'widget_' . $name ] = ob_get_clean();
}
echo wp_json_encode( $out );`

// testViewsMarkup checks the beacon markup and the widget's rendering in
// the connected site: the markup for visitors (and logged-in subscribers)
// with the site, beacon id and listing in it, escaped; none with the
// switch off, without a valid beacon id, for an administrator or editor,
// on admin pages and previews, when filtered out, or twice for one
// listing; a beacon id entered by hand refused unless Listgate says it is
// the site's; the widget's table escaped, and each of its failures.
func testViewsMarkup(t *testing.T, e *env) {
	raw, err := e.wp.PHP(context.Background(), viewsMarkupScript, map[string]string{"read_key": e.lg.readKey})
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]string
	if err := json.Unmarshal([]byte(raw), &out); err != nil {
		t.Fatalf("%v: %.500s", err, raw)
	}
	site, beacon, sites := out["site"], out["beacon"], out["sites"]
	if site != e.lg.siteID || !strings.HasPrefix(beacon, "lgk_") || sites != e.lg.edgeURL+"/v1/sites" {
		t.Fatalf("site %q, beacon id %q, API %q", site, beacon, sites)
	}
	if out["unchanged"] != `["`+site+`","`+beacon+`","1"]` {
		t.Errorf("the script left the options %s", out["unchanged"])
	}

	// The beacon for a visitor: the script's settings and the pixel.
	on := out["on"]
	if !strings.Contains(on, `<script id="listgate-view-101"`) {
		t.Fatalf("no beacon script for a visitor: %q", on)
	}
	cfgStart := strings.Index(on, "var c=")
	cfgEnd := strings.Index(on, ",w=window")
	var cfg struct {
		URL, Pixel string
		Listing    int64
	}
	if cfgStart < 0 || cfgEnd < cfgStart || json.Unmarshal([]byte(on[cfgStart+len("var c="):cfgEnd]), &cfg) != nil {
		t.Fatalf("the beacon script's settings cannot be read: %q", on)
	}
	base := sites + "/" + site
	if cfg.URL != base+"/views?k="+beacon || cfg.Pixel != base+"/views.gif?k="+beacon+"&listing=101" || cfg.Listing != 101 {
		t.Errorf("beacon settings %+v", cfg)
	}
	for _, want := range []string{"navigator.sendBeacon", "requestIdleCallback", `addEventListener("load"`,
		`<noscript><img class="listgate-view-pixel" src="` + base + `/views.gif?k=` + beacon + `&#038;listing=101&#038;path=%2F" alt="" width="1" height="1" hidden></noscript>`} {
		if !strings.Contains(on, want) {
			t.Errorf("the beacon markup lacks %q: %s", want, on)
		}
	}
	if strings.Contains(on, "src=\""+base+"/views?") || strings.Contains(on, "<script src") || strings.Contains(on, "document.cookie") {
		t.Errorf("the beacon markup loads a file or touches cookies: %s", on)
	}
	for _, c := range []struct{ name, id string }{{"string_ref", "102"}, {"subscriber", "109"}, {"hostile", "113"}} {
		if !strings.Contains(out[c.name], `id="listgate-view-`+c.id+`"`) {
			t.Errorf("%s: no beacon markup: %q", c.name, out[c.name])
		}
	}
	for _, name := range []string{"again", "bad_ref", "off", "no_beacon", "bad_beacon", "administrator", "editor", "filtered", "preview", "admin_page"} {
		if out[name] != "" {
			t.Errorf("%s: beacon markup %q, want none", name, out[name])
		}
	}
	if h := out["hostile"]; strings.Contains(h, "<script>alert") || strings.Contains(h, "<svg") || strings.Contains(h, `"><`) {
		t.Errorf("hostile site id and path are not escaped: %s", h)
	}

	// A beacon id entered by hand is stored only when Listgate says it is
	// this site's (a HEAD of the pixel, which counts nothing).
	if out["check_beacon"] != "" {
		t.Errorf("the site's beacon id is refused: %q", out["check_beacon"])
	}
	for name, want := range map[string]string{"check_paired_key": "secret key", "check_read_key": "not this site's beacon id",
		"check_unknown": "does not know", "check_malformed": "not a beacon id"} {
		if !strings.Contains(out[name], want) {
			t.Errorf("%s: %q, want it refused (%q)", name, out[name], want)
		}
	}

	// The widget.
	table := out["widget_table"]
	for _, want := range []string{`data-listing-ref="7"`, "&lt;img src=x onerror=alert(3)&gt; Sea views", "1,234", "987",
		`data-listing-ref="8"`, "Listing 8", "Views from 2026-11-20 to 2026-11-26"} {
		if !strings.Contains(table, want) {
			t.Errorf("the widget's table lacks %q: %s", want, table)
		}
	}
	if strings.Contains(table, "<img") || strings.Contains(table, "listgate-views-off") {
		t.Errorf("the widget's table: %s", table)
	}
	for name, want := range map[string]string{"widget_empty": "listgate-top-empty", "widget_unauthorized": "refused this site",
		"widget_unavailable": "cannot be read right now", "widget_not_connected": "not connected", "widget_off": "listgate-views-off"} {
		if !strings.Contains(out[name], want) {
			t.Errorf("%s lacks %q: %s", name, want, out[name])
		}
	}
}
