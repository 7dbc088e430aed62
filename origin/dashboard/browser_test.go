package dashboard_test

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/listgate/listgate/origin/dashboard"
	"github.com/listgate/listgate/pkg/apikey"
	"github.com/listgate/listgate/pkg/devbrowser"
	"github.com/listgate/listgate/pkg/webhook"
)

// TestBrowserSignInAndKey drives a real headless Chromium: sign in, create
// a key and read it once, revoke it after confirming; set the site's browser
// origins; add a webhook endpoint and read its signing secret once.
func TestBrowserSignInAndKey(t *testing.T) {
	b := devbrowser.New(t, devbrowser.Options{Width: 390, Height: 844}) // phone width
	f := newFixtureWith(t, dashboard.Config{SecretKey: testSecretKey})
	do := b.Do
	get := func(a chromedp.Action[string]) string {
		t.Helper()
		return devbrowser.Get(b, a)
	}

	do(chromedp.Navigate(f.srv.URL+"/dashboard"),
		chromedp.WaitVisible(`#email`),
		chromedp.SendKeys(`#email`, "a@bayside.example"),
		chromedp.SendKeys(`#password`, passwordA),
		chromedp.Click(`#sign-in`),
		chromedp.WaitVisible(`main table`))
	if sites := get(chromedp.Text(`main`)); !strings.Contains(sites, "Bayside Realty") || strings.Contains(sites, "Hillside") {
		t.Fatalf("sites page %q", sites)
	}
	do(chromedp.Navigate(f.srv.URL+"/dashboard/sites/"+f.siteA.ID+"/keys"),
		chromedp.WaitVisible(`#key-name`),
		chromedp.SendKeys(`#key-name`, "Website"),
		chromedp.Click(`#create-key`),
		chromedp.WaitVisible(`#secret`))
	secret := get(chromedp.Value(`#secret`))
	k, err := f.db.KeyByHash(context.Background(), apikey.Hash(secret))
	if err != nil || k.Name != "Website" || k.Scopes != apikey.ReadOnly {
		t.Fatalf("key %q: %+v %v", secret, k, err)
	}
	// Revoke, answering the confirmation yes (and recording its question).
	do(chromedp.Navigate(f.srv.URL+"/dashboard/sites/"+f.siteA.ID+"/keys"),
		chromedp.WaitVisible(`#keys`))
	get(chromedp.Evaluate[string](`window.confirm = function (m) { sessionStorage.asked = m; return true; }; ""`))
	do(chromedp.Click(`#keys button.danger`),
		chromedp.WaitVisible(`.notice`))
	keysTable := get(chromedp.Text(`#keys`))
	asked := get(chromedp.Evaluate[string](`sessionStorage.asked || ""`))
	if !strings.Contains(asked, "Revoke the key") {
		t.Errorf("no confirmation before revoking (asked %q)", asked)
	}
	if strings.Contains(keysTable, secret) || !strings.Contains(keysTable, "revoked") {
		t.Fatalf("keys table after revoking %q", keysTable)
	}
	if k, _ := f.db.KeyByHash(context.Background(), apikey.Hash(secret)); k.RevokedAt == nil {
		t.Fatal("not revoked")
	}

	// The site's browser origins, typed one a line, are saved normalized.
	do(chromedp.Navigate(f.srv.URL+"/dashboard/sites/"+f.siteA.ID),
		chromedp.WaitVisible(`#cors-input`),
		chromedp.SendKeys(`#cors-input`, "https://WWW.Bayside.example/\nhttp://localhost:3000"),
		chromedp.Click(`#save-cors`),
		chromedp.WaitVisible(`.notice`))
	if shown := get(chromedp.Text(`#cors-origins`)); !strings.Contains(shown, "https://www.bayside.example") ||
		!strings.Contains(shown, "http://localhost:3000") {
		t.Fatalf("origins shown %q", shown)
	}
	if site, _ := f.db.GetSite(context.Background(), f.siteA.ID); strings.Join(site.CORSOrigins, " ") !=
		"https://www.bayside.example http://localhost:3000" {
		t.Fatalf("origins stored %q", site.CORSOrigins)
	}

	// A webhook endpoint from the site's navigation: lead.created is
	// chosen by default; its signing secret is shown once.
	do(chromedp.Navigate(f.srv.URL+"/dashboard/sites/"+f.siteA.ID),
		chromedp.WaitVisible(`a[href$="/webhooks"]`),
		chromedp.Click(`a[href$="/webhooks"]`),
		chromedp.WaitVisible(`#webhook-url`),
		chromedp.SendKeys(`#webhook-url`, "https://CRM.Bayside.example/hooks"),
		chromedp.Click(`#create-webhook`),
		chromedp.WaitVisible(`#secret`))
	whsec := get(chromedp.Value(`#secret`))
	eps, err := f.db.WebhookEndpoints(context.Background(), f.siteA.ID)
	if err != nil || len(eps) != 1 || eps[0].URL != "https://crm.bayside.example/hooks" ||
		strings.Join(eps[0].Events, ",") != "lead.created" {
		t.Fatalf("endpoints %+v %v", eps, err)
	}
	if whsec != webhook.DeriveSecret(testSecretKey, eps[0].ID, 1) {
		t.Fatalf("secret shown %q is not the endpoint's", whsec)
	}
	do(chromedp.Navigate(f.srv.URL+"/dashboard/sites/"+f.siteA.ID+"/webhooks"),
		chromedp.WaitVisible(`#webhooks`))
	if list := get(chromedp.Text(`#webhooks`)); !strings.Contains(list, "https://crm.bayside.example/hooks") ||
		!strings.Contains(list, "enabled") || strings.Contains(list, whsec) {
		t.Fatalf("webhooks table %q", list)
	}
}
