package dashboard_test

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/listgate/listgate/origin/store"
)

var barRE = regexp.MustCompile(`<rect class="bar" data-minute="(\d\d:\d\d)" data-requests="(\d+)" x="(\d+)" y="(\d+)" width="(\d+)" height="(\d+)">`)

func TestUsagePage(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Minute)
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
	if strings.Contains(body, "<script>") || strings.Contains(body, `data-requests="777"`) || strings.Contains(body, `data-requests="999"`) {
		t.Fatal("inline script, or another site's or an old count, on the page")
	}
	bars := barRE.FindAllStringSubmatch(body, -1)
	if len(bars) != 60 {
		t.Fatalf("%d bars, want 60", len(bars))
	}
	heights := map[string]string{}
	for _, m := range bars {
		if m[2] != "0" {
			heights[m[1]+" "+m[2]] = m[6]
		}
	}
	syd := sydney(t) // the site's time zone
	peak, other := now.Add(-10*time.Minute).In(syd).Format("15:04"), now.Add(-5*time.Minute).In(syd).Format("15:04")
	want := map[string]string{peak + " 40": "120", other + " 10": "30"}
	if fmt.Sprint(heights) != fmt.Sprint(want) {
		t.Fatalf("bars with requests %v, want %v", heights, want)
	}
	if bars[59][1] != now.In(syd).Format("15:04") {
		// The minute may have turned between seeding and the request.
		if bars[59][1] != now.Add(time.Minute).In(syd).Format("15:04") {
			t.Errorf("last bar is %s, want %s", bars[59][1], now.In(syd).Format("15:04"))
		}
	}
	if !strings.Contains(body, `<dd id="usage-total">50</dd>`) ||
		!strings.Contains(body, "40 requests at "+peak+" "+now.In(syd).Format("MST")) {
		t.Fatalf("total or peak missing:\n%s", body)
	}

	// Another account's site is 404; its own empty hour renders.
	b2 := f.browser(t)
	b2.mustLogin("B@Hillside.example", passwordB)
	if code, body := b2.get("/dashboard/sites/" + f.siteA.ID + "/usage"); code != http.StatusNotFound || strings.Contains(body, "usage-total") {
		t.Fatalf("other account's site: %d", code)
	}
	if code, body := b2.get("/dashboard/sites/" + f.siteB.ID + "/usage"); code != http.StatusOK ||
		!strings.Contains(body, `<dd id="usage-total">777</dd>`) {
		t.Fatalf("own site: %d", code)
	}
	if code, _ := b2.get("/dashboard/sites/not-a-uuid/usage"); code != http.StatusNotFound {
		t.Fatalf("bad site id: %d", code)
	}
}

func TestUsageEmptyHour(t *testing.T) {
	f := newFixture(t)
	b := f.browser(t)
	b.mustLogin("a@bayside.example", passwordA)
	code, body := b.get("/dashboard/sites/" + f.siteA.ID + "/usage")
	if code != http.StatusOK || !strings.Contains(body, "No requests in the last hour.") ||
		len(barRE.FindAllString(body, -1)) != 60 || strings.Contains(body, `height="1"`) {
		t.Fatalf("status %d:\n%s", code, body)
	}
}
