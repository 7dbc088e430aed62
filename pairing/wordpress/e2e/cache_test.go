package e2e

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/listgate/listgate/pkg/devbrowser"
)

// freshZeroPlugin is the must-use plugin that makes every cached response
// stale at once, so each page view asks Listgate again.
const freshZeroPlugin = `<?php
/*
 * Plugin Name: Listgate e2e: no freshness
 * Description: Written by the end-to-end test: every cached Listgate response is revalidated.
 */
add_filter( 'listgate_cache_fresh_seconds', fn() => 0 );
`

// starterLimit is the Starter plan's requests per minute (DESIGN.md §4).
const starterLimit = 60

// limitedTime is how much of a used-up rate-limit window the checks that
// need it get at least.
const limitedTime = 15 * time.Second

// testStaleWhileLimited makes cached responses stale at once, checks that a
// page view revalidates them (the edge answers 304), then puts the demo
// site on the Starter plan and uses up its minute. While it is used up,
// the Listings page still shows the same cards from the plugin's cache, a
// listing never cached shows .listgate-unavailable, and an enquiry is
// refused with the retry notice, its input kept and no lead stored.
func testStaleWhileLimited(t *testing.T, e *env) {
	if err := e.wp.WriteMUPlugin("listgate-test", freshZeroPlugin); err != nil {
		t.Fatal(err)
	}
	a := e.admin
	open(a, e.settingsURL(), `#listgate-clear-cache`)
	before := e.wp.optionInt(t, "listgate_cache_version")
	clickToLoad(a, `#listgate-clear-cache`)
	a.Do(chromedp.WaitVisible(chromedp.CSS(`#listgate-connected`)))
	if after := e.wp.optionInt(t, "listgate_cache_version"); after <= before {
		t.Errorf("listgate_cache_version %d after Clear cache, was %d", after, before)
	}

	b := e.visitor
	// Featuring listings changed their order since the grid step.
	want := refsOf(e.lg.listings(t, url.Values{"per_page": {strconv.Itoa(perPage)}}))
	// A listing the plugin has not read: the first of the second page.
	uncached := refsOf(e.lg.listings(t, url.Values{"per_page": {strconv.Itoa(perPage)}, "page": {"2"}}))[0]
	grid := func() {
		t.Helper()
		open(b, e.wp.listingsURL, `div.listgate-grid article.listgate-card`)
		checkNoFailure(t, b)
		if got := cardRefs(cards(b)); !slices.Equal(got, want) {
			t.Fatalf("cards %q, want %q", got, want)
		}
	}
	grid() // fills the emptied cache, already stale
	open(b, e.listingURL, submitButton)
	notModified := e.lg.edgeRequests(t, http.StatusNotModified)
	grid()
	if n := e.lg.edgeRequests(t, http.StatusNotModified); n <= notModified {
		t.Errorf("revalidating the stale cache got no 304 from the edge (%d before, %d after): no If-None-Match?", notModified, n)
	}

	e.lg.cli(t, nil, "sites", "set-plan", e.lg.siteID, "starter")
	e.useUpWindow(t)
	refused := e.lg.edgeRequests(t, http.StatusTooManyRequests)
	grid()
	if n := e.lg.edgeRequests(t, http.StatusTooManyRequests); n <= refused {
		t.Errorf("the plugin was not refused (%d 429s before the page view, %d after): did it ask at all?", refused, n)
	}

	open(b, e.wp.listingsURL+"?lg_listing="+uncached, `.listgate-unavailable`)

	open(b, e.listingURL, submitButton)
	const email = "limited.buyer@example.com"
	b.Do(chromedp.SendKeys(nameInput, "Lee Limited"), chromedp.SendKeys(emailInput, email),
		chromedp.SendKeys(messageInput, "Sent while the site is rate limited."))
	clickToLoad(b, submitButton)
	b.Do(chromedp.WaitVisible(chromedp.CSS(`div.listgate-notice-retry`)))
	if v := devbrowser.Get(b, chromedp.Value(emailInput)); v != email {
		t.Errorf("after the retry notice the e-mail input holds %q", v)
	}
	var leads int
	e.lg.query(t, `SELECT count(*) FROM leads WHERE site_id = $1 AND email_norm = $2`, []any{e.lg.siteID, email}, &leads)
	if leads != 0 {
		t.Errorf("%d leads from an enquiry refused with 429", leads)
	}
}

// useUpWindow sends listing reads with the demo read key until the edge
// refuses one (429) under the Starter limit, in a window with at least
// limitedTime left: closer to the window's end, it waits for the next
// window and starts again.
func (e *env) useUpWindow(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		resp := e.readUntilRefused(t)
		left, err := strconv.Atoi(resp.Header.Get("Retry-After"))
		if err != nil {
			t.Fatalf("429 with Retry-After %q", resp.Header.Get("Retry-After"))
		}
		if time.Duration(left)*time.Second >= limitedTime {
			return
		}
		// Too close to the end: poll (429s do not count) until the next
		// window lets a request through.
		for time.Now().Before(deadline) {
			if r, _ := e.lg.get(t, "/listings", url.Values{"per_page": {"1"}}); r.StatusCode == http.StatusOK {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	t.Fatal("could not use up a rate-limit window with time left")
}

// readUntilRefused reads until the edge answers 429 with the Starter limit
// (the plan change reaches the edge through the origin's event stream)
// and returns that answer.
func (e *env) readUntilRefused(t *testing.T) *http.Response {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for n := 0; ; n++ {
		resp, body := e.lg.get(t, "/listings", url.Values{"per_page": {"1"}})
		limit := resp.Header.Get("X-RateLimit-Limit")
		if resp.StatusCode == http.StatusTooManyRequests && limit == strconv.Itoa(starterLimit) {
			return resp
		}
		if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusTooManyRequests {
			t.Fatalf("listings: %d %.300s", resp.StatusCode, body)
		}
		if time.Now().After(deadline) {
			t.Fatalf("no 429 under the Starter limit after %d requests (last: %d, X-RateLimit-Limit %q)", n, resp.StatusCode, limit)
		}
	}
}
