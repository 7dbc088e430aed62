package e2e

import (
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/listgate/listgate/pkg/devbrowser"
	"github.com/listgate/listgate/pkg/model"
)

// perPage is the Listings page's [listgate_listings per_page="12"].
const perPage = 12

// refsOf returns the listing refs of c's page, as the cards carry them.
func refsOf(c model.Collection[model.Listing]) []string {
	refs := make([]string, len(c.Data))
	for i, l := range c.Data {
		refs[i] = strconv.FormatInt(l.ListingRef, 10)
	}
	return refs
}

// card is what the test reads of one article.listgate-card.
type card struct {
	Ref    string `json:"ref"`
	Suburb string `json:"suburb"`
	Link   string `json:"link"`
}

// cards reads the cards of the page's grids.
func cards(b *devbrowser.Browser) []card {
	b.TB.Helper()
	return devbrowser.Get(b, chromedp.Evaluate[[]card](`Array.from(document.querySelectorAll('.listgate-grid article.listgate-card'), a => ({
		ref: a.dataset.listingRef || "",
		suburb: (a.querySelector('.listgate-card-suburb') || {textContent: ""}).textContent.trim(),
		link: (a.querySelector('a.listgate-card-link') || {href: ""}).href,
	}))`))
}

// cardRefs returns the refs of cs.
func cardRefs(cs []card) []string {
	refs := make([]string, len(cs))
	for i, c := range cs {
		refs[i] = c.Ref
	}
	return refs
}

// checkNoFailure fails tb when the page says the listings are unavailable.
func checkNoFailure(tb testing.TB, b *devbrowser.Browser) {
	tb.Helper()
	if n := devbrowser.Get(b, chromedp.Evaluate[int](`document.querySelectorAll('.listgate-unavailable').length`)); n != 0 {
		tb.Fatalf("the page shows .listgate-unavailable: %.500s", devbrowser.Get(b, chromedp.Text(chromedp.CSS(`.listgate-unavailable`))))
	}
}

// testGrid checks that a visitor sees the API's first page of listings,
// with the filter form and pagination, each card linking to its listing on
// the same page and its photo loaded.
func testGrid(t *testing.T, e *env) {
	want := e.lg.listings(t, url.Values{"per_page": {strconv.Itoa(perPage)}})
	b := e.visitor
	open(b, e.wp.listingsURL, `div.listgate-grid article.listgate-card`)
	checkNoFailure(t, b)
	for _, sel := range []string{`form.listgate-filters select[name=lg_type]`, `form.listgate-filters select[name=lg_suburb]`,
		`form.listgate-filters input[name=lg_price_min]`, `form.listgate-filters input[name=lg_price_max]`,
		`form.listgate-filters select[name=lg_bedrooms]`, `form.listgate-filters button.listgate-filter-submit`} {
		b.Do(chromedp.WaitVisible(chromedp.CSS(sel)))
	}
	if want.Meta.TotalPages > 1 {
		b.Do(chromedp.WaitVisible(chromedp.CSS(`nav.listgate-pagination`)))
	}
	cs := cards(b)
	if len(cs) != min(perPage, want.Meta.Total) {
		t.Errorf("%d cards, want min(%d, %d)", len(cs), perPage, want.Meta.Total)
	}
	if got := cardRefs(cs); !slices.Equal(got, refsOf(want)) {
		t.Errorf("card refs %q, want the API's first page %q", got, refsOf(want))
	}
	page, _ := url.Parse(e.wp.listingsURL)
	for _, c := range cs {
		u, err := url.Parse(c.Link)
		if err != nil || u.Host != page.Host || u.Path != page.Path ||
			u.Query().Get("page_id") != page.Query().Get("page_id") || u.Query().Get("lg_listing") != c.Ref {
			t.Errorf("card %s links to %q, want the Listings page with lg_listing=%s", c.Ref, c.Link, c.Ref)
		}
	}
	waitImages(b, `.listgate-grid article.listgate-card img`)
	b.Screenshot("wordpress-grid")
}

// testFilter picks a suburb the API has fewer listings for than in all,
// searches for it, and checks the cards against the API's filtered page.
func testFilter(t *testing.T, e *env) {
	all := e.lg.listings(t, url.Values{"per_page": {"1"}}).Meta.Total
	b := e.visitor
	options := evalStrings(b, `Array.from(document.querySelectorAll('select[name=lg_suburb] option'), o => o.value).filter(v => v !== "")`)
	if len(options) == 0 {
		t.Fatal("the suburb filter has no options")
	}
	// The first suburb with several listings (but not all), else one with one.
	var suburb string
	var want model.Collection[model.Listing]
	for _, o := range options {
		c := e.lg.listings(t, url.Values{"suburb": {o}, "per_page": {strconv.Itoa(perPage)}})
		if c.Meta.Total == 0 || c.Meta.Total >= all {
			continue
		}
		if suburb == "" || c.Meta.Total > 1 {
			suburb, want = o, c
		}
		if c.Meta.Total > 1 {
			break
		}
	}
	if suburb == "" {
		t.Fatalf("no suburb of %q has fewer listings than all %d", options, all)
	}
	b.Do(chromedp.SetValue(chromedp.CSS(`select[name=lg_suburb]`), suburb))
	clickToLoad(b, `button.listgate-filter-submit`)
	b.Do(chromedp.WaitVisible(chromedp.CSS(`div.listgate-grid article.listgate-card`)))
	checkNoFailure(t, b)
	if loc := devbrowser.Get(b, chromedp.Location()); !strings.Contains(loc, "lg_suburb=") {
		t.Errorf("after searching, the address is %s", loc)
	}
	cs := cards(b)
	if len(cs) != min(perPage, want.Meta.Total) {
		t.Errorf("suburb %q: %d cards, want min(%d, %d)", suburb, len(cs), perPage, want.Meta.Total)
	}
	for _, c := range cs {
		if !strings.EqualFold(c.Suburb, suburb) {
			t.Errorf("suburb %q: card %s is in %q", suburb, c.Ref, c.Suburb)
		}
	}
	if got := cardRefs(cs); !slices.Equal(got, refsOf(want)) {
		t.Errorf("suburb %q: card refs %q, want %q", suburb, got, refsOf(want))
	}
}

// testListing opens a listing with photos from its card and checks that its
// gallery shows the API's images, loaded (from the media server), and that
// the page has its agents, inspections and enquiry form.
func testListing(t *testing.T, e *env) {
	// The grid's cards, as the plugin shows them now (featuring listings
	// has changed their order, and the plugin may still show its copy).
	b := e.visitor
	open(b, e.wp.listingsURL, `div.listgate-grid article.listgate-card`)
	shown := cardRefs(cards(b))
	var listing model.Listing
	var images []string
	for _, ref := range shown {
		l := e.lg.listing(t, ref)
		var urls []string
		for _, m := range l.Media {
			if m.Kind == "image" {
				urls = append(urls, m.URL)
			}
		}
		if len(urls) > 0 && len(l.Agents) > 0 {
			listing, images = l, urls
			break
		}
	}
	if len(images) == 0 {
		t.Fatalf("no listing of %q has images and agents", shown)
	}
	ref := strconv.FormatInt(listing.ListingRef, 10)
	clickToLoad(b, chromedp.CSS(`article.listgate-card[data-listing-ref="`+ref+`"] a.listgate-card-link`))
	b.Do(chromedp.WaitVisible(chromedp.CSS(`div.listgate-listing[data-listing-ref="` + ref + `"]`)))
	checkNoFailure(t, b)
	loc := devbrowser.Get(b, chromedp.Location())
	if u, err := url.Parse(loc); err != nil || u.Query().Get("lg_listing") != ref {
		t.Errorf("the card led to %s, want lg_listing=%s", loc, ref)
	}
	for _, sel := range []string{`ul.listgate-agents`, `ul.listgate-inspections`, `form.listgate-enquiry input[name=lg_name]`,
		`form.listgate-enquiry input[name=lg_email]`, `form.listgate-enquiry input[name=lg_phone]`,
		`form.listgate-enquiry textarea[name=lg_message]`, `form.listgate-enquiry button.listgate-enquiry-submit`} {
		b.Do(chromedp.WaitReady(chromedp.CSS(sel)))
	}

	srcs := evalStrings(b, `Array.from(document.querySelectorAll('.listgate-gallery img'), i => i.getAttribute('src'))`)
	slices.Sort(srcs)
	slices.Sort(images)
	if !slices.Equal(srcs, images) {
		t.Errorf("gallery images %q, want the API's %q", srcs, images)
	}
	waitImages(b, `.listgate-gallery img`)
	e.listingURL, e.listingRef = loc, ref
	b.Screenshot("wordpress-listing")
}
