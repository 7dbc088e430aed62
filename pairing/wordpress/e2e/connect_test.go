package e2e

import (
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/listgate/listgate/pairing"
	"github.com/listgate/listgate/pkg/devbrowser"
)

// pairedScopes are the scopes of the key pairing gives (API.md).
var pairedScopes = []string{"agents:read", "listings:read", "stats:read"}

// scopeName matches a scope among the page's <code> elements.
var scopeName = regexp.MustCompile(`^[a-z]+:[a-z]+$`)

// settingsURL is the plugin's settings page.
func (e *env) settingsURL() string { return e.wp.URL + "/wp-admin/options-general.php?page=listgate" }

// testConnect signs in, saves the edge's address, pairs the site (approved
// with the origin's CLI) and saves a lead key.
func testConnect(t *testing.T, e *env) {
	b := e.admin
	b.Do(chromedp.Navigate(e.wp.URL+"/wp-login.php?redirect_to="+url.QueryEscape(e.settingsURL())),
		chromedp.WaitVisible(chromedp.CSS(`#user_login`)),
		// SetValue, not typing: the login page moves the focus to
		// #user_login after a moment, which could split typed text.
		chromedp.SetValue(chromedp.CSS(`#user_login`), adminUser),
		chromedp.SetValue(chromedp.CSS(`#user_pass`), adminPassword))
	clickToLoad(b, `#wp-submit`)
	b.Do(chromedp.WaitVisible(chromedp.CSS(`input[name=listgate_base_url]`)))

	b.Do(chromedp.SetValue(chromedp.CSS(`input[name=listgate_base_url]`), e.lg.edgeURL))
	clickToLoad(b, `#listgate-save`)
	var base string
	e.wp.option(t, "listgate_base_url", &base)
	if !strings.HasPrefix(base, e.lg.edgeURL) {
		t.Fatalf("listgate_base_url is %q after saving %q", base, e.lg.edgeURL)
	}

	b.Do(chromedp.WaitVisible(chromedp.CSS(`#listgate-connect`)))
	clickToLoad(b, `#listgate-connect`)
	b.Do(chromedp.WaitVisible(chromedp.CSS(`#listgate-user-code`)), chromedp.WaitVisible(chromedp.CSS(`#listgate-verify-link`)))
	code := strings.TrimSpace(devbrowser.Get(b, chromedp.Text(chromedp.CSS(`#listgate-user-code`))))
	letter := "[" + pairing.UserCodeAlphabet + "]"
	if !regexp.MustCompile(`^` + letter + `{4}-` + letter + `{4}$`).MatchString(code) {
		t.Fatalf("user code %q", code)
	}
	e.lg.cli(t, nil, "pairing", "approve", "--user-code", code, "--site", e.lg.siteID)
	// The page polls and reloads itself once the key is delivered.
	b.Do(chromedp.WaitVisible(chromedp.CSS(`#listgate-connected`)), chromedp.WaitVisible(chromedp.CSS(`#listgate-disconnect`)))
	b.Screenshot("wordpress-settings-connected")

	codes := evalStrings(b, `Array.from(document.querySelectorAll('#listgate-connected code'), c => c.textContent.trim())`)
	var scopes []string
	for _, c := range codes {
		if scopeName.MatchString(c) {
			scopes = append(scopes, c)
		}
	}
	slices.Sort(scopes)
	if !slices.Equal(scopes, pairedScopes) {
		t.Errorf("scopes shown %q (codes %q), want exactly %q", scopes, codes, pairedScopes)
	}
	if text := devbrowser.Get(b, chromedp.Text(chromedp.CSS(`#listgate-connected`))); !strings.Contains(text, e.lg.siteID) {
		t.Errorf("site id %s not shown in %q", e.lg.siteID, text)
	}

	// Pairing's keys: the read-only key, and the site's beacon id
	// (beacon_id set) that comes with it.
	var n int
	e.lg.query(t, `SELECT count(*) FROM api_keys WHERE site_id = $1 AND source = 'pairing' AND beacon_id IS NULL AND revoked_at IS NULL`,
		[]any{e.lg.siteID}, &n)
	if n != 1 {
		t.Fatalf("%d live pairing keys for the demo site, want 1", n)
	}
	var keyID, name string
	var dbScopes []string
	e.lg.query(t, `SELECT id::text, name, scopes FROM api_keys WHERE site_id = $1 AND source = 'pairing' AND beacon_id IS NULL AND revoked_at IS NULL`,
		[]any{e.lg.siteID}, &keyID, &name, &dbScopes)
	slices.Sort(dbScopes)
	if !strings.HasPrefix(name, "WordPress: 127.0.0.1") || !slices.Equal(dbScopes, pairedScopes) {
		t.Errorf("pairing key %q with scopes %q", name, dbScopes)
	}
	var siteOpt, keyOpt string
	e.wp.option(t, "listgate_site_id", &siteOpt)
	e.wp.option(t, "listgate_key_id", &keyOpt)
	if siteOpt != e.lg.siteID || keyOpt != keyID {
		t.Errorf("options listgate_site_id %q, listgate_key_id %q; want %s and %s", siteOpt, keyOpt, e.lg.siteID, keyID)
	}
	if a := e.wp.autoload(t, "listgate_api_key"); a != "no" {
		t.Errorf("listgate_api_key autoload %q, want no", a)
	}

	var lead struct{ Key string }
	e.lg.cli(t, &lead, "keys", "create", "--site", e.lg.siteID, "--name", "WordPress enquiries",
		"--scopes", "leads:write", "--json")
	e.leadKey = lead.Key
	b.Do(chromedp.SetValue(chromedp.CSS(`input[name=listgate_lead_key]`), e.leadKey))
	clickToLoad(b, `#listgate-save`)
	b.Do(chromedp.WaitVisible(chromedp.CSS(`#listgate-connected`)))
	var saved string
	e.wp.option(t, "listgate_lead_key", &saved)
	if saved != e.leadKey {
		t.Fatal("listgate_lead_key is not the CLI's key after saving it")
	}
}

// testDisconnect lifts the rate limit, disconnects from the settings page,
// and checks that the paired key is revoked (the edge refuses it) and that
// visitors no longer see listings.
func testDisconnect(t *testing.T, e *env) {
	e.lg.cli(t, nil, "sites", "set-plan", e.lg.siteID, "enterprise")
	e.lg.pollRead(t, "the unlimited plan", e.lg.readKey, func(r *http.Response) bool {
		return r.StatusCode == http.StatusOK && r.Header.Get("X-RateLimit-Limit") == ""
	})
	var paired string
	e.wp.option(t, "listgate_api_key", &paired)

	a := e.admin
	open(a, e.settingsURL(), `#listgate-disconnect`)
	clickToLoad(a, `#listgate-disconnect`)
	a.Do(chromedp.WaitVisible(chromedp.CSS(`#listgate-connect`)))
	var live int
	e.lg.query(t, `SELECT count(*) FROM api_keys WHERE site_id = $1 AND source = 'pairing' AND beacon_id IS NULL AND revoked_at IS NULL`,
		[]any{e.lg.siteID}, &live)
	if live != 0 {
		t.Errorf("%d pairing keys still live after Disconnect", live)
	}
	var left any
	e.wp.option(t, "listgate_api_key", &left)
	if left != nil && left != "" {
		t.Error("listgate_api_key is still set after Disconnect")
	}
	e.lg.pollRead(t, "the disconnected key refused", paired, func(r *http.Response) bool {
		return r.StatusCode == http.StatusUnauthorized
	})

	b := e.visitor
	open(b, e.wp.listingsURL, `h1`)
	if title := devbrowser.Get(b, chromedp.Text(chromedp.CSS(`h1`))); title != "Listings" {
		t.Errorf("the Listings page's title is %q", title)
	}
	if n := devbrowser.Get(b, chromedp.Evaluate[int](`document.querySelectorAll('.listgate-card, .listgate-unavailable').length`)); n != 0 {
		t.Errorf("a visitor sees %d cards or notices after Disconnect, want none", n)
	}
}
