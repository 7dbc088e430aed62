package e2e

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	json "github.com/goccy/go-json"

	"github.com/listgate/listgate/pkg/devbrowser"
)

const browserPassword = "correct horse battery staple e2e"

// TestBrowserThroughEdge drives a real headless Chromium against the edge,
// which forwards /dashboard to the origin: keys made and revoked in the
// browser, pairing a WordPress site end to end, and the leads export.
func TestBrowserThroughEdge(t *testing.T) {
	b := devbrowser.New(t, devbrowser.Options{})
	s, edge := newPublicSystem(t)
	base := edge.url()
	site := s.site("professional")
	s.cliStdin(nil, browserPassword+"\n", "users", "create", "--email", "staff@agency.example",
		"--password-stdin", "--site", site, "--json")
	listings := base + "/v1/sites/" + site + "/listings"

	b.Do(chromedp.Navigate(base+"/dashboard/login"),
		chromedp.WaitVisible(`#email`),
		chromedp.SendKeys(`#email`, "staff@agency.example"),
		chromedp.SendKeys(`#password`, browserPassword),
		chromedp.Click(`#sign-in`),
		chromedp.WaitVisible(`main table`))
	if sites := devbrowser.Get(b, chromedp.Text(`main`)); !strings.Contains(sites, "E2E professional") {
		t.Fatalf("sites page %q", sites)
	}
	b.Screenshot("sites")
	b.Do(chromedp.Navigate(base+"/dashboard/sites/"+site), chromedp.WaitVisible(`.actions`))
	b.Screenshot("site")

	t.Run("key", func(t *testing.T) {
		b.TB = t
		b.Do(chromedp.Navigate(base+"/dashboard/sites/"+site+"/keys"),
			chromedp.WaitVisible(`#key-name`),
			chromedp.SendKeys(`#key-name`, "Website"))
		// Exactly listings:read.
		devbrowser.Get(b, chromedp.Evaluate[string](`document.querySelectorAll('input[name=scope]').forEach(
			c => { c.checked = c.value === "listings:read"; }); ""`))
		b.Do(chromedp.Click(`#create-key`), chromedp.WaitVisible(`#secret`))
		secret := devbrowser.Get(b, chromedp.Value(`#secret`))
		if r := do(t, "GET", listings, nil, bearer(secret)); r.status != 200 {
			t.Fatalf("listings with the browser's key: %d %s", r.status, r.body)
		}
		b.Do(chromedp.Navigate(base+"/dashboard/sites/"+site+"/keys"), chromedp.WaitVisible(`#keys`))
		b.Screenshot("keys")
		devbrowser.Get(b, chromedp.Evaluate[string](`window.confirm = function () { return true; }; ""`))
		b.Do(chromedp.Click(`#keys button.danger`), chromedp.WaitVisible(`.notice`))
		if keys := devbrowser.Get(b, chromedp.Text(`#keys`)); !strings.Contains(keys, "revoked") {
			t.Fatalf("keys table after revoking %q", keys)
		}
		// Through the event stream, well before the 30 s key TTL (the
		// bench's key-revoked holds the edges to a second).
		deadline := time.Now().Add(5 * time.Second)
		for {
			r := do(t, "GET", listings, nil, bearer(secret))
			if r.status == 401 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the edge still answers a revoked key after 5 s: %d", r.status)
			}
			time.Sleep(50 * time.Millisecond)
		}
	})

	t.Run("pairing", func(t *testing.T) {
		b.TB = t
		r := do(t, "POST", base+"/v1/pairing/device",
			[]byte(`{"home_url":"https://agency.example","site_name":"Agency","plugin_version":"1.0"}`),
			map[string]string{"Content-Type": "application/json"})
		var dev struct {
			DeviceCode              string `json:"device_code"`
			UserCode                string `json:"user_code"`
			VerificationURIComplete string `json:"verification_uri_complete"`
			Interval                int    `json:"interval"`
		}
		if r.status != 200 || json.Unmarshal(r.body, &dev) != nil || dev.DeviceCode == "" {
			t.Fatalf("device: %d %s", r.status, r.body)
		}
		if !strings.HasPrefix(dev.VerificationURIComplete, base+"/dashboard/") {
			t.Fatalf("verification_uri_complete %q is not the edge's (%s)", dev.VerificationURIComplete, base)
		}
		poll := func() response {
			body, _ := json.Marshal(map[string]string{
				"grant_type": "urn:ietf:params:oauth:grant-type:device_code", "device_code": dev.DeviceCode})
			return do(t, "POST", base+"/v1/pairing/token", body, map[string]string{"Content-Type": "application/json"})
		}
		var e struct{ Error string }
		if r := poll(); r.status != 400 || json.Unmarshal(r.body, &e) != nil || e.Error != "authorization_pending" {
			t.Fatalf("token before approval: %d %s", r.status, r.body)
		}
		last := time.Now()

		b.Do(chromedp.Navigate(dev.VerificationURIComplete), chromedp.WaitVisible(`#approve`))
		if page := devbrowser.Get(b, chromedp.Text(`main`)); !strings.Contains(page, "https://agency.example") {
			t.Fatalf("pairing page %q", page)
		}
		b.Screenshot("pairing-approve")
		b.Do(chromedp.SetValue(`#site`, site), chromedp.Click(`#approve`), chromedp.WaitVisible(`.notice`))
		if done := devbrowser.Get(b, chromedp.Text(`.notice`)); !strings.Contains(done, "Approved") {
			t.Fatalf("after approving %q", done)
		}

		interval := time.Duration(max(dev.Interval, 1)) * time.Second
		deadline := time.Now().Add(25 * time.Second)
		var tok struct {
			APIKey string `json:"api_key"`
			SiteID string `json:"site_id"`
			Scopes any    `json:"scopes"`
		}
		for {
			time.Sleep(time.Until(last.Add(interval)))
			r := poll()
			last = time.Now()
			if r.status == 200 {
				if err := json.Unmarshal(r.body, &tok); err != nil || tok.APIKey == "" || tok.SiteID != site {
					t.Fatalf("token: %s %v", r.body, err)
				}
				if cc := r.header.Get("Cache-Control"); cc != "no-store" {
					t.Errorf("token Cache-Control %q", cc)
				}
				break
			}
			e.Error = ""
			if r.status != 400 || json.Unmarshal(r.body, &e) != nil ||
				(e.Error != "authorization_pending" && e.Error != "slow_down") {
				t.Fatalf("token: %d %s", r.status, r.body)
			}
			if e.Error == "slow_down" {
				interval += 5 * time.Second
			}
			if time.Now().After(deadline) {
				t.Fatal("no key 25 s after approving")
			}
		}
		if r := do(t, "GET", listings, nil, bearer(tok.APIKey)); r.status != 200 {
			t.Fatalf("listings with the paired key: %d %s", r.status, r.body)
		}
		if r := do(t, "POST", base+"/v1/leads", []byte(`{"name":"A","email":"a@example.com"}`),
			map[string]string{"Authorization": "Bearer " + tok.APIKey, "Content-Type": "application/json"}); r.status != 403 {
			t.Fatalf("lead with the paired (read-only) key: %d %s", r.status, r.body)
		}
	})

	t.Run("leads export", func(t *testing.T) {
		b.TB = t
		k := s.key(site, "leads:write")
		const email = "buyer.e2e@example.com"
		if r := do(t, "POST", base+"/v1/leads", []byte(`{"name":"Browser Buyer","email":"`+email+`"}`),
			map[string]string{"Authorization": "Bearer " + k.Key, "Content-Type": "application/json"}); r.status/100 != 2 {
			t.Fatalf("lead: %d %s", r.status, r.body)
		}
		b.Do(chromedp.Navigate(base+"/dashboard/sites/"+site+"/leads"), chromedp.WaitVisible(`#leads`))
		if leads := devbrowser.Get(b, chromedp.Text(`#leads`)); !strings.Contains(leads, email) {
			t.Fatalf("leads page %q", leads)
		}
		b.Screenshot("leads")
		href := devbrowser.Get(b, chromedp.AttributeValue(`#export-leads`, "href"))
		if !href.Exists {
			t.Fatalf("export link: %+v", href)
		}
		hrefJS, _ := json.Marshal(href.Value)
		csv := devbrowser.Get(b, chromedp.Evaluate[string](`fetch(`+string(hrefJS)+`, {credentials: "same-origin"}).then(
			r => r.ok ? r.text() : Promise.reject(new Error("export: " + r.status)))`, chromedp.EvalAwaitPromise))
		if !strings.Contains(csv, email) {
			t.Fatalf("export %q lacks %s", csv, email)
		}
		if u, err := url.Parse(href.Value); err != nil || !strings.HasSuffix(u.Path, "/leads/export") {
			t.Errorf("export href %q", href.Value)
		}

		b.Do(chromedp.Navigate(base+"/dashboard/sites/"+site+"/usage"), chromedp.WaitVisible(`main h1`))
		b.Screenshot("usage")
	})
}
