package dashboard_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/listgate/listgate/origin/dashboard"
	"github.com/listgate/listgate/origin/store"
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

// TestBrowserUsageAndAgents drives a real headless Chromium through the
// usage chart's periods and the agents page from the site's navigation.
func TestBrowserUsageAndAgents(t *testing.T) {
	b := devbrowser.New(t, devbrowser.Options{Width: 1024, Height: 900})
	f := newFixture(t)
	ctx := context.Background()
	importFeed(t, f.db, f.siteA.ID, agentsFeed)
	for i, name := range []string{"Jane Citizen", "Jane Citizen", "Jane Citizen", "Sam Nomail"} {
		id := seedLead(t, f.db, f.siteA.ID, "inquiry", "new", "Buyer", "buyer@example.com", "", time.Now().Add(-time.Duration(i)*24*time.Hour))
		mustExec(t, f.db, `UPDATE leads SET assigned_agent_id = $3 WHERE site_id = $1 AND id = $2`, f.siteA.ID, id,
			agentID(t, f.db, f.siteA.ID, name))
	}
	// Thirty days of traffic: busier on weekdays, a spike five days ago.
	// Each day's requests fall in the first minutes of that date in the
	// site's time zone, whatever the time of day the test runs at (a day's
	// counts spread over the 24 hours before now straddled two of the
	// site's dates, and the spike's day then held under half of it).
	now := time.Now().UTC().Truncate(time.Minute)
	loc, err := time.LoadLocation(f.siteA.Timezone)
	if err != nil {
		t.Fatal(err)
	}
	today := now.In(loc)
	var counts []store.UsageCount
	for d := range 30 {
		y, m, dd := today.AddDate(0, 0, -d).Date()
		start := time.Date(y, m, dd, 0, 0, 0, 0, loc)
		n := int64(20000 + 1500*(d%7))
		if d == 5 {
			n = 70000
		}
		for k := range 8 {
			if minute := start.Add(time.Duration(k) * time.Minute); !minute.After(now) {
				counts = append(counts, store.UsageCount{SiteID: f.siteA.ID, Minute: minute.UTC(), Requests: n / 8})
			}
		}
	}
	if err := f.db.AddUsage(ctx, counts); err != nil {
		t.Fatal(err)
	}
	do := b.Do
	get := func(a chromedp.Action[string]) string {
		t.Helper()
		return devbrowser.Get(b, a)
	}
	signInAsA(b, f)

	do(chromedp.Navigate(f.srv.URL+"/dashboard/sites/"+f.siteA.ID),
		chromedp.WaitVisible(`a[href$="/usage"]`),
		chromedp.Click(`a[href$="/usage"]`),
		chromedp.WaitVisible(`#usage-svg`),
		chromedp.Click(`a[data-period="day"]`),
		chromedp.WaitVisible(`a[data-period="day"][aria-current="page"]`))
	bars := get(chromedp.Evaluate[string](`String(document.querySelectorAll("#usage-svg rect.bar.s0").length)`))
	name := get(chromedp.Evaluate[string](`document.getElementById("usage-title").textContent`))
	limit := get(chromedp.Evaluate[string](`document.querySelector("#usage-svg path.limit").getAttribute("data-values").split(" ").length + ""`))
	// The chart is drawn: the bar of the largest count is the tallest, and
	// tall (the spike's day, in the site's zone).
	tallest := get(chromedp.Evaluate[string](`(() => { let best = null, most = 0;
		for (const r of document.querySelectorAll("#usage-svg rect.bar.s0")) {
			most = Math.max(most, +r.getAttribute("data-value"));
			if (!best || r.getBBox().height > best.getBBox().height) best = r; }
		return (+best.getAttribute("data-value") === most && most >= 50000 && best.getBBox().height > 50) + ""; })()`))
	if bars != "30" || limit != "30" || name != "Requests per day, the last 30 days" || tallest != "true" {
		t.Fatalf("days chart: %s bars, %s limit values, title %q, tallest %q", bars, limit, name, tallest)
	}
	// The table fallback opens and holds the same numbers.
	do(chromedp.Click(`details.chart-data summary`), chromedp.WaitVisible(`#usage-table`))
	if rows := get(chromedp.Evaluate[string](`String(document.querySelectorAll("#usage-table tbody tr").length)`)); rows != "30" {
		t.Fatalf("table rows %s", rows)
	}
	do(chromedp.Click(`details.chart-data summary`))
	b.Screenshot("usage-days")
	do(chromedp.Click(`a[data-period="month"]`),
		chromedp.WaitVisible(`a[data-period="month"][aria-current="page"]`))
	if bars := get(chromedp.Evaluate[string](`String(document.querySelectorAll("#usage-svg rect.bar.s0").length)`)); bars != "12" {
		t.Fatalf("months chart: %s bars", bars)
	}

	do(chromedp.Navigate(f.srv.URL+"/dashboard/sites/"+f.siteA.ID),
		chromedp.WaitVisible(`a[href$="/agents"]`),
		chromedp.Click(`a[href$="/agents"]`),
		chromedp.WaitVisible(`#agents`))
	agents := get(chromedp.Text(`#agents`))
	if !strings.Contains(agents, "Jane Citizen") || !strings.Contains(agents, "Sam Nomail") ||
		!strings.Contains(agents, "no (no e-mail)") {
		t.Fatalf("agents table %q", agents)
	}
	b.Screenshot("agents")

	do(chromedp.Navigate(f.srv.URL+"/dashboard/sites/"+f.siteA.ID+"/listings"),
		chromedp.WaitVisible(`#listings`))
	if ls := get(chromedp.Text(`#listings`)); !strings.Contains(ls, "12 Ocean Pde Seaview VIC 3001") ||
		!strings.Contains(ls, "Listing W1") || !strings.Contains(ls, "Withdrawn") || strings.Contains(ls, "no headline") {
		t.Fatalf("listings table %q", ls)
	}
}

// signInAsA signs in through the login form as site A's user and waits
// for the sites table.
func signInAsA(b *devbrowser.Browser, f *fixture) {
	b.Do(chromedp.Navigate(f.srv.URL+"/dashboard/login"),
		chromedp.WaitVisible(`#email`),
		chromedp.SendKeys(`#email`, "a@bayside.example"),
		chromedp.SendKeys(`#password`, passwordA),
		chromedp.Click(`#sign-in`),
		chromedp.WaitVisible(`main table`))
}
