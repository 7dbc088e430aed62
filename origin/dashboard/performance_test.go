package dashboard_test

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/listgate/listgate/origin/dashboard"
	"github.com/listgate/listgate/origin/store"
)

// reportNow is the clock of the listing performance tests: Thursday 26
// November 2026, 14:00 in Sydney (AEDT). Its week began Monday 23 November;
// the vendor report's 8 weeks begin Monday 5 October.
var reportNow = time.Date(2026, 11, 26, 3, 0, 0, 0, time.UTC)

// day is a date of the site's calendar, as store.ViewCount wants it.
func day(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }

// performanceFixture is a fixture whose dashboard's clock is reportNow,
// with a listing of site A ("12 Ocean Pde", first imported 1 October
// 2026, a photo at photoURL) and its views and leads:
//
//	4 Oct  (before the report's weeks)  100 views, 50 visitors, 1 lead
//	5 Oct  (the first week)               3 views,  3 visitors
//	22 Nov (Sunday, the previous week)    5 views,  4 visitors
//	23 Nov (Monday, this week)           20 views, 15 visitors, 2 leads (one at 00:30 AEDT, Sunday in UTC)
//	26 Nov (today)                       10 views,  7 visitors, and a spam lead
//
// and a listing of site B with more views than any of A's.
func performanceFixture(t *testing.T, photoURL string) (f *fixture, ref, refB int64) {
	t.Helper()
	f = newFixtureWith(t, dashboard.Config{Now: func() time.Time { return reportNow }})
	ctx := context.Background()
	ref = seedListing(t, f.db, f.siteA.ID, "OCEAN12", "Light-filled family home by the sea", "Seaview")
	mustExec(t, f.db, `UPDATE listings SET search_address = '12 Ocean Pde Seaview VIC 3001', state = 'VIC',
		postcode = '3001', created_at = '2026-10-01T00:00:00Z', modified_at = '2026-11-20T00:00:00Z'
		WHERE site_id = $1 AND ref = $2`, f.siteA.ID, ref)
	if photoURL != "" {
		mustExec(t, f.db, `INSERT INTO media (site_id, listing_ref, kind, slot, url, position) VALUES
			($1, $2, 'image', 'b', 'https://img.example/second.jpg', 2),
			($1, $2, 'floorplan', 'f', 'https://img.example/plan.jpg', 0),
			($1, $2, 'image', 'a', $3, 1)`, f.siteA.ID, ref, photoURL)
	}
	other := seedListing(t, f.db, f.siteA.ID, "QUIET1", "Quiet unit", "Inland")
	refB = seedListing(t, f.db, f.siteB.ID, "HILL1", "Hillside secret", "Hilltop")
	counts := []store.ViewCount{
		{SiteID: f.siteA.ID, ListingRef: ref, Day: day(2026, 10, 4), Views: 100, Visitors: 50},
		{SiteID: f.siteA.ID, ListingRef: ref, Day: day(2026, 10, 5), Views: 3, Visitors: 3},
		{SiteID: f.siteA.ID, ListingRef: ref, Day: day(2026, 11, 22), Views: 5, Visitors: 4},
		{SiteID: f.siteA.ID, ListingRef: ref, Day: day(2026, 11, 23), Views: 20, Visitors: 15},
		{SiteID: f.siteA.ID, ListingRef: ref, Day: day(2026, 11, 26), Views: 10, Visitors: 7},
		{SiteID: f.siteA.ID, ListingRef: other, Day: day(2026, 11, 25), Views: 4, Visitors: 4},
		{SiteID: f.siteB.ID, ListingRef: refB, Day: day(2026, 11, 25), Views: 900, Visitors: 800},
	}
	if applied, err := f.db.ApplyViewBatch(ctx, store.ViewBatch{ID: "7f0c2b4e-98a1-4a55-9a0e-2b8f7c1d0e01",
		EdgeID: "edge-1", Counts: counts}); err != nil || !applied {
		t.Fatalf("apply views: %v %v", applied, err)
	}
	for _, l := range []struct {
		status string
		at     time.Time
	}{
		{"new", time.Date(2026, 10, 4, 2, 0, 0, 0, time.UTC)},
		{"new", time.Date(2026, 11, 22, 13, 30, 0, 0, time.UTC)}, // 23 Nov 00:30 AEDT
		{"contacted", time.Date(2026, 11, 23, 1, 0, 0, 0, time.UTC)},
		{"spam", time.Date(2026, 11, 26, 1, 0, 0, 0, time.UTC)},
	} {
		id := seedLead(t, f.db, f.siteA.ID, "inquiry", l.status, "Buyer", "buyer@example.com", "", l.at)
		mustExec(t, f.db, `UPDATE leads SET listing_ref = $3 WHERE site_id = $1 AND id = $2`, f.siteA.ID, id, ref)
	}
	return f, ref, refB
}

// total reads a figure of the totals (data-total) of a page.
func total(body, name string) string {
	m := regexp.MustCompile(`data-total="` + name + `">([^<]*)<`).FindStringSubmatch(body)
	if m == nil {
		return "(none)"
	}
	return m[1]
}

var weekRowRE = regexp.MustCompile(`(?s)<tr[^>]*>\s*<th scope="row">([^<]*)</th>\s*<td class="num">([^<]*)</td><td class="num">([^<]*)</td><td class="num">([^<]*)</td><td class="num">([^<]*)</td>`)

func TestListingPage(t *testing.T) {
	f, ref, _ := performanceFixture(t, "https://img.example/first.jpg")
	b := f.browser(t)
	b.mustLogin("a@bayside.example", passwordA)
	resp, err := b.c.Get(fmt.Sprintf("%s/dashboard/sites/%s/listings/%d", f.srv.URL, f.siteA.ID, ref))
	if err != nil {
		t.Fatal(err)
	}
	code, body := readResp(t, resp)
	if code != http.StatusOK {
		t.Fatalf("listing page: %d %s", code, body)
	}
	// The last 30 days in Sydney, 28 Oct – 26 Nov: 4 Oct and 5 Oct are
	// out, the spam lead is not an enquiry.
	for name, want := range map[string]string{"views": "35", "visitors": "26", "leads": "2", "per100": "5.71", "dom": "56"} {
		if got := total(body, name); got != want {
			t.Errorf("total %s = %s, want %s", name, got, want)
		}
	}
	views, leads, _ := strings.Cut(body, `id="enquiries-`)
	if n, m := strings.Count(views, `<rect class="bar s0"`), strings.Count(leads, `<rect class="bar s0"`); n != 30 || m != 30 {
		t.Errorf("%d view bars and %d enquiry bars, want 30 each", n, m)
	}
	if !strings.Contains(leads, `data-label="23 Nov" data-value="2"`) {
		t.Error("no bar of 23 Nov's 2 enquiries")
	}
	for _, s := range []string{`data-label="23 Nov" data-value="20"`, `data-label="28 Oct"`, `id="views-table"`,
		`id="enquiries-table"`, `12 Ocean Pde Seaview VIC 3001`, `src="https://img.example/first.jpg"`,
		fmt.Sprintf(`href="/dashboard/sites/%s/listings/%d/report"`, f.siteA.ID, ref)} {
		if !strings.Contains(body, s) {
			t.Errorf("listing page lacks %s", s)
		}
	}
	if strings.Contains(body, `data-label="27 Oct"`) {
		t.Error("the chart starts before the 30 days")
	}
	if c := resp.Header.Get("Content-Security-Policy"); !strings.Contains(c, "img-src 'self' https: http:") ||
		!strings.Contains(c, "default-src 'self'") {
		t.Errorf("CSP %q", c)
	}
	// The listings page links to it.
	if _, list := b.get("/dashboard/sites/" + f.siteA.ID + "/listings"); !strings.Contains(list,
		fmt.Sprintf(`href="/dashboard/sites/%s/listings/%d"`, f.siteA.ID, ref)) {
		t.Error("the listings page does not link the listing's page")
	}
}

func TestVendorReport(t *testing.T) {
	f, ref, _ := performanceFixture(t, "https://img.example/first.jpg")
	b := f.browser(t)
	b.mustLogin("a@bayside.example", passwordA)
	path := fmt.Sprintf("/dashboard/sites/%s/listings/%d/report", f.siteA.ID, ref)
	code, body := b.get(path)
	if code != http.StatusOK {
		t.Fatalf("report: %d %s", code, body)
	}
	for _, s := range []string{`id="report-agency">Bayside Realty<`, `id="report-address">12 Ocean Pde Seaview VIC 3001<`,
		`id="report-dom">56<`, `src="https://img.example/first.jpg"`, "Australia/Sydney"} {
		if !strings.Contains(body, s) {
			t.Errorf("report lacks %s", s)
		}
	}
	// Since listed: every day and lead, spam excluded.
	for name, want := range map[string]string{"views": "138", "visitors": "79", "leads": "3", "per100": "2.17"} {
		if got := total(body, name); got != want {
			t.Errorf("total since listed %s = %s, want %s", name, got, want)
		}
	}
	rows := weekRowRE.FindAllStringSubmatch(body, -1)
	if len(rows) != 9 {
		t.Fatalf("%d rows of weeks and total, want 9: %q", len(rows), rows)
	}
	want := [][]string{
		{"Mon 5 Oct – Sun 11 Oct", "3", "3", "0", "0"},
		{"Mon 12 Oct – Sun 18 Oct", "0", "0", "0", "—"},
	}
	if got := rows[0][1:]; strings.Join(got, "|") != strings.Join(want[0], "|") {
		t.Errorf("first week %q", got)
	}
	if got := rows[1][1:]; strings.Join(got, "|") != strings.Join(want[1], "|") {
		t.Errorf("second week %q", got)
	}
	// The week of Sunday 22 Nov holds its views; this week, from Monday
	// 23 Nov (its first lead came at 00:30 in Sydney, still Sunday in UTC),
	// is counted to today.
	if got := strings.Join(rows[6][1:], "|"); got != "Mon 16 Nov – Sun 22 Nov|5|4|0|0" {
		t.Errorf("previous week %q", got)
	}
	if got := strings.Join(rows[7][1:], "|"); got != "Mon 23 Nov – Thu 26 Nov (to date)|30|22|2|6.67" {
		t.Errorf("this week %q", got)
	}
	if got := strings.Join(rows[8][1:], "|"); got != "8 weeks|38|29|2|5.26" {
		t.Errorf("8 weeks' total %q", got)
	}

	// A deleted listing's report shows its history.
	mustExec(t, f.db, `UPDATE listings SET status = 'deleted' WHERE ref = $1`, ref)
	code, body = b.get(path)
	if code != http.StatusOK || total(body, "views") != "138" || !strings.Contains(body, "Deleted") {
		t.Fatalf("deleted listing's report: %d, views %s", code, total(body, "views"))
	}
}

func TestVendorReportWithoutPhotoOrViews(t *testing.T) {
	f := newFixtureWith(t, dashboard.Config{Now: func() time.Time { return reportNow }})
	ref := seedListing(t, f.db, f.siteA.ID, "NEW1", "", "Bayside")
	b := f.browser(t)
	b.mustLogin("a@bayside.example", passwordA)
	code, body := b.get(fmt.Sprintf("/dashboard/sites/%s/listings/%d/report", f.siteA.ID, ref))
	if code != http.StatusOK || strings.Contains(body, "<img") || total(body, "views") != "0" ||
		total(body, "per100") != "—" || !strings.Contains(body, `id="report-address">Bayside<`) {
		t.Fatalf("report of a new listing: %d %s", code, body)
	}
	if rows := weekRowRE.FindAllStringSubmatch(body, -1); len(rows) != 9 {
		t.Fatalf("%d rows", len(rows))
	}
}

func TestPerformancePage(t *testing.T) {
	f, ref, _ := performanceFixture(t, "")
	b := f.browser(t)
	b.mustLogin("a@bayside.example", passwordA)
	if _, site := b.get("/dashboard/sites/" + f.siteA.ID); !strings.Contains(site, `/performance">Listing performance</a>`) {
		t.Fatal("the site's page does not link the listing performance")
	}
	code, body := b.get("/dashboard/sites/" + f.siteA.ID + "/performance")
	if code != http.StatusOK {
		t.Fatalf("performance: %d %s", code, body)
	}
	// The last 7 days, 20–26 Nov: the listing's 35 views first, the quiet
	// one's 4 next; site B's listing is not there.
	rowRE := regexp.MustCompile(`(?s)<tr data-ref="(\d+)".*?data-col="views">([^<]*)<.*?data-col="visitors">([^<]*)<.*?data-col="leads">([^<]*)<`)
	rows := rowRE.FindAllStringSubmatch(body, -1)
	if len(rows) != 2 || rows[0][1] != fmt.Sprint(ref) || strings.Join(rows[0][2:], "|") != "35|26|2" ||
		rows[1][2] != "4" || strings.Contains(body, "Hillside secret") {
		t.Fatalf("top listings %q", rows)
	}
	if !strings.Contains(body, "12 Ocean Pde Seaview VIC 3001") || !strings.Contains(body, "Fri 20 Nov – Thu 26 Nov 2026") {
		t.Error("no address or period")
	}
	_, body = b.get("/dashboard/sites/" + f.siteA.ID + "/performance?sort=leads")
	if rows := rowRE.FindAllStringSubmatch(body, -1); len(rows) != 2 || rows[0][1] != fmt.Sprint(ref) {
		t.Fatalf("by enquiries %q", rows)
	}
}

// TestListingPagesOtherAccount: another account's user gets 404 for site
// A's listing pages and reports, and so does site A's user for site B's
// listing named under site A.
func TestListingPagesOtherAccount(t *testing.T) {
	f, ref, refB := performanceFixture(t, "https://img.example/first.jpg")
	a, own := "/dashboard/sites/"+f.siteA.ID, "/dashboard/sites/"+f.siteB.ID
	b := f.browser(t)
	b.mustLogin("B@Hillside.example", passwordB)
	for _, p := range []string{fmt.Sprintf("%s/listings/%d", a, ref), fmt.Sprintf("%s/listings/%d/report", a, ref),
		a + "/performance", fmt.Sprintf("%s/listings/%d", own, ref), fmt.Sprintf("%s/listings/%d/report", own, ref)} {
		if code, body := b.get(p); code != http.StatusNotFound || strings.Contains(body, "Ocean") || strings.Contains(body, "Bayside") {
			t.Errorf("GET %s as site B's user: %d", p, code)
		}
	}
	owner := f.browser(t)
	owner.mustLogin("a@bayside.example", passwordA)
	for _, p := range []string{fmt.Sprintf("%s/listings/%d", a, refB), fmt.Sprintf("%s/listings/%d/report", a, refB),
		fmt.Sprintf("%s/listings/%d/report", own, refB), own + "/performance",
		a + "/listings/0/report", a + "/listings/-1", a + "/listings/abc/report", a + "/listings/99999999999999999999"} {
		if code, body := owner.get(p); code != http.StatusNotFound || strings.Contains(body, "Hillside secret") {
			t.Errorf("GET %s as site A's user: %d", p, code)
		}
	}
	// Signed out, the report asks to sign in.
	anon := f.browser(t)
	if code, body := anon.get(fmt.Sprintf("%s/listings/%d/report", a, ref)); code != http.StatusOK ||
		!strings.Contains(body, "<h1>Sign in</h1>") || strings.Contains(body, "Ocean") {
		t.Errorf("signed out: %d", code)
	}
}
