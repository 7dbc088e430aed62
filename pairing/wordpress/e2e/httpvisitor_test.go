package e2e

import (
	"html"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// visitor is a visitor of the site without a browser: its connections
// come from a loopback address of its own, which WordPress sees as
// REMOTE_ADDR.
type visitor struct {
	addr   string
	client *http.Client
}

// newVisitor returns a visitor whose connections come from addr, a
// loopback address (127.0.0.0/8 is all loopback on Linux).
func newVisitor(t *testing.T, addr string) *visitor {
	t.Helper()
	ip := net.ParseIP(addr)
	if ip == nil || !ip.IsLoopback() {
		t.Fatalf("visitor address %q is not a loopback address", addr)
	}
	dialer := &net.Dialer{LocalAddr: &net.TCPAddr{IP: ip}, Timeout: 5 * time.Second}
	transport := &http.Transport{DialContext: dialer.DialContext}
	t.Cleanup(transport.CloseIdleConnections)
	return &visitor{addr: addr, client: &http.Client{Timeout: 30 * time.Second, Transport: transport}}
}

// listings gets the Listings page with the query q, which must answer 200.
func (v *visitor) listings(t *testing.T, wp *wordpress, q url.Values) sitePage {
	t.Helper()
	u := wp.listingsURL
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	resp, err := v.client.Get(u)
	if err != nil {
		t.Fatalf("visitor %s: GET %s: %v", v.addr, u, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("visitor %s: GET %s: %d %v %.300s", v.addr, u, resp.StatusCode, err, body)
	}
	return sitePage{url: u, body: string(body)}
}

// sitePage is a page of the site as a visitor got it.
type sitePage struct{ url, body string }

// The plugin's markup, as its templates write it.
var (
	cardRefRE     = regexp.MustCompile(`<article class="listgate-card" data-listing-ref="([^"]*)"`)
	cardSuburbRE  = regexp.MustCompile(`<p class="listgate-card-suburb">([^<]*)</p>`)
	suburbSelect  = regexp.MustCompile(`(?s)<select name="lg_suburb"[^>]*>(.*?)</select>`)
	optionValueRE = regexp.MustCompile(`<option value="([^"]*)"`)
	currentPageRE = regexp.MustCompile(`<span class="listgate-page listgate-page-current" aria-current="page">([^<]*)<`)
	pageLinkRE    = regexp.MustCompile(`<a class="listgate-page" href="[^"]*">([0-9,]+)</a>`)
	pluginRE      = regexp.MustCompile(`(?s)<div class="listgate listgate-listings">.*|<div class="listgate-(empty|unavailable)".*|<div class="listgate listgate-listing".*`)
)

// has reports whether the page contains s.
func (p sitePage) has(s string) bool { return strings.Contains(p.body, s) }

// plugin returns the page from the plugin's markup on, for messages.
func (p sitePage) plugin() string {
	if m := pluginRE.FindString(p.body); m != "" {
		return m
	}
	return p.body
}

// mustGrid fails t unless the page shows a grid of cards and no
// "unavailable" notice.
func (p sitePage) mustGrid(t *testing.T) {
	t.Helper()
	if !p.hasGrid() {
		t.Fatalf("%s does not show the grid: %.500s", p.url, p.plugin())
	}
}

// hasGrid reports whether the page shows a grid of cards and no
// "unavailable" notice.
func (p sitePage) hasGrid() bool {
	return !p.has(`class="listgate-unavailable"`) && len(p.cardRefs()) > 0
}

// cardRefs returns the listing refs of the page's cards.
func (p sitePage) cardRefs() []string { return submatches(cardRefRE, p.body) }

// cardSuburbs returns the suburbs of the page's cards.
func (p sitePage) cardSuburbs() []string { return submatches(cardSuburbRE, p.body) }

// suburbs returns the values of the suburb filter's options, "" left out.
func (p sitePage) suburbs() []string {
	m := suburbSelect.FindStringSubmatch(p.body)
	if m == nil {
		return nil
	}
	var out []string
	for _, v := range submatches(optionValueRE, m[1]) {
		if v != "" {
			out = append(out, v)
		}
	}
	return out
}

// currentPage returns the pagination's current page, "" without one.
func (p sitePage) currentPage() string {
	m := currentPageRE.FindStringSubmatch(p.body)
	if m == nil {
		return ""
	}
	return html.UnescapeString(m[1])
}

// lastPage returns the highest page number of the pagination.
func (p sitePage) lastPage() int {
	last := 0
	for _, n := range append(submatches(pageLinkRE, p.body), p.currentPage()) {
		if v, err := strconv.Atoi(strings.ReplaceAll(n, ",", "")); err == nil && v > last {
			last = v
		}
	}
	return last
}

// submatches returns the first group of every match of re in s, HTML
// entities decoded.
func submatches(re *regexp.Regexp, s string) []string {
	var out []string
	for _, m := range re.FindAllStringSubmatch(s, -1) {
		out = append(out, html.UnescapeString(strings.TrimSpace(m[1])))
	}
	return out
}
