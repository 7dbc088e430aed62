package dashboard_test

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/listgate/listgate/origin/dashboard"
	"github.com/listgate/listgate/origin/store"
	"github.com/listgate/listgate/pairing"
	"github.com/listgate/listgate/pkg/webhook"
)

// testSecretKey is the operator's master key of the webhook tests.
var testSecretKey = []byte("0123456789abcdef0123456789abcdef-dashboard")

func newWebhookFixture(tb testing.TB) *fixture {
	tb.Helper()
	return newFixtureWith(tb, dashboard.Config{SecretKey: testSecretKey, EmailOn: true})
}

func mustEndpoint(tb testing.TB, db *store.DB, siteID, u string, events ...string) store.WebhookEndpoint {
	tb.Helper()
	ep, err := db.CreateWebhookEndpoint(context.Background(), siteID, u, events)
	if err != nil {
		tb.Fatal(err)
	}
	return ep
}

func mustGetEndpoint(tb testing.TB, db *store.DB, siteID, id string) store.WebhookEndpoint {
	tb.Helper()
	ep, err := db.WebhookEndpoint(context.Background(), siteID, id)
	if err != nil {
		tb.Fatal(err)
	}
	return ep
}

// mustLeadEvent writes a lead event to the outbox, as a lead's transaction
// does; the trigger fans it out into deliveries. It returns the event's id.
func mustLeadEvent(tb testing.TB, db *store.DB, siteID, typ string, leadID int64) int64 {
	tb.Helper()
	var id int64
	err := db.Pool.QueryRow(context.Background(), `INSERT INTO events (site_id, type, payload)
		VALUES ($1, $2, jsonb_build_object('lead_id', $3::bigint)) RETURNING id`, siteID, typ, leadID).Scan(&id)
	if err != nil {
		tb.Fatal(err)
	}
	return id
}

// mustDelivery returns the first delivery of an event to an endpoint.
func mustDelivery(tb testing.TB, db *store.DB, endpointID string, eventID int64) int64 {
	tb.Helper()
	var id int64
	err := db.Pool.QueryRow(context.Background(), `SELECT id FROM deliveries WHERE endpoint_id = $1 AND event_id = $2
		ORDER BY id LIMIT 1`, endpointID, eventID).Scan(&id)
	if err != nil {
		tb.Fatal(err)
	}
	return id
}

// mustAttempt records an attempt of a delivery as a worker does: it claims
// the delivery (raising its attempt count), then finishes it with r.
func mustAttempt(tb testing.TB, db *store.DB, siteID, endpointID string, id int64, r store.DeliveryResult) {
	tb.Helper()
	ctx := context.Background()
	if err := db.Pool.QueryRow(ctx, `UPDATE deliveries SET attempts = attempts + 1 WHERE id = $1 RETURNING attempts`,
		id).Scan(&r.Attempt); err != nil {
		tb.Fatal(err)
	}
	r.SiteID, r.ID, r.EndpointID, r.Attempted = siteID, id, endpointID, true
	if _, err := db.FinishDelivery(ctx, r); err != nil {
		tb.Fatal(err)
	}
}

// deliveryStates returns the states of an event's deliveries to an
// endpoint, oldest first.
func deliveryStates(tb testing.TB, db *store.DB, endpointID string, eventID int64) []string {
	tb.Helper()
	var states []string
	err := db.Pool.QueryRow(context.Background(), `SELECT coalesce(array_agg(state ORDER BY id), '{}') FROM deliveries
		WHERE endpoint_id = $1 AND event_id = $2`, endpointID, eventID).Scan(&states)
	if err != nil {
		tb.Fatal(err)
	}
	return states
}

// shownSecret returns the signing secret a page shows.
func shownSecret(tb testing.TB, body string) string {
	tb.Helper()
	m := secretRE.FindStringSubmatch(body)
	if m == nil {
		tb.Fatalf("no secret on the page: %s", body)
	}
	return html.UnescapeString(m[1])
}

// verifies reports whether secret verifies a webhook signed, as the
// delivery worker signs them, with the endpoint's secret of generation gen.
func verifies(tb testing.TB, secret, endpointID string, gen int) error {
	tb.Helper()
	body := []byte(`{"type":"lead.created","data":{"id":1}}`)
	now := time.Now()
	sig, err := webhook.Sign(webhook.DeriveSecret(testSecretKey, endpointID, gen), "msg_1", now, body)
	if err != nil {
		tb.Fatal(err)
	}
	h := http.Header{}
	h.Set(webhook.HeaderID, "msg_1")
	h.Set(webhook.HeaderTimestamp, strconv.FormatInt(now.Unix(), 10))
	h.Set(webhook.HeaderSignature, sig)
	return webhook.Verify(secret, h, body, 0, now)
}

func TestWebhooksCreate(t *testing.T) {
	f := newWebhookFixture(t)
	ctx := context.Background()
	b := f.browser(t)
	b.mustLogin("a@bayside.example", passwordA)
	page := "/dashboard/sites/" + f.siteA.ID + "/webhooks"

	if _, body := b.get("/dashboard/sites/" + f.siteA.ID); !strings.Contains(body, `href="`+page+`"`) {
		t.Error("the site page does not link the webhooks page")
	}
	code, body := b.get(page)
	if code != http.StatusOK || !strings.Contains(body, "no webhook endpoints yet") ||
		!strings.Contains(body, "Lead e-mail: on — each new lead goes to its assigned agent, or to the site's default recipient") ||
		!strings.Contains(body, `id="create-webhook"`) {
		t.Fatalf("empty webhooks page: %d %s", code, body)
	}
	token := b.csrf(page)

	for _, tc := range []struct {
		name, url string
		events    []string
		want      string
	}{
		{"no event", "https://crm.example.com/hooks", nil, "Choose at least one event."},
		{"unknown event", "https://crm.example.com/hooks", []string{"lead.created", "lead.deleted"}, "Unknown event."},
		{"no URL", "", []string{"lead.created"}, "Not created: enter the URL of the receiver"},
		{"not http", "ftp://crm.example.com/hooks", []string{"lead.created"}, "Not created: the URL must start with https:// or http://."},
		{"password", "https://user:pw@crm.example.com/hooks", []string{"lead.created"}, "must not contain a user name or password"},
		{"localhost", "http://localhost:8080/hooks", []string{"lead.created"}, "localhost is the server itself"},
		{"private address", "http://10.1.2.3/hooks", []string{"lead.created"}, "10.1.2.3 is a private (RFC 1918) address"},
		{"metadata address", "http://169.254.169.254/latest", []string{"lead.created"}, "webhooks go only to public internet addresses"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := b.post(page, url.Values{"csrf_token": {token}, "url": {tc.url}, "event": tc.events})
			if code != http.StatusUnprocessableEntity || !strings.Contains(html.UnescapeString(body), tc.want) {
				t.Fatalf("%d, want %q in %s", code, tc.want, body)
			}
			// The form keeps what was typed.
			if !strings.Contains(html.UnescapeString(body), `value="`+tc.url+`"`) {
				t.Errorf("the form lost the URL %q", tc.url)
			}
		})
	}
	if eps, _ := f.db.WebhookEndpoints(ctx, f.siteA.ID); len(eps) != 0 {
		t.Fatalf("%d endpoints created by refused forms", len(eps))
	}

	code, body = b.post(page, url.Values{"csrf_token": {token}, "url": {" https://CRM.Bayside.example:443/hooks?token=abc "},
		"event": {"lead.updated", "lead.created"}})
	if code != http.StatusOK || !strings.Contains(body, "shown only this once") {
		t.Fatalf("create: %d %s", code, body)
	}
	secret := shownSecret(t, body)
	eps, err := f.db.WebhookEndpoints(ctx, f.siteA.ID)
	if err != nil || len(eps) != 1 {
		t.Fatalf("endpoints %+v %v", eps, err)
	}
	ep := eps[0]
	if ep.URL != "https://crm.bayside.example/hooks?token=abc" || strings.Join(ep.Events, ",") != "lead.created,lead.updated" ||
		!ep.Enabled || ep.SecretGen != 1 {
		t.Fatalf("stored endpoint %+v", ep)
	}
	// The secret shown is the one the delivery worker signs with.
	if !strings.HasPrefix(secret, webhook.SecretPrefix) {
		t.Fatalf("secret %q", secret)
	}
	if err := verifies(t, secret, ep.ID, ep.SecretGen); err != nil {
		t.Fatalf("the secret shown does not verify the endpoint's signature: %v", err)
	}
	if err := verifies(t, secret, ep.ID, ep.SecretGen+1); err == nil {
		t.Fatal("the secret verifies another generation's signature")
	}

	// Later pages list the endpoint, never its secret.
	for _, p := range []string{page, page + "/" + ep.ID, "/dashboard/sites/" + f.siteA.ID} {
		code, body := b.get(p)
		if code != http.StatusOK || strings.Contains(html.UnescapeString(body), secret) {
			t.Fatalf("GET %s: %d, shows the secret: %v", p, code, strings.Contains(html.UnescapeString(body), secret))
		}
	}
	_, body = b.get(page)
	if !strings.Contains(body, `data-webhook-id="`+ep.ID+`"`) || !strings.Contains(body, "https://crm.bayside.example/hooks?token=abc") ||
		!strings.Contains(body, "lead.created, lead.updated") || !strings.Contains(body, ">enabled<") {
		t.Fatalf("list: %s", body)
	}
}

func TestWebhooksLimit(t *testing.T) {
	f := newWebhookFixture(t)
	b := f.browser(t)
	b.mustLogin("a@bayside.example", passwordA)
	page := "/dashboard/sites/" + f.siteA.ID + "/webhooks"
	for i := range store.MaxWebhookEndpoints {
		mustEndpoint(t, f.db, f.siteA.ID, fmt.Sprintf("https://crm%d.example.com/hooks", i), store.EventLeadCreated)
	}
	code, body := b.get(page)
	if code != http.StatusOK || !strings.Contains(body, "the most it may have") || strings.Contains(body, `id="create-webhook"`) {
		t.Fatalf("full page: %d %s", code, body)
	}
	code, body = b.post(page, url.Values{"csrf_token": {b.csrf(page)}, "url": {"https://crm.example.com/more"}, "event": {"lead.created"}})
	if code != http.StatusUnprocessableEntity || !strings.Contains(body, "Not created: a site has at most 10 webhook endpoints.") {
		t.Fatalf("11th endpoint: %d %s", code, body)
	}
	if eps, _ := f.db.WebhookEndpoints(context.Background(), f.siteA.ID); len(eps) != store.MaxWebhookEndpoints {
		t.Fatalf("%d endpoints", len(eps))
	}
}

// TestWebhooksNoSecretKey: without the operator's key nothing can show a
// secret, and the page says why; lead e-mail is off without SMTP.
func TestWebhooksNoSecretKey(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	b := f.browser(t)
	b.mustLogin("a@bayside.example", passwordA)
	ep := mustEndpoint(t, f.db, f.siteA.ID, "https://crm.example.com/hooks", store.EventLeadCreated)
	page := "/dashboard/sites/" + f.siteA.ID + "/webhooks"
	code, body := b.get(page)
	if code != http.StatusOK || !strings.Contains(body, "LISTGATE_SECRET_KEY is not set on the origin") ||
		!strings.Contains(body, "Lead e-mail: off: LISTGATE_SMTP_URL is not set on the origin") ||
		strings.Contains(body, `id="create-webhook"`) || strings.Contains(body, "/rotate") {
		t.Fatalf("page: %d %s", code, body)
	}
	token := b.csrf(page)
	code, body = b.post(page, url.Values{"csrf_token": {token}, "url": {"https://other.example.com/hooks"}, "event": {"lead.created"}})
	if code != http.StatusConflict || !strings.Contains(body, "Webhooks cannot be created: LISTGATE_SECRET_KEY is not set on the origin") ||
		secretRE.MatchString(body) {
		t.Fatalf("create: %d %s", code, body)
	}
	if eps, _ := f.db.WebhookEndpoints(ctx, f.siteA.ID); len(eps) != 1 {
		t.Fatalf("%d endpoints", len(eps))
	}
	code, body = b.post(page+"/"+ep.ID+"/rotate", url.Values{"csrf_token": {token}})
	if code != http.StatusConflict || !strings.Contains(body, "LISTGATE_SECRET_KEY is not set") {
		t.Fatalf("rotate: %d %s", code, body)
	}
	if got := mustGetEndpoint(t, f.db, f.siteA.ID, ep.ID); got.SecretGen != 1 {
		t.Fatalf("rotated without a key: generation %d", got.SecretGen)
	}
	// Endpoints can still be disabled and deleted.
	if code, _ := b.post(page+"/"+ep.ID+"/disable", url.Values{"csrf_token": {token}}); code != http.StatusOK ||
		mustGetEndpoint(t, f.db, f.siteA.ID, ep.ID).Enabled {
		t.Fatalf("disable: %d", code)
	}
}

// TestWebhooksShortKey: a key DeriveSecret would refuse is refused at New,
// not at the first request.
func TestWebhooksShortKey(t *testing.T) {
	_, err := dashboard.New(dashboard.Config{DB: &store.DB{}, Pairing: &pairing.Service{}, SecretKey: []byte("too short")})
	if err == nil || !strings.Contains(err.Error(), "SecretKey") {
		t.Fatalf("a short SecretKey: %v", err)
	}
}

func TestWebhooksManage(t *testing.T) {
	f := newWebhookFixture(t)
	b := f.browser(t)
	b.mustLogin("a@bayside.example", passwordA)
	ep := mustEndpoint(t, f.db, f.siteA.ID, "https://crm.example.com/hooks", store.EventLeadCreated)
	page := "/dashboard/sites/" + f.siteA.ID + "/webhooks"
	token := b.csrf(page)

	code, body := b.post(page+"/"+ep.ID+"/disable", url.Values{"csrf_token": {token}})
	got := mustGetEndpoint(t, f.db, f.siteA.ID, ep.ID)
	if code != http.StatusOK || !strings.Contains(body, "The endpoint is disabled") || got.Enabled ||
		got.DisabledReason != "operator" || !strings.Contains(body, "(by hand)") || !strings.Contains(body, "/enable") {
		t.Fatalf("disable: %d %+v %s", code, got, body)
	}

	// One the worker disabled says why, when, and since when it fails.
	mustExec(t, f.db, `UPDATE webhook_endpoints SET enabled = false, disabled_reason = 'failing',
		disabled_at = '2025-03-02 10:30Z', failures = 25, failing_since = '2025-03-01 09:00Z' WHERE id = $1`, ep.ID)
	for _, p := range []string{page, page + "/" + ep.ID} {
		_, body = b.get(p)
		for _, want := range []string{"disabled on 2 Mar 2025 21:30 AEDT: every attempt failed for more than 24 h",
			"25 in a row, failing since 1 Mar 2025 20:00 AEDT"} {
			if !strings.Contains(body, want) {
				t.Errorf("GET %s lacks %q", p, want)
			}
		}
	}

	code, body = b.post(page+"/"+ep.ID+"/enable", url.Values{"csrf_token": {token}})
	got = mustGetEndpoint(t, f.db, f.siteA.ID, ep.ID)
	if code != http.StatusOK || !strings.Contains(body, "The endpoint is enabled") || !got.Enabled || got.Failures != 0 ||
		got.FailingSince != nil {
		t.Fatalf("enable: %d %+v %s", code, got, body)
	}

	// Rotation shows the new secret once; the previous one signs for a day.
	first := webhook.DeriveSecret(testSecretKey, ep.ID, 1)
	code, body = b.post(page+"/"+ep.ID+"/rotate", url.Values{"csrf_token": {token}})
	if code != http.StatusOK {
		t.Fatalf("rotate: %d %s", code, body)
	}
	secret := shownSecret(t, body)
	got = mustGetEndpoint(t, f.db, f.siteA.ID, ep.ID)
	if secret == first || got.SecretGen != 2 || got.PrevSecretUntil == nil ||
		time.Until(*got.PrevSecretUntil) < 23*time.Hour || time.Until(*got.PrevSecretUntil) > 25*time.Hour {
		t.Fatalf("rotated endpoint %+v", got)
	}
	if err := verifies(t, secret, ep.ID, 2); err != nil {
		t.Fatalf("the new secret does not verify: %v", err)
	}
	if !strings.Contains(body, "The previous secret keeps signing beside the new one until "+
		got.PrevSecretUntil.In(sydney(t)).Format("2 Jan 2006 15:04 MST")) {
		t.Fatalf("rotate page does not say until when the old secret signs: %s", body)
	}
	if _, body := b.get(page); strings.Contains(html.UnescapeString(body), secret) {
		t.Fatal("the list shows the rotated secret")
	}
	// The form sent again (a reload) does not rotate once more: that would
	// cut off the secret the receiver has.
	code, body = b.post(page+"/"+ep.ID+"/rotate", url.Values{"csrf_token": {token}})
	if again := mustGetEndpoint(t, f.db, f.siteA.ID, ep.ID); code != http.StatusUnprocessableEntity ||
		again.SecretGen != 2 || !strings.Contains(body, "still signs until") {
		t.Fatalf("second rotation inside the overlap: %d generation %d %s", code, again.SecretGen, body)
	}

	// Deleting takes the deliveries with it.
	lead := seedLead(t, f.db, f.siteA.ID, "inquiry", "new", "Jane", "jane@example.com", "", time.Now())
	mustLeadEvent(t, f.db, f.siteA.ID, store.EventLeadCreated, lead)
	code, body = b.post(page+"/"+ep.ID+"/delete", url.Values{"csrf_token": {token}})
	if code != http.StatusOK || !strings.Contains(body, "The endpoint and its delivery log are deleted") ||
		!strings.Contains(body, "no webhook endpoints yet") {
		t.Fatalf("delete: %d %s", code, body)
	}
	var n int
	_ = f.db.Pool.QueryRow(context.Background(), `SELECT count(*) FROM deliveries WHERE endpoint_id IS NOT NULL`).Scan(&n)
	if n != 0 {
		t.Fatalf("%d deliveries left", n)
	}
	if code, _ := b.post(page+"/"+ep.ID+"/delete", url.Values{"csrf_token": {token}}); code != http.StatusNotFound {
		t.Fatalf("delete again: %d", code)
	}
}

var logRowRE = regexp.MustCompile(`<tr data-delivery-id="(\d+)" data-attempt="(\d+)">`)

func TestWebhookLog(t *testing.T) {
	f := newWebhookFixture(t)
	b := f.browser(t)
	b.mustLogin("a@bayside.example", passwordA)
	ep := mustEndpoint(t, f.db, f.siteA.ID, "https://crm.example.com/hooks", store.WebhookEvents...)
	other := mustEndpoint(t, f.db, f.siteA.ID, "https://other.example.com/hooks", store.EventLeadUpdated)
	now := time.Now()
	lead1 := seedLead(t, f.db, f.siteA.ID, "inquiry", "new", "Jane", "jane@example.com", "", now)
	lead2 := seedLead(t, f.db, f.siteA.ID, "inquiry", "new", "John", "john@example.com", "", now)
	ev1 := mustLeadEvent(t, f.db, f.siteA.ID, store.EventLeadCreated, lead1)
	d1 := mustDelivery(t, f.db, ep.ID, ev1)
	answer := "<b>oops</b>" + strings.Repeat("x", 300)
	mustAttempt(t, f.db, f.siteA.ID, ep.ID, d1, store.DeliveryResult{State: store.DeliveryPending, RetryAt: now.Add(time.Hour),
		Status: 500, Latency: 120 * time.Millisecond, Error: "HTTP 500", Response: answer, Body: []byte(`{}`)})
	mustAttempt(t, f.db, f.siteA.ID, ep.ID, d1, store.DeliveryResult{State: store.DeliveryDelivered, Status: 204,
		Latency: 35 * time.Millisecond})
	ev2 := mustLeadEvent(t, f.db, f.siteA.ID, store.EventLeadUpdated, lead2)
	d2 := mustDelivery(t, f.db, ep.ID, ev2)

	logPage := "/dashboard/sites/" + f.siteA.ID + "/webhooks/" + ep.ID
	code, body := b.get(logPage)
	if code != http.StatusOK {
		t.Fatalf("log: %d %s", code, body)
	}
	var rows []string
	for _, m := range logRowRE.FindAllStringSubmatch(body, -1) {
		rows = append(rows, m[1]+"/"+m[2])
	}
	if want := []string{fmt.Sprint(d2, "/0"), fmt.Sprint(d1, "/2"), fmt.Sprint(d1, "/1")}; fmt.Sprint(rows) != fmt.Sprint(want) {
		t.Fatalf("log rows %v, want %v", rows, want)
	}
	for _, want := range []string{
		`<li data-state="pending">pending: <strong>1</strong></li>`,
		`<li data-state="delivered">delivered: <strong>1</strong></li>`,
		`<li data-state="held">held: <strong>0</strong></li>`,
		fmt.Sprintf("<code>msg_%d</code>", ev1), fmt.Sprintf("<code>msg_%d</code>", ev2),
		fmt.Sprintf(`href="/dashboard/sites/%s/leads/%d">%d</a>`, f.siteA.ID, lead1, lead1),
		"lead.updated", "not yet", "failed, tried again", `<span class="http-status">500</span>, 120 ms`,
		`<span class="http-status">204</span>, 35 ms`, "<td>HTTP 500</td>",
		"&lt;b&gt;oops&lt;/b&gt;xxx", "x…</code>", "Send now", "Send again",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("log lacks %q", want)
		}
	}
	if strings.Contains(body, "<b>oops") || strings.Contains(body, strings.Repeat("x", 100)) {
		t.Error("the answer is not escaped and cut")
	}
	if n := strings.Count(body, "/resend"); n != 2 {
		t.Errorf("%d resend buttons, want one per delivery", n)
	}
	token := b.csrf(logPage)

	// Send again: a new delivery of the same event (same webhook-id), due now.
	code, body = b.post(fmt.Sprintf("%s/deliveries/%d/resend", logPage, d1), url.Values{"csrf_token": {token}})
	if code != http.StatusOK || !strings.Contains(body, "The delivery is queued to be sent again") {
		t.Fatalf("resend: %d %s", code, body)
	}
	if got := deliveryStates(t, f.db, ep.ID, ev1); fmt.Sprint(got) != "[delivered pending]" {
		t.Fatalf("after resend, deliveries of the event: %v", got)
	}

	// Replay: a held delivery is queued, a finished one whose event is
	// pending already is not doubled.
	mustExec(t, f.db, `UPDATE webhook_endpoints SET enabled = false, disabled_reason = 'operator', disabled_at = now() WHERE id = $1`, ep.ID)
	ev3 := mustLeadEvent(t, f.db, f.siteA.ID, store.EventLeadDuplicate, lead2)
	if got := deliveryStates(t, f.db, ep.ID, ev3); fmt.Sprint(got) != "[held]" {
		t.Fatalf("event of a disabled endpoint: %v", got)
	}
	code, body = b.post(logPage+"/replay", url.Values{"csrf_token": {token}, "since": {"24h"}})
	if code != http.StatusOK || !strings.Contains(body, "1 delivery is queued to be sent again.") {
		t.Fatalf("replay: %d %s", code, body)
	}
	if got := deliveryStates(t, f.db, ep.ID, ev3); fmt.Sprint(got) != "[pending]" {
		t.Fatalf("after replay, the held delivery: %v", got)
	}
	mustExec(t, f.db, `UPDATE deliveries SET state = 'failed', done_at = now() WHERE endpoint_id = $1`, ep.ID)
	code, body = b.post(logPage+"/replay", url.Values{"csrf_token": {token}, "since": {"1h"}})
	if code != http.StatusOK || !strings.Contains(body, "3 deliveries are queued to be sent again.") {
		t.Fatalf("replay of failed ones: %d %s", code, body)
	}
	code, body = b.post(logPage+"/replay", url.Values{"csrf_token": {token}, "since": {"1h"}})
	if code != http.StatusOK || !strings.Contains(body, "Nothing was queued") {
		t.Fatalf("replay with everything pending: %d %s", code, body)
	}
	if code, _ := b.post(logPage+"/replay", url.Values{"csrf_token": {token}, "since": {"2006-01-02"}}); code != http.StatusUnprocessableEntity {
		t.Fatalf("replay since a bad choice: %d", code)
	}

	// A delivery of another endpoint, and ids that are not ids, are 404.
	for _, p := range []string{
		fmt.Sprintf("/dashboard/sites/%s/webhooks/%s/deliveries/%d/resend", f.siteA.ID, other.ID, d1),
		logPage + "/deliveries/abc/resend",
		logPage + "/deliveries/-1/resend",
		logPage + "/deliveries/99999999999999999999/resend",
		logPage + fmt.Sprintf("/deliveries/%d/resend", d2+1000),
		"/dashboard/sites/" + f.siteA.ID + "/webhooks/not-a-uuid/replay",
		"/dashboard/sites/" + f.siteA.ID + "/webhooks/00000000-0000-0000-0000-000000000000/disable",
	} {
		if code, _ := b.post(p, url.Values{"csrf_token": {token}, "since": {"1h"}}); code != http.StatusNotFound {
			t.Errorf("POST %s: %d", p, code)
		}
	}
	for _, p := range []string{
		"/dashboard/sites/" + f.siteA.ID + "/webhooks/not-a-uuid",
		"/dashboard/sites/" + f.siteA.ID + "/webhooks/00000000-0000-0000-0000-000000000000",
		"/dashboard/sites/" + f.siteA.ID + "/webhooks/" + ep.ID + "x",
	} {
		if code, _ := b.get(p); code != http.StatusNotFound {
			t.Errorf("GET %s: %d", p, code)
		}
	}
}

func TestWebhooksCSRF(t *testing.T) {
	f := newWebhookFixture(t)
	b := f.browser(t)
	b.mustLogin("a@bayside.example", passwordA)
	ep := mustEndpoint(t, f.db, f.siteA.ID, "https://crm.example.com/hooks", store.EventLeadCreated)
	lead := seedLead(t, f.db, f.siteA.ID, "inquiry", "new", "Jane", "jane@example.com", "", time.Now())
	ev := mustLeadEvent(t, f.db, f.siteA.ID, store.EventLeadCreated, lead)
	d := mustDelivery(t, f.db, ep.ID, ev)
	mustExec(t, f.db, `UPDATE deliveries SET state = 'failed' WHERE id = $1`, d)
	page := "/dashboard/sites/" + f.siteA.ID + "/webhooks"
	for _, tc := range []struct {
		path string
		form url.Values
	}{
		{page, url.Values{"url": {"https://evil.example.com/"}, "event": {"lead.created"}}},
		{page + "/" + ep.ID + "/disable", nil},
		{page + "/" + ep.ID + "/rotate", nil},
		{page + "/" + ep.ID + "/delete", nil},
		{page + "/" + ep.ID + "/replay", url.Values{"since": {"24h"}}},
		{fmt.Sprintf("%s/%s/deliveries/%d/resend", page, ep.ID, d), nil},
	} {
		for name, token := range map[string][]string{"missing": nil, "wrong": {"not-the-token"}} {
			form := url.Values{"csrf_token": token}
			for k, v := range tc.form {
				form[k] = v
			}
			if code, body := b.post(tc.path, form); code != http.StatusForbidden || !strings.Contains(body, "did not come from the dashboard") ||
				secretRE.MatchString(body) {
				t.Errorf("POST %s, %s token: %d", tc.path, name, code)
			}
		}
	}
	got := mustGetEndpoint(t, f.db, f.siteA.ID, ep.ID)
	eps, _ := f.db.WebhookEndpoints(context.Background(), f.siteA.ID)
	if !got.Enabled || got.SecretGen != 1 || len(eps) != 1 {
		t.Fatalf("changed without a token: %+v, %d endpoints", got, len(eps))
	}
	if states := deliveryStates(t, f.db, ep.ID, ev); fmt.Sprint(states) != "[failed]" {
		t.Fatalf("queued without a token: %v", states)
	}
}

// TestWebhooksAccessControl tries every webhook page and action of account
// A's site as account B's user: each is 404 and changes nothing.
func TestWebhooksAccessControl(t *testing.T) {
	f := newWebhookFixture(t)
	ctx := context.Background()
	epA := mustEndpoint(t, f.db, f.siteA.ID, "https://crm.bayside.example/hooks", store.EventLeadCreated)
	epB := mustEndpoint(t, f.db, f.siteB.ID, "https://crm.hillside.example/hooks", store.EventLeadCreated)
	leadA := seedLead(t, f.db, f.siteA.ID, "inquiry", "new", "Jane", "jane@example.com", "", time.Now())
	evA := mustLeadEvent(t, f.db, f.siteA.ID, store.EventLeadCreated, leadA)
	dA := mustDelivery(t, f.db, epA.ID, evA)
	mustExec(t, f.db, `UPDATE deliveries SET state = 'failed' WHERE id = $1`, dA)

	b := f.browser(t)
	b.mustLogin("b@hillside.example", passwordB)
	token := b.csrf("/dashboard")
	siteA := "/dashboard/sites/" + f.siteA.ID + "/webhooks"
	siteB := "/dashboard/sites/" + f.siteB.ID + "/webhooks"
	for _, p := range []string{siteA, siteA + "/" + epA.ID, siteB + "/" + epA.ID} {
		if code, body := b.get(p); code != http.StatusNotFound || strings.Contains(body, "bayside") {
			t.Errorf("GET %s as B: %d", p, code)
		}
	}
	for _, p := range []string{
		siteA,
		siteA + "/" + epA.ID + "/disable",
		siteA + "/" + epA.ID + "/rotate",
		siteA + "/" + epA.ID + "/delete",
		siteA + "/" + epA.ID + "/replay",
		fmt.Sprintf("%s/%s/deliveries/%d/resend", siteA, epA.ID, dA),
		// B's own site in the path, A's endpoint or delivery: still 404.
		siteB + "/" + epA.ID + "/disable",
		siteB + "/" + epA.ID + "/rotate",
		siteB + "/" + epA.ID + "/delete",
		siteB + "/" + epA.ID + "/replay",
		fmt.Sprintf("%s/%s/deliveries/%d/resend", siteB, epA.ID, dA),
		fmt.Sprintf("%s/%s/deliveries/%d/resend", siteB, epB.ID, dA),
	} {
		form := url.Values{"csrf_token": {token}, "url": {"https://evil.example.com/"}, "event": {"lead.created"}, "since": {"24h"}}
		if code, body := b.post(p, form); code != http.StatusNotFound || secretRE.MatchString(body) {
			t.Errorf("POST %s as B: %d", p, code)
		}
	}
	if eps, _ := f.db.WebhookEndpoints(ctx, f.siteA.ID); len(eps) != 1 || !eps[0].Enabled || eps[0].SecretGen != 1 {
		t.Fatalf("A's endpoints changed: %+v", eps)
	}
	if states := deliveryStates(t, f.db, epA.ID, evA); fmt.Sprint(states) != "[failed]" {
		t.Fatalf("A's delivery queued by B: %v", states)
	}
}
