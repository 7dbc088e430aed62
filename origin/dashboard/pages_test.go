package dashboard_test

import (
	"context"
	"crypto/sha256"
	"encoding/csv"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/listgate/listgate/origin/store"
)

// seedLead inserts a lead of site with the given fields and returns its id.
func seedLead(tb testing.TB, db *store.DB, siteID, typ, status, name, email, agent string, created time.Time) int64 {
	tb.Helper()
	var id int64
	err := db.Pool.QueryRow(context.Background(), `INSERT INTO leads (site_id, type, priority, status, name, email,
		assigned_to, message, created_at) VALUES ($1, $2, 'warm', $3, $4, $5, nullif($6, ''), 'Hello', $7) RETURNING id`,
		siteID, typ, status, name, email, agent, created).Scan(&id)
	if err != nil {
		tb.Fatal(err)
	}
	return id
}

func seedListing(tb testing.TB, db *store.DB, siteID, uniqueID, headline, suburb string) int64 {
	tb.Helper()
	var ref int64
	err := db.Pool.QueryRow(context.Background(), `INSERT INTO listings (site_id, agency_id, unique_id, type, status,
		headline, suburb) VALUES ($1, 'AG1', $2, 'residential', 'current', $3, $4) RETURNING ref`,
		siteID, uniqueID, headline, suburb).Scan(&ref)
	if err != nil {
		tb.Fatal(err)
	}
	return ref
}

func mustExec(tb testing.TB, db *store.DB, sql string, args ...any) {
	tb.Helper()
	if _, err := db.Pool.Exec(context.Background(), sql, args...); err != nil {
		tb.Fatal(err)
	}
}

var leadRowRE = regexp.MustCompile(`data-lead-id="(\d+)"`)

func TestLeadsPage(t *testing.T) {
	f := newFixture(t)
	b := f.browser(t)
	b.mustLogin("a@bayside.example", passwordA)
	base := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	for i := range 53 {
		seedLead(t, f.db, f.siteA.ID, "general", "new", fmt.Sprintf("Bulk %02d", i), "", "", base.Add(time.Duration(i)*time.Minute))
	}
	newest := seedLead(t, f.db, f.siteA.ID, "appraisal", "contacted", "Newest Person", "n@example.com",
		"Agent@Bayside.example", base.AddDate(0, 0, 10))
	seedLead(t, f.db, f.siteB.ID, "general", "new", "Other Account Lead", "o@example.com", "", base)

	// The site page links the new pages.
	_, body := b.get("/dashboard/sites/" + f.siteA.ID)
	for _, p := range []string{"/leads", "/listings", "/clients"} {
		if !strings.Contains(body, `href="/dashboard/sites/`+f.siteA.ID+p+`"`) {
			t.Errorf("site page does not link %s", p)
		}
	}

	// Newest first, 50 per page.
	code, body := b.get("/dashboard/sites/" + f.siteA.ID + "/leads")
	rows := leadRowRE.FindAllStringSubmatch(body, -1)
	if code != http.StatusOK || len(rows) != 50 || rows[0][1] != fmt.Sprint(newest) ||
		strings.Contains(body, "Other Account Lead") || !strings.Contains(body, `rel="next"`) {
		t.Fatalf("page 1: %d, %d rows %v", code, len(rows), body)
	}
	code, body = b.get("/dashboard/sites/" + f.siteA.ID + "/leads?page=2")
	if rows := leadRowRE.FindAllStringSubmatch(body, -1); code != http.StatusOK || len(rows) != 4 ||
		!strings.Contains(body, "Bulk 00") || strings.Contains(body, `rel="next"`) {
		t.Fatalf("page 2: %d, %d rows", code, len(rows))
	}

	// Filters.
	for _, tc := range []struct {
		query string
		want  int
	}{
		{"status=contacted", 1},
		{"status=new", 50},
		{"status=spam", 0},
		{"type=appraisal", 1},
		{"agent=agent%40bayside.example", 1},
		{"agent=nobody%40bayside.example", 0},
		{"from=2025-03-05&to=2025-03-20", 1},
		{"from=2025-03-01&to=2025-03-01", 50},
		{"to=2025-02-28", 0},
	} {
		code, body := b.get("/dashboard/sites/" + f.siteA.ID + "/leads?" + tc.query)
		if n := len(leadRowRE.FindAllString(body, -1)); code != http.StatusOK || n != tc.want {
			t.Errorf("%s: %d, %d rows, want %d", tc.query, code, n, tc.want)
		}
	}
	if code, _ := b.get("/dashboard/sites/" + f.siteA.ID + "/leads?status=bogus"); code != http.StatusUnprocessableEntity {
		t.Errorf("unknown status filter: %d", code)
	}
}

func TestLeadDetailAndStatus(t *testing.T) {
	f := newFixture(t)
	b := f.browser(t)
	b.mustLogin("a@bayside.example", passwordA)
	id := seedLead(t, f.db, f.siteA.ID, "inquiry", "new", "Jane Buyer", "jane@example.com", "sam@bayside.example", time.Now())
	mustExec(t, f.db, `INSERT INTO lead_submissions (site_id, lead_id, duplicate, payload, created_at) VALUES
		($1, $2, false, '{"name":"Jane Buyer","email":"jane@example.com","phone":"0400 000 001","message":"First try"}', now() - interval '1 hour'),
		($1, $2, true, '{"name":"Jane B","email":"jane@example.com","phone":"0400 000 001","message":"Second try"}', now())`,
		f.siteA.ID, id)
	mustExec(t, f.db, `INSERT INTO lead_assignments (site_id, lead_id, assigned_to, reason) VALUES
		($1, $2, 'sam@bayside.example', 'round_robin')`, f.siteA.ID, id)
	path := fmt.Sprintf("/dashboard/sites/%s/leads/%d", f.siteA.ID, id)

	code, body := b.get(path)
	for _, want := range []string{"First try", "Second try", "Jane B<", "0400 000 001", "round_robin",
		"sam@bayside.example", `<td>yes</td>`, `<td>no</td>`} {
		if !strings.Contains(body, want) {
			t.Errorf("detail lacks %q", want)
		}
	}
	if code != http.StatusOK {
		t.Fatalf("detail: %d", code)
	}
	status := func() string {
		var s string
		if err := f.db.Pool.QueryRow(context.Background(), `SELECT status FROM leads WHERE id = $1`, id).Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	token := b.csrf(path)
	// Without the CSRF token: 403, nothing changes.
	if code, _ := b.post(path+"/status", url.Values{"status": {"qualified"}}); code != http.StatusForbidden || status() != "new" {
		t.Fatalf("no CSRF: %d, %s", code, status())
	}
	// Only the allowed statuses.
	if code, _ := b.post(path+"/status", url.Values{"csrf_token": {token}, "status": {"won"}}); code != http.StatusUnprocessableEntity ||
		status() != "new" {
		t.Fatalf("bad status: %d, %s", code, status())
	}
	code, body = b.post(path+"/status", url.Values{"csrf_token": {token}, "status": {"qualified"}})
	if code != http.StatusOK || status() != "qualified" || !strings.Contains(body, `<dd id="lead-status">qualified</dd>`) ||
		!strings.Contains(body, "status is changed") {
		t.Fatalf("change status: %d %s, %s", code, status(), body)
	}
	// An unknown lead, and a malformed id, are 404.
	if code, _ := b.post(fmt.Sprintf("/dashboard/sites/%s/leads/%d/status", f.siteA.ID, id+1000),
		url.Values{"csrf_token": {token}, "status": {"spam"}}); code != http.StatusNotFound {
		t.Errorf("unknown lead: %d", code)
	}
	if code, _ := b.get("/dashboard/sites/" + f.siteA.ID + "/leads/abc"); code != http.StatusNotFound {
		t.Errorf("malformed lead id: %d", code)
	}
}

func TestLeadsExport(t *testing.T) {
	f := newFixture(t)
	b := f.browser(t)
	b.mustLogin("a@bayside.example", passwordA)
	now := time.Now()
	seedLead(t, f.db, f.siteA.ID, "inquiry", "new", "=HYPERLINK(\"http://evil\")", "x@example.com", "", now.Add(-time.Hour))
	seedLead(t, f.db, f.siteA.ID, "inquiry", "spam", "+cmd", "y@example.com", "", now.Add(-2*time.Hour))
	seedLead(t, f.db, f.siteA.ID, "general", "new", "@SUM(A1)", "z@example.com", "", now.Add(-3*time.Hour))
	seedLead(t, f.db, f.siteA.ID, "general", "new", "-2+3", "w@example.com", "", now.Add(-4*time.Hour))
	seedLead(t, f.db, f.siteA.ID, "general", "new", "Plain, \"quoted\" name", "v@example.com", "", now.Add(-5*time.Hour))

	resp, err := b.c.Get(f.srv.URL + "/dashboard/sites/" + f.siteA.ID + "/leads/export?status=new")
	if err != nil {
		t.Fatal(err)
	}
	code, body := readResp(t, resp)
	if code != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/csv") ||
		!strings.HasPrefix(resp.Header.Get("Content-Disposition"), "attachment") {
		t.Fatalf("export: %d %v", code, resp.Header)
	}
	recs, err := csv.NewReader(strings.NewReader(body)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 5 || recs[0][5] != "name" {
		t.Fatalf("records: %q", recs)
	}
	var names []string
	for _, r := range recs[1:] {
		names = append(names, r[5])
		if r[4] != "new" {
			t.Errorf("status filter not applied: %q", r)
		}
	}
	want := []string{"'=HYPERLINK(\"http://evil\")", "'@SUM(A1)", "'-2+3", "Plain, \"quoted\" name"}
	if fmt.Sprint(names) != fmt.Sprint(want) {
		t.Fatalf("names %q, want %q", names, want)
	}
	// The list page links the export with its filters.
	_, page := b.get("/dashboard/sites/" + f.siteA.ID + "/leads?status=new")
	if !strings.Contains(page, `/leads/export?status=new"`) {
		t.Errorf("export link lacks the filter")
	}
}

func TestListingsPage(t *testing.T) {
	f := newFixture(t)
	b := f.browser(t)
	b.mustLogin("a@bayside.example", passwordA)
	ref := seedListing(t, f.db, f.siteA.ID, "L1", "Sunny family home", "Bayside")
	seedListing(t, f.db, f.siteA.ID, "L2", "Inner-city apartment", "Carlton")
	for i := range 55 {
		seedListing(t, f.db, f.siteA.ID, fmt.Sprintf("B%02d", i), "Bulk 100% listing", "Elsewhere")
	}
	seedListing(t, f.db, f.siteB.ID, "L1", "Other account home", "Bayside")
	path := "/dashboard/sites/" + f.siteA.ID + "/listings"

	code, body := b.get(path + "?q=bayside")
	if code != http.StatusOK || !strings.Contains(body, "Sunny family home") || strings.Contains(body, "Inner-city") ||
		strings.Contains(body, "Other account home") {
		t.Fatalf("search by suburb: %d %s", code, body)
	}
	if _, body := b.get(path + "?q=APARTMENT"); !strings.Contains(body, "Inner-city apartment") || strings.Contains(body, "Sunny") {
		t.Fatalf("search by headline: %s", body)
	}
	if _, body := b.get(path + "?q=%25"); strings.Count(body, "data-ref=") != 50 || !strings.Contains(body, `rel="next"`) {
		t.Fatalf("%% is matched literally and pages hold 50")
	}
	if _, body := b.get(path + "?q=%25&page=2"); strings.Count(body, "data-ref=") != 5 || strings.Contains(body, "Sunny") {
		t.Fatalf("page 2 of the search")
	}

	featured := func() bool {
		var v bool
		if err := f.db.Pool.QueryRow(context.Background(), `SELECT featured FROM listings WHERE ref = $1`, ref).Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	events := func() int {
		var n int
		if err := f.db.Pool.QueryRow(context.Background(), `SELECT count(*) FROM events WHERE site_id = $1 AND type = $2`,
			f.siteA.ID, store.EventContentChanged).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	action := fmt.Sprintf("%s/%d/featured", path, ref)
	if code, _ := b.post(action, url.Values{"featured": {"true"}}); code != http.StatusForbidden || featured() || events() != 0 {
		t.Fatalf("no CSRF: %d", code)
	}
	token := b.csrf(path)
	code, body = b.post(action, url.Values{"csrf_token": {token}, "featured": {"true"}, "q": {"sunny"}})
	if code != http.StatusOK || !featured() || events() != 1 || !strings.Contains(body, "Unfeature") {
		t.Fatalf("feature: %d featured=%v events=%d", code, featured(), events())
	}
	var payload string
	_ = f.db.Pool.QueryRow(context.Background(), `SELECT payload::text FROM events WHERE site_id = $1`, f.siteA.ID).Scan(&payload)
	if !strings.Contains(payload, `"featured": true`) {
		t.Errorf("event payload %s", payload)
	}
	if code, _ := b.post(action, url.Values{"csrf_token": {token}, "featured": {"false"}}); code != http.StatusOK || featured() || events() != 2 {
		t.Fatalf("unfeature: %d featured=%v events=%d", code, featured(), events())
	}
	if code, _ := b.post(action, url.Values{"csrf_token": {token}, "featured": {"maybe"}}); code != http.StatusUnprocessableEntity || events() != 2 {
		t.Fatalf("bad value: %d", code)
	}
	if code, _ := b.post(fmt.Sprintf("%s/%d/featured", path, ref+100000), url.Values{"csrf_token": {token},
		"featured": {"true"}}); code != http.StatusNotFound || events() != 2 {
		t.Fatalf("unknown listing: %d", code)
	}
}

var clientIDRE = regexp.MustCompile(`id="client-id" readonly value="([^"]+)"`)

func TestClientsPage(t *testing.T) {
	f := newFixture(t)
	b := f.browser(t)
	b.mustLogin("a@bayside.example", passwordA)
	path := "/dashboard/sites/" + f.siteA.ID + "/clients"
	code, body := b.get(path)
	if code != http.StatusOK || !strings.Contains(body, "no upload clients yet") {
		t.Fatalf("empty: %d %s", code, body)
	}
	if code, _ := b.post(path, url.Values{"name": {"CRM"}}); code != http.StatusForbidden {
		t.Fatalf("no CSRF: %d", code)
	}
	token := b.csrf(path)
	if code, body := b.post(path, url.Values{"csrf_token": {token}, "name": {"  "}}); code != http.StatusUnprocessableEntity ||
		!strings.Contains(body, "Give the client a name") {
		t.Fatalf("blank name: %d", code)
	}
	code, body = b.post(path, url.Values{"csrf_token": {token}, "name": {"CRM export"}})
	sm, im := secretRE.FindStringSubmatch(body), clientIDRE.FindStringSubmatch(body)
	if code != http.StatusOK || sm == nil || im == nil {
		t.Fatalf("create: %d %s", code, body)
	}
	secret, clientID := sm[1], im[1]
	// Only the hash is stored, and the list never shows the secret.
	var stored []byte
	if err := f.db.Pool.QueryRow(context.Background(), `SELECT secret_hash FROM oauth_clients WHERE client_id = $1 AND site_id = $2`,
		clientID, f.siteA.ID).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if h := sha256.Sum256([]byte(secret)); string(stored) != string(h[:]) {
		t.Fatal("the stored hash is not the secret's SHA-256")
	}
	_, body = b.get(path)
	if !strings.Contains(body, clientID) || strings.Contains(body, secret) || !strings.Contains(body, "CRM export") {
		t.Fatalf("list: %s", body)
	}
	revoked := func() bool {
		c, _, err := f.db.OAuthClientByID(context.Background(), clientID)
		if err != nil {
			t.Fatal(err)
		}
		return c.RevokedAt != nil
	}
	action := path + "/" + clientID + "/revoke"
	if code, _ := b.post(action, nil); code != http.StatusForbidden || revoked() {
		t.Fatalf("revoke without CSRF: %d", code)
	}
	code, body = b.post(action, url.Values{"csrf_token": {token}})
	if code != http.StatusOK || !revoked() || !strings.Contains(body, "revoked") {
		t.Fatalf("revoke: %d %s", code, body)
	}
	if code, _ := b.post(path+"/lgc_unknown/revoke", url.Values{"csrf_token": {token}}); code != http.StatusNotFound {
		t.Fatalf("unknown client: %d", code)
	}
}

// TestSitePagesOtherAccount tries every new page and action on another
// account's site (and on its objects through one's own site): all 404,
// and nothing changes.
func TestSitePagesOtherAccount(t *testing.T) {
	f := newFixture(t)
	leadA := seedLead(t, f.db, f.siteA.ID, "inquiry", "new", "Jane", "jane@example.com", "", time.Now())
	refA := seedListing(t, f.db, f.siteA.ID, "L1", "Sunny home", "Bayside")
	owner := f.browser(t)
	owner.mustLogin("a@bayside.example", passwordA)
	token := owner.csrf("/dashboard/sites/" + f.siteA.ID + "/clients")
	_, body := owner.post("/dashboard/sites/"+f.siteA.ID+"/clients", url.Values{"csrf_token": {token}, "name": {"CRM"}})
	clientA := clientIDRE.FindStringSubmatch(body)[1]

	b := f.browser(t)
	b.mustLogin("B@Hillside.example", passwordB)
	tokenB := b.csrf("/dashboard")
	a, own := "/dashboard/sites/"+f.siteA.ID, "/dashboard/sites/"+f.siteB.ID
	for _, p := range []string{a + "/leads", a + "/leads/export", fmt.Sprintf("%s/leads/%d", a, leadA),
		a + "/listings", a + "/clients",
		// Site A's objects through site B.
		fmt.Sprintf("%s/leads/%d", own, leadA)} {
		if code, body := b.get(p); code != http.StatusNotFound || strings.Contains(body, "Jane") {
			t.Errorf("GET %s: %d", p, code)
		}
	}
	for _, tc := range []struct {
		path string
		form url.Values
	}{
		{fmt.Sprintf("%s/leads/%d/status", a, leadA), url.Values{"status": {"spam"}}},
		{fmt.Sprintf("%s/leads/%d/status", own, leadA), url.Values{"status": {"spam"}}},
		{fmt.Sprintf("%s/listings/%d/featured", a, refA), url.Values{"featured": {"true"}}},
		{fmt.Sprintf("%s/listings/%d/featured", own, refA), url.Values{"featured": {"true"}}},
		{a + "/clients", url.Values{"name": {"Sneaky"}}},
		{a + "/clients/" + clientA + "/revoke", url.Values{}},
		{own + "/clients/" + clientA + "/revoke", url.Values{}},
	} {
		tc.form.Set("csrf_token", tokenB)
		if code, _ := b.post(tc.path, tc.form); code != http.StatusNotFound {
			t.Errorf("POST %s: %d", tc.path, code)
		}
	}
	var status string
	var featured bool
	var clients, events int
	ctx := context.Background()
	_ = f.db.Pool.QueryRow(ctx, `SELECT status FROM leads WHERE id = $1`, leadA).Scan(&status)
	_ = f.db.Pool.QueryRow(ctx, `SELECT featured FROM listings WHERE ref = $1`, refA).Scan(&featured)
	_ = f.db.Pool.QueryRow(ctx, `SELECT count(*) FROM oauth_clients WHERE revoked_at IS NULL`).Scan(&clients)
	_ = f.db.Pool.QueryRow(ctx, `SELECT count(*) FROM events WHERE type = $1`, store.EventContentChanged).Scan(&events)
	if status != "new" || featured || clients != 1 || events != 0 {
		t.Fatalf("changed: status %s, featured %v, %d live clients, %d events", status, featured, clients, events)
	}
}
