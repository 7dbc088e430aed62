package dashboard_test

import (
	"context"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/listgate/listgate/origin/ingest"
	"github.com/listgate/listgate/origin/store"
)

const feedHead = `<?xml version="1.0" encoding="UTF-8"?><propertyList date="2026-01-01-10:00:00" username="u" password="p">`

// agentsFeed names three agents of site A: Jane (two current listings and
// a sold one), Sam (one current listing, no e-mail) and Kim (only a
// withdrawn listing).
const agentsFeed = feedHead + `
<residential modTime="2026-02-01-10:00:00" status="current"><agentID>AG</agentID><uniqueID>C1</uniqueID>
	<listingAgent id="1"><name>Jane Citizen</name><email>jane@bayside.example</email><telephone type="mobile">0400 111 222</telephone></listingAgent>
	<headline>Sunny family home</headline>
	<address display="yes"><streetNumber>3</streetNumber><street>Beach Rd</street><suburb>Bayside</suburb><state>VIC</state><postcode>3000</postcode></address></residential>
<residential modTime="2026-02-01-10:00:00" status="current"><agentID>AG</agentID><uniqueID>C2</uniqueID>
	<listingAgent id="1"><name>Jane Citizen</name><email>jane@bayside.example</email></listingAgent>
	<listingAgent id="2"><name>Sam Nomail</name><telephone type="BH">03 9000 0000</telephone></listingAgent>
	<headline>Inner-city apartment</headline></residential>
<residential modTime="2026-02-01-10:00:00" status="sold"><agentID>AG</agentID><uniqueID>S1</uniqueID>
	<listingAgent id="1"><name>Jane Citizen</name><email>jane@bayside.example</email></listingAgent>
	<address display="yes"><streetNumber>12</streetNumber><street>Ocean Pde</street><suburb>Seaview</suburb><state>VIC</state><postcode>3001</postcode></address>
	<soldDetails><price display="no">900000</price><date>2026-01-20</date></soldDetails></residential>
<residential modTime="2026-02-01-10:00:00" status="withdrawn"><agentID>AG</agentID><uniqueID>W1</uniqueID>
	<listingAgent id="1"><name>Kim Quiet</name><email>kim@bayside.example</email></listingAgent></residential>
</propertyList>`

// importFeed imports a REAXML feed into site.
func importFeed(tb testing.TB, db *store.DB, siteID, feed string) {
	tb.Helper()
	if _, err := ingest.New(db, slog.New(slog.DiscardHandler)).Import(context.Background(), siteID, strings.NewReader(feed), ingest.Options{}); err != nil {
		tb.Fatal(err)
	}
}

// agentID is the id of site's agent of that e-mail or name.
func agentID(tb testing.TB, db *store.DB, siteID, name string) int64 {
	tb.Helper()
	var id int64
	if err := db.Pool.QueryRow(context.Background(), `SELECT id FROM agents WHERE site_id = $1 AND name = $2`, siteID, name).Scan(&id); err != nil {
		tb.Fatal(err)
	}
	return id
}

var agentRowRE = regexp.MustCompile(`(?s)<tr data-agent="\d+">\s*<td>([^<]*)</td>.*?<td class="num" data-col="listings">(\d+)</td>\s*<td class="num" data-col="leads">(\d+)</td>\s*<td data-col="round-robin">([^<]*)</td>`)

func TestAgentsPage(t *testing.T) {
	f := newFixture(t)
	importFeed(t, f.db, f.siteA.ID, agentsFeed)
	importFeed(t, f.db, f.siteB.ID, feedHead+`<residential modTime="2026-02-01-10:00:00" status="current"><agentID>AG</agentID><uniqueID>H1</uniqueID>
		<listingAgent id="1"><name>Hillside Harry</name><email>harry@hillside.example</email></listingAgent><headline>Hill home</headline></residential></propertyList>`)
	jane, sam := agentID(t, f.db, f.siteA.ID, "Jane Citizen"), agentID(t, f.db, f.siteA.ID, "Sam Nomail")
	now := time.Now()
	for i, tc := range []struct {
		agent   int64
		created time.Time
	}{
		{jane, now.Add(-time.Hour)}, {jane, now.Add(-29 * 24 * time.Hour)},
		{jane, now.Add(-31 * 24 * time.Hour)}, // too old
		{sam, now.Add(-2 * 24 * time.Hour)},
	} {
		id := seedLead(t, f.db, f.siteA.ID, "inquiry", "new", "Buyer", "buyer@example.com", "", tc.created)
		mustExec(t, f.db, `UPDATE leads SET assigned_agent_id = $3 WHERE site_id = $1 AND id = $2`, f.siteA.ID, id, tc.agent)
		_ = i
	}

	b := f.browser(t)
	b.mustLogin("a@bayside.example", passwordA)
	if _, body := b.get("/dashboard/sites/" + f.siteA.ID); !strings.Contains(body, `href="/dashboard/sites/`+f.siteA.ID+`/agents"`) {
		t.Fatal("the site page does not link the agents page")
	}
	code, body := b.get("/dashboard/sites/" + f.siteA.ID + "/agents")
	if code != http.StatusOK {
		t.Fatalf("agents: %d %s", code, body)
	}
	var got []string
	for _, m := range agentRowRE.FindAllStringSubmatch(body, -1) {
		got = append(got, strings.Join(m[1:], " | "))
	}
	want := []string{
		"Jane Citizen | 2 | 2 | takes turns",
		"Kim Quiet | 0 | 0 | takes turns",
		"Sam Nomail | 1 | 1 | no (no e-mail)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("agents\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, s := range []string{`href="mailto:jane@bayside.example"`, "0400 111 222", "03 9000 0000 (office)"} {
		if !strings.Contains(body, s) {
			t.Errorf("agents page lacks %s", s)
		}
	}
	if strings.Contains(body, "Hillside Harry") {
		t.Fatal("another site's agent on the page")
	}

	// Site isolation: B's user gets 404 for A's agents, and sees only B's.
	b2 := f.browser(t)
	b2.mustLogin("B@Hillside.example", passwordB)
	if code, body := b2.get("/dashboard/sites/" + f.siteA.ID + "/agents"); code != http.StatusNotFound ||
		strings.Contains(body, "Jane Citizen") {
		t.Fatalf("another account's agents: %d", code)
	}
	if code, body := b2.get("/dashboard/sites/" + f.siteB.ID + "/agents"); code != http.StatusOK ||
		!strings.Contains(body, "Hillside Harry") || strings.Contains(body, "Jane Citizen") {
		t.Fatalf("own agents: %d", code)
	}
	if code, _ := b2.get("/dashboard/sites/not-a-uuid/agents"); code != http.StatusNotFound {
		t.Fatalf("bad site id: %d", code)
	}
}

var listingRowRE = regexp.MustCompile(`(?s)<tr data-ref="\d+" data-status="(\w+)">\s*<td class="listing-title"><a href="/dashboard/sites/[^/]+/listings/\d+">([^<]*)</a><br>.*?<span class="status status-\w+">([^<]*)</span>`)

// TestListingsTitles: a sold or off-market listing is named by its
// headline, else its address, else its id, and its status is spelt out.
func TestListingsTitles(t *testing.T) {
	f := newFixture(t)
	importFeed(t, f.db, f.siteA.ID, agentsFeed)
	// C1 is sold later with a short record: it keeps its headline.
	importFeed(t, f.db, f.siteA.ID, feedHead+`<residential modTime="2026-02-02-10:00:00" status="sold"><agentID>AG</agentID><uniqueID>C1</uniqueID>
		<soldDetails><price display="yes">1200000</price><date>2026-02-02</date></soldDetails></residential>
		<residential modTime="2026-02-03-10:00:00" status="offmarket"><agentID>AG</agentID><uniqueID>O1</uniqueID>
		<headline>  </headline></residential></propertyList>`)
	b := f.browser(t)
	b.mustLogin("a@bayside.example", passwordA)
	code, body := b.get("/dashboard/sites/" + f.siteA.ID + "/listings")
	if code != http.StatusOK {
		t.Fatalf("listings: %d", code)
	}
	got := map[string]string{}
	for _, m := range listingRowRE.FindAllStringSubmatch(body, -1) {
		got[m[2]] = m[1] + " " + m[3]
	}
	want := map[string]string{
		"Sunny family home":             "sold Sold",
		"Inner-city apartment":          "current Current",
		"12 Ocean Pde Seaview VIC 3001": "sold Sold",
		"Listing W1":                    "withdrawn Withdrawn",
		"Listing O1":                    "offmarket Off market",
	}
	if len(got) != len(want) {
		t.Fatalf("rows %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%q: %q, want %q (all: %v)", k, got[k], v, got)
		}
	}
	if strings.Contains(body, "(no headline)") {
		t.Error("a listing without a name")
	}
	// The address and the id are searchable.
	if _, body := b.get("/dashboard/sites/" + f.siteA.ID + "/listings?q=ocean"); !strings.Contains(body, "12 Ocean Pde") {
		t.Error("search by address")
	}
	if _, body := b.get("/dashboard/sites/" + f.siteA.ID + "/listings?q=w1"); !strings.Contains(body, "Listing W1") {
		t.Error("search by id")
	}
}
