package dashboard_test

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/listgate/listgate/origin/dashboard"
	"github.com/listgate/listgate/origin/store"
	"github.com/listgate/listgate/pkg/model"
)

var (
	barRE   = regexp.MustCompile(`<rect class="bar s0" data-label="([^"]+)" data-value="(\d+)" x="[\d.]+" y="[\d.]+" width="[\d.]+" height="([\d.]+)">`)
	limitRE = regexp.MustCompile(`<path class="series s1 limit" fill="none" data-values="([\d ]+)"`)
)

// chartBars returns the page's bars: label and value, in order, and the
// height of each bar with requests.
func chartBars(body string) (labels []string, values []string, heights map[string]string) {
	heights = map[string]string{}
	for _, m := range barRE.FindAllStringSubmatch(body, -1) {
		labels, values = append(labels, html.UnescapeString(m[1])), append(values, m[2])
		if m[2] != "0" {
			heights[html.UnescapeString(m[1])+" "+m[2]] = m[3]
		}
	}
	return labels, values, heights
}

func TestUsagePage(t *testing.T) {
	// The dashboard's clock stands still: the last hour, its last bar and
	// the zone's abbreviation (AEDT or AEST, read at the hour's end) are
	// those of now whenever the test runs, a daylight-saving change
	// included.
	now := time.Date(2026, 11, 26, 2, 17, 0, 0, time.UTC) // 13:17 AEDT
	f := newFixtureWith(t, dashboard.Config{Now: func() time.Time { return now.Add(20 * time.Second) }})
	ctx := context.Background()
	if err := f.db.AddUsage(ctx, []store.UsageCount{
		{SiteID: f.siteA.ID, Minute: now.Add(-10 * time.Minute), Requests: 40},
		{SiteID: f.siteA.ID, Minute: now.Add(-5 * time.Minute), Requests: 10},
		{SiteID: f.siteA.ID, Minute: now.Add(-2 * time.Hour), Requests: 999}, // outside the hour
		{SiteID: f.siteB.ID, Minute: now.Add(-5 * time.Minute), Requests: 777},
	}); err != nil {
		t.Fatal(err)
	}
	b := f.browser(t)
	b.mustLogin("a@bayside.example", passwordA)
	if _, body := b.get("/dashboard/sites/" + f.siteA.ID); !strings.Contains(body, `href="/dashboard/sites/`+f.siteA.ID+`/usage"`) {
		t.Fatal("the site page does not link the usage page")
	}
	code, body := b.get("/dashboard/sites/" + f.siteA.ID + "/usage")
	if code != http.StatusOK {
		t.Fatalf("status %d: %s", code, body)
	}
	if strings.Contains(body, "<script>") || strings.Contains(body, `data-value="777"`) || strings.Contains(body, `data-value="999"`) {
		t.Fatal("inline script, or another site's or an old count, on the page")
	}
	labels, _, heights := chartBars(body)
	if len(labels) != 60 {
		t.Fatalf("%d bars, want 60", len(labels))
	}
	// Minutes in the site's time zone (Australia/Sydney); the limit line
	// (starter: 60 a minute) is on the chart, so the y axis ends at 60:
	// 40 requests are 2/3 of the plot's 190 units.
	syd := sydney(t)
	peak, other := now.Add(-10*time.Minute).In(syd).Format("15:04"), now.Add(-5*time.Minute).In(syd).Format("15:04")
	want := map[string]string{peak + " 40": "126.67", other + " 10": "31.67"}
	if fmt.Sprint(heights) != fmt.Sprint(want) {
		t.Fatalf("bars with requests %v, want %v", heights, want)
	}
	if last := labels[59]; last != now.In(syd).Format("15:04") {
		t.Errorf("last bar is %s, want %s", last, now.In(syd).Format("15:04"))
	}
	if m := limitRE.FindStringSubmatch(body); m == nil || m[1] != strings.TrimSpace(strings.Repeat("60 ", 60)) {
		t.Fatalf("plan limit line %v", m)
	}
	zone := now.In(syd).Format("MST")
	for _, s := range []string{`<dd id="usage-total">50</dd>`, "40 requests at " + peak + " " + zone,
		`<title id="usage-title">`, `<desc id="usage-desc">`, `aria-labelledby="usage-title usage-desc"`,
		`class="axis-title"`, ">Requests</text>", "Minute (Australia/Sydney)", `<table class="chart-table" id="usage-table">`,
		`<th scope="row">` + peak + `</th><td>40</td><td>60</td>`, `aria-current="page">Last hour`} {
		if !strings.Contains(body, s) {
			t.Errorf("the page lacks %s", s)
		}
	}

	// Another account's site is 404, whatever the period; its own renders.
	b2 := f.browser(t)
	b2.mustLogin("B@Hillside.example", passwordB)
	for _, p := range []string{"", "?period=day", "?period=month"} {
		if code, body := b2.get("/dashboard/sites/" + f.siteA.ID + "/usage" + p); code != http.StatusNotFound || strings.Contains(body, "usage-total") {
			t.Fatalf("other account's site%s: %d", p, code)
		}
	}
	if code, body := b2.get("/dashboard/sites/" + f.siteB.ID + "/usage"); code != http.StatusOK ||
		!strings.Contains(body, `<dd id="usage-total">777</dd>`) {
		t.Fatalf("own site: %d", code)
	}
	if code, _ := b2.get("/dashboard/sites/not-a-uuid/usage?period=day"); code != http.StatusNotFound {
		t.Fatalf("bad site id: %d", code)
	}
}

func TestUsageEmptyHour(t *testing.T) {
	f := newFixture(t)
	b := f.browser(t)
	b.mustLogin("a@bayside.example", passwordA)
	code, body := b.get("/dashboard/sites/" + f.siteA.ID + "/usage?period=nonsense")
	_, values, heights := chartBars(body)
	if code != http.StatusOK || !strings.Contains(body, "No requests in the last hour.") || len(values) != 60 || len(heights) != 0 {
		t.Fatalf("status %d:\n%s", code, body)
	}
}

// TestUsageDaysAndMonths: days and months are the site's, so the same
// instant falls in different buckets for a site in Australia/Sydney and
// one in UTC; a day across the start of daylight saving is 23 hours, and
// the plan's limit for it 23 hours' worth.
func TestUsageDaysAndMonths(t *testing.T) {
	syd := sydney(t)
	now := time.Date(2026, 10, 20, 12, 0, 0, 0, syd) // 20 Oct 2026 12:00 AEDT
	f := newFixtureWith(t, dashboard.Config{Now: func() time.Time { return now }})
	ctx := context.Background()
	utcSite, err := f.db.CreateSite(ctx, "Utopia Estates", model.Plan("professional"), "UTC")
	if err != nil {
		t.Fatal(err)
	}
	mustUser(t, f.db, "c@utopia.example", passwordB, "Utopia", utcSite.ID)
	day := time.Date(2026, 10, 19, 13, 30, 0, 0, time.UTC)  // 20 Oct 00:30 AEDT, 19 Oct 13:30 UTC
	month := time.Date(2026, 8, 31, 14, 30, 0, 0, time.UTC) // 1 Sep 00:30 AEST, 31 Aug 14:30 UTC
	old := time.Date(2025, 10, 1, 0, 0, 0, 0, time.UTC)     // outside the 12 months
	for _, site := range []string{f.siteA.ID, utcSite.ID} {
		if err := f.db.AddUsage(ctx, []store.UsageCount{
			{SiteID: site, Minute: day, Requests: 7}, {SiteID: site, Minute: day.Add(time.Minute), Requests: 5},
			{SiteID: site, Minute: month, Requests: 300}, {SiteID: site, Minute: old, Requests: 5000},
		}); err != nil {
			t.Fatal(err)
		}
	}
	bucket := func(labels, values []string, label string) string {
		for i, l := range labels {
			if l == label {
				return values[i]
			}
		}
		return "missing"
	}

	a := f.browser(t)
	a.mustLogin("a@bayside.example", passwordA)
	code, body := a.get("/dashboard/sites/" + f.siteA.ID + "/usage?period=day")
	labels, values, _ := chartBars(body)
	if code != http.StatusOK || len(labels) != 30 || labels[0] != "21 Sep" || labels[29] != "20 Oct" {
		t.Fatalf("days: %d %v", code, labels)
	}
	if bucket(labels, values, "20 Oct") != "12" || bucket(labels, values, "19 Oct") != "0" {
		t.Errorf("Sydney days: %v %v", labels, values)
	}
	m := limitRE.FindStringSubmatch(body)
	if m == nil {
		t.Fatal("no limit line on the days")
	}
	limits := strings.Fields(m[1])
	// 4 Oct 2026: clocks go from 02:00 to 03:00 AEST→AEDT, a 23-hour day.
	if got, want := bucket(labels, limits, "4 Oct"), fmt.Sprint(60*23*60); got != want {
		t.Errorf("limit on 4 Oct %s, want %s", got, want)
	}
	if got, want := bucket(labels, limits, "5 Oct"), fmt.Sprint(60*24*60); got != want {
		t.Errorf("limit on 5 Oct %s, want %s", got, want)
	}
	if !strings.Contains(body, "12 requests on 20 Oct AEDT") || !strings.Contains(body, "Day (Australia/Sydney)") {
		t.Errorf("days summary:\n%s", body)
	}
	code, body = a.get("/dashboard/sites/" + f.siteA.ID + "/usage?period=month")
	labels, values, _ = chartBars(body)
	if code != http.StatusOK || len(labels) != 12 || labels[0] != "Nov 2025" || labels[11] != "Oct 2026" ||
		bucket(labels, values, "Sep 2026") != "300" || bucket(labels, values, "Aug 2026") != "0" ||
		bucket(labels, values, "Oct 2026") != "12" || !strings.Contains(body, `<dd id="usage-total">312</dd>`) {
		t.Fatalf("Sydney months: %d %v %v", code, labels, values)
	}
	if m := limitRE.FindStringSubmatch(body); m == nil || bucket(labels, strings.Fields(m[1]), "Oct 2026") != fmt.Sprint(60*(31*24-1)*60) {
		t.Errorf("October's limit (one hour short): %v", m)
	}

	c := f.browser(t)
	c.mustLogin("c@utopia.example", passwordB)
	_, body = c.get("/dashboard/sites/" + utcSite.ID + "/usage?period=day")
	labels, values, _ = chartBars(body)
	if bucket(labels, values, "19 Oct") != "12" || bucket(labels, values, "20 Oct") != "0" ||
		!strings.Contains(body, "Day (UTC)") || !strings.Contains(body, "12 requests on 19 Oct UTC") {
		t.Errorf("UTC days: %v %v", labels, values)
	}
	// Professional: 600 a minute.
	if m := limitRE.FindStringSubmatch(body); m == nil || bucket(labels, strings.Fields(m[1]), "4 Oct") != fmt.Sprint(600*24*60) {
		t.Errorf("UTC limit on 4 Oct: %v", m)
	}
	_, body = c.get("/dashboard/sites/" + utcSite.ID + "/usage?period=month")
	labels, values, _ = chartBars(body)
	if bucket(labels, values, "Aug 2026") != "300" || bucket(labels, values, "Sep 2026") != "0" {
		t.Errorf("UTC months: %v %v", labels, values)
	}
	// And neither account sees the other's site.
	if code, _ := c.get("/dashboard/sites/" + f.siteA.ID + "/usage?period=month"); code != http.StatusNotFound {
		t.Errorf("another account's site: %d", code)
	}
}
