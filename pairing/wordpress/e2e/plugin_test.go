package e2e

import (
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	json "github.com/goccy/go-json"

	"github.com/listgate/listgate/pkg/devbrowser"
	"github.com/listgate/listgate/pkg/devwp"
)

// env is what the steps of TestWordPressPlugin share. Earlier steps fill
// in what later ones read.
type env struct {
	lg *listgate
	wp *wordpress
	// admin is signed in to WordPress; visitor is a browser context of
	// its own that is not.
	admin, visitor *devbrowser.Browser
	// pages records what both tabs got from WordPress.
	pages []*pageRecorder
	// leadKey is the key with leads:write saved as the plugin's lead key.
	leadKey string
	// listingURL is a listing's page, where the enquiry form is.
	listingURL, listingRef string
}

// manyVisitorsPlugin raises the plugin's per-visitor limit on API calls.
const manyVisitorsPlugin = `<?php
/*
 * Plugin Name: Listgate e2e: one address, many visitors
 * Description: Written by the end-to-end test: every browser of the test has the same address.
 */
add_filter( 'listgate_visitor_api_calls_per_minute', fn() => 1000 );
`

// TestWordPressPlugin runs the plugin in a real WordPress against the real
// origin and edge: pairing from the settings page, the listings grid and
// its filters, featured listings, a listing with its images, enquiries,
// listing views counted from the listing page's beacon, stale listings
// while rate limited, no key in any page, disconnecting, uninstalling,
// and no PHP error, once with each of WordPress's HTTP
// transports (curl, and fsockopen as on hosts without PHP's curl
// extension). Each step needs the ones before it, so the first failure
// ends that transport's run.
func TestWordPressPlugin(t *testing.T) {
	devwp.Require(t)
	devbrowser.Require(t)
	for _, tr := range transports(t) {
		t.Run(tr, func(t *testing.T) { testWordPressPlugin(t, tr) })
	}
}

func testWordPressPlugin(t *testing.T, transport string) {
	start := time.Now()
	e := &env{lg: startListgate(t)}
	t.Logf("listgate up: edge %s, demo site %s (%v)", e.lg.edgeURL, e.lg.siteID, time.Since(start).Round(time.Millisecond))
	media := startMediaServer(t)
	e.wp = startWordPress(t, transport)
	t.Logf("WordPress up at %s (%v)", e.wp.URL, time.Since(start).Round(time.Millisecond))
	// Both browsers, the administrator's and the visitor's, come from
	// 127.0.0.1: to the plugin they are one visitor, who here views more
	// uncached pages a minute than one person would. TestAbusiveVisitors
	// checks the per-visitor limit.
	if err := e.wp.WriteMUPlugin("listgate-test-visitors", manyVisitorsPlugin); err != nil {
		t.Fatal(err)
	}
	e.admin = devbrowser.New(t, devbrowser.Options{Width: 1280, Height: 900, Flags: mediaFlags(t, media)})
	e.visitor = e.admin.Incognito()
	e.pages = []*pageRecorder{recordPages(e.admin, e.wp.URL), recordPages(e.visitor, e.wp.URL)}

	for _, step := range []struct {
		name string
		run  func(*testing.T, *env)
	}{
		{"connect", testConnect},
		{"grid", testGrid},
		{"filter", testFilter},
		{"featured", testFeatured},
		{"listing", testListing},
		{"enquiry", testEnquiry},
		{"views markup", testViewsMarkup},
		{"views", testViews},
		{"stale while rate limited", testStaleWhileLimited},
		{"no keys in pages", testNoKeysInPages},
		{"disconnect", testDisconnect},
		{"uninstall", testUninstall},
		{"no PHP errors", testNoPHPErrors},
	} {
		ok := t.Run(step.name, func(t *testing.T) {
			e.admin.TB, e.visitor.TB = t, t
			step.run(t, e)
		})
		e.admin.TB, e.visitor.TB = t, t
		if !ok {
			t.Fatalf("step %q failed: the later steps need it", step.name)
		}
		t.Logf("%s: done at %v", step.name, time.Since(start).Round(time.Millisecond))
	}
}

// open navigates b to url and waits until the first element that the CSS
// selector sel matches is visible.
func open(b *devbrowser.Browser, url string, sel chromedp.CSS) {
	b.TB.Helper()
	b.Do(chromedp.Navigate(url), chromedp.WaitVisible(sel))
}

// waitImages loads the images that sel matches, lazy ones included, and
// waits until each has arrived (complete, with a width): the listings'
// media come from the media server.
func waitImages(b *devbrowser.Browser, sel string) {
	b.TB.Helper()
	selJSON, _ := json.Marshal(sel)
	devbrowser.Get(b, chromedp.Poll[bool](`(() => {
		const imgs = Array.from(document.querySelectorAll(`+string(selJSON)+`));
		imgs.forEach(i => { i.loading = 'eager'; });
		return imgs.length > 0 && imgs.every(i => i.complete && i.naturalWidth > 0);
	})()`, chromedp.WithPollingTimeout(20*time.Second)))
}

// clickToLoad clicks the first element that the CSS selector sel matches
// and waits for the load of the page it leads to (after any redirects).
func clickToLoad(b *devbrowser.Browser, sel chromedp.CSS) {
	b.TB.Helper()
	devbrowser.Get(b, chromedp.WaitEvent(page.LoadEventFired, nil, chromedp.Click(sel)))
}

// evalStrings evaluates a JavaScript expression that gives a list of
// strings.
func evalStrings(b *devbrowser.Browser, js string) []string {
	b.TB.Helper()
	return devbrowser.Get(b, chromedp.Evaluate[[]string](js))
}
