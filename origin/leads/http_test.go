package leads_test

import (
	"encoding/json"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/listgate/listgate/origin/api"
	"github.com/listgate/listgate/origin/leads"
)

// Every error the endpoint gives, with its status, code and details keys.
func TestSubmitErrors(t *testing.T) {
	f := newFixture(t, leads.Config{})
	refs := f.mustListings(t)
	const ok = `{"name":"Ann","email":"ann@example.com"}`
	big := `{"name":"Ann","email":"ann@example.com","message":"` + strings.Repeat("x", leads.MaxBodyBytes) + `"}`
	for name, tc := range map[string]struct {
		body    string
		hdr     map[string]string
		status  int
		code    string
		details []string // keys, sorted
		message string   // part of the message
	}{
		"no identity": {ok, map[string]string{api.HeaderInternalToken: "", api.HeaderSite: "", api.HeaderKeyID: "", api.HeaderScopes: ""},
			401, "UNAUTHORIZED", nil, ""},
		"identity without the internal token": {ok, map[string]string{api.HeaderInternalToken: ""}, 401, "UNAUTHORIZED", nil, ""},
		"identity with a wrong token":         {ok, map[string]string{api.HeaderInternalToken: strings.Repeat("x", len(internalToken))}, 401, "UNAUTHORIZED", nil, ""},
		"site that is not a UUID":             {ok, map[string]string{api.HeaderSite: "site-1"}, 401, "UNAUTHORIZED", nil, ""},
		"site that does not exist":            {ok, map[string]string{api.HeaderSite: "00000000-0000-4000-8000-000000000000"}, 401, "UNAUTHORIZED", nil, ""},
		"read-only key":                       {ok, map[string]string{api.HeaderScopes: "listings:read,agents:read,stats:read"}, 403, "FORBIDDEN", nil, "missing scope leads:write"},
		"no content type":                     {ok, map[string]string{"Content-Type": ""}, 415, "UNSUPPORTED_MEDIA_TYPE", nil, ""},
		"form content type":                   {ok, map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, 415, "UNSUPPORTED_MEDIA_TYPE", nil, ""},
		"text content type":                   {ok, map[string]string{"Content-Type": "text/plain"}, 415, "UNSUPPORTED_MEDIA_TYPE", nil, ""},
		"latin-1 JSON":                        {ok, map[string]string{"Content-Type": "application/json; charset=iso-8859-1"}, 415, "UNSUPPORTED_MEDIA_TYPE", nil, ""},
		"body over 64 KiB":                    {big, nil, 413, "PAYLOAD_TOO_LARGE", nil, "65536"},
		"malformed JSON":                      {`{"name":`, nil, 422, "VALIDATION_ERROR", []string{"body"}, ""},
		"unknown field":                       {`{"name":"Ann","email":"ann@example.com","utm":"x"}`, nil, 422, "VALIDATION_ERROR", []string{"utm"}, ""},
		"wrong type":                          {`{"name":"Ann","email":"ann@example.com","listing_ref":"12"}`, nil, 422, "VALIDATION_ERROR", []string{"listing_ref"}, ""},
		"no contact":                          {`{"name":"Ann"}`, nil, 422, "VALIDATION_ERROR", []string{"contact"}, ""},
		"unknown listing_ref":                 {`{"name":"Ann","email":"ann@example.com","listing_ref":999999}`, nil, 422, "VALIDATION_ERROR", []string{"listing_ref"}, ""},
		"deleted listing by ref": {`{"name":"Ann","email":"ann@example.com","listing_ref":` + strconv.FormatInt(refs["AG:GONE"], 10) + `}`,
			nil, 422, "VALIDATION_ERROR", []string{"listing_ref"}, ""},
		"deleted listing by id":  {`{"name":"Ann","email":"ann@example.com","listing_id":"GONE"}`, nil, 422, "VALIDATION_ERROR", []string{"listing_id"}, ""},
		"shared bare listing id": {`{"name":"Ann","email":"ann@example.com","listing_id":"SHARED"}`, nil, 422, "VALIDATION_ERROR", []string{"listing_id"}, ""},
		"ref and id disagree": {`{"name":"Ann","email":"ann@example.com","listing_id":"L1","listing_ref":` + strconv.FormatInt(refs["AG:L2"], 10) + `}`,
			nil, 422, "VALIDATION_ERROR", []string{"listing_id"}, ""},
		"agent of no site": {`{"name":"Ann","email":"ann@example.com","agent_email":"zed@agency.example"}`, nil, 422, "VALIDATION_ERROR", []string{"agent_email"}, ""},
		"bad and unknown together": {`{"name":"","email":"ann@example.com","listing_id":"NOPE","agent_email":"zed@agency.example"}`,
			nil, 422, "VALIDATION_ERROR", []string{"agent_email", "listing_id", "name"}, ""},
		"idempotency key too long":  {ok, map[string]string{leads.IdempotencyHeader: strings.Repeat("k", 256)}, 422, "VALIDATION_ERROR", []string{"Idempotency-Key"}, ""},
		"idempotency key not ASCII": {ok, map[string]string{leads.IdempotencyHeader: "clé"}, 422, "VALIDATION_ERROR", []string{"Idempotency-Key"}, ""},
		"idempotency key and body problems": {`{"name":"Ann"}`, map[string]string{leads.IdempotencyHeader: "clé"}, 422, "VALIDATION_ERROR",
			[]string{"Idempotency-Key", "contact"}, ""},
	} {
		t.Run(name, func(t *testing.T) {
			before := f.count(t, `SELECT count(*) FROM lead_submissions`)
			r := f.post(t, tc.body, tc.hdr)
			e := mustEnvelope(t, r)
			if r.status != tc.status || e.Error.Code != tc.code {
				t.Fatalf("%d %s, want %d %s: %s", r.status, e.Error.Code, tc.status, tc.code, r.body)
			}
			if got := slices.Sorted(maps.Keys(e.Error.Details)); strings.Join(got, ",") != strings.Join(tc.details, ",") {
				t.Errorf("details %v, want keys %v", e.Error.Details, tc.details)
			}
			if !strings.Contains(e.Error.Message, tc.message) {
				t.Errorf("message %q does not say %q", e.Error.Message, tc.message)
			}
			if e.Error.RequestID == "" || r.header.Get("Content-Type") != "application/json; charset=utf-8" {
				t.Errorf("envelope without request id or JSON type: %v %s", r.header, r.body)
			}
			if after := f.count(t, `SELECT count(*) FROM lead_submissions`); after != before {
				t.Errorf("a rejected request stored a submission")
			}
		})
	}
}

// A listing or agent of another site of the same database is unknown.
func TestReferencesStayInTheSite(t *testing.T) {
	f := newFixture(t, leads.Config{})
	refs := f.mustListings(t)
	other := newFixtureOn(t, f.db, leads.Config{})
	r := other.post(t, `{"name":"Ann","email":"ann@example.com","listing_ref":`+strconv.FormatInt(refs["AG:L1"], 10)+
		`,"listing_id":"AG:L2","agent_email":"al@agency.example"}`, nil)
	e := mustEnvelope(t, r)
	if r.status != 422 || strings.Join(slices.Sorted(maps.Keys(e.Error.Details)), ",") != "agent_email,listing_id,listing_ref" {
		t.Fatalf("another site's listing and agent: %d %s", r.status, r.body)
	}
}

// The size limit holds for a body sent without Content-Length too, and a
// body of exactly 64 KiB is read.
func TestSubmitBodyLimitStreaming(t *testing.T) {
	f := newFixture(t, leads.Config{})
	over := `{"name":"Ann","email":"ann@example.com","message":"` + strings.Repeat("x", leads.MaxBodyBytes) + `"}`
	r := send(f.handler, "POST", "/v1/leads", io.MultiReader(strings.NewReader(over)), f.identity()) // no length known
	if r.status != 413 {
		t.Errorf("streamed body over the limit: %d %s", r.status, r.body)
	}
	pad := leads.MaxBodyBytes - len(`{"name":"Ann","email":"ann@example.com"}`)
	exact := `{"name":"Ann","email":"ann@example.com"}` + strings.Repeat(" ", pad)
	if r := f.post(t, exact, nil); r.status != 201 {
		t.Errorf("body of exactly 64 KiB: %d %s", r.status, r.body)
	}
}

func TestSubmitMethodNotAllowed(t *testing.T) {
	f := newFixture(t, leads.Config{})
	r := send(f.handler, "GET", "/v1/leads", nil, f.identity())
	if r.status != 405 || r.header.Get("Allow") != "POST" {
		t.Errorf("GET /v1/leads: %d Allow=%q", r.status, r.header.Get("Allow"))
	}
}

// A created lead: the exact response, and the rows behind it.
func TestSubmitCreatesLead(t *testing.T) {
	f := newFixture(t, leads.Config{})
	hdr := map[string]string{"Content-Type": "application/json; charset=UTF-8", api.HeaderRequestID: "req-lead-1"}
	body := `{"name":" Ann Lee ","email":"Ann@Example.com","mobile":"0412 345 678","message":"Call me","type":"appraisal",
		"priority":"hot","metadata":{"utm_source":"google","page":3}}`
	r := f.post(t, body, hdr)
	if r.status != 201 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	c := mustCreated(t, r.body)
	if c.Status != "new" || c.Duplicate || c.AssignedTo != nil || c.LeadID <= 0 {
		t.Errorf("response %s", r.body)
	}
	if r.header.Get("Content-Type") != "application/json; charset=utf-8" || r.header.Get("Location") != "" {
		t.Errorf("headers %v", r.header)
	}
	var name, email, emailNorm, mobile, mobileE164, message, typ, priority, metadata string
	f.scalar(t, &name, `SELECT name || '|' || email || '|' || email_norm || '|' || mobile || '|' || mobile_e164 || '|' ||
		message || '|' || type || '|' || priority || '|' || metadata::text FROM leads WHERE id = $1`, c.LeadID)
	parts := strings.Split(name, "|")
	name, email, emailNorm, mobile, mobileE164, message, typ, priority, metadata =
		parts[0], parts[1], parts[2], parts[3], parts[4], parts[5], parts[6], parts[7], parts[8]
	if name != "Ann Lee" || email != "Ann@Example.com" || emailNorm != "ann@example.com" || mobile != "0412 345 678" ||
		mobileE164 != "+61412345678" || message != "Call me" || typ != "appraisal" || priority != "hot" ||
		metadata != `{"page": 3, "utm_source": "google"}` {
		t.Errorf("stored lead %q", parts)
	}
	var keyID, requestID, payload string
	var duplicate bool
	if err := f.db.Pool.QueryRow(t.Context(), `SELECT key_id::text, request_id, payload::text, duplicate FROM lead_submissions WHERE lead_id = $1`,
		c.LeadID).Scan(&keyID, &requestID, &payload, &duplicate); err != nil {
		t.Fatal(err)
	}
	var p map[string]any
	json.Unmarshal([]byte(payload), &p)
	if keyID != f.keyID || requestID != "req-lead-1" || duplicate || p["name"] != " Ann Lee " || p["mobile"] != "0412 345 678" {
		t.Errorf("submission %s %s %v %s", keyID, requestID, duplicate, payload)
	}
	if n := f.count(t, `SELECT count(*) FROM lead_assignments WHERE lead_id = $1 AND reason = 'none' AND assigned_to IS NULL`, c.LeadID); n != 1 {
		t.Errorf("%d 'none' assignments recorded, want 1", n)
	}
}

// Assignment, rule by rule.
func TestAssignment(t *testing.T) {
	type setup struct {
		recipient string
		agents    bool
	}
	for name, tc := range map[string]struct {
		setup
		body   string
		want   string // "" for null
		reason string
	}{
		"agent_email wins": {setup{"desk@agency.example", true},
			`"agent_email":"BEA@agency.example","listing_id":"AG:L1"`, "bea@agency.example", "agent_email"},
		"listing's first agent": {setup{"desk@agency.example", true}, `"listing_id":"L1"`, "Al@Agency.example", "listing_agent"},
		"listing without agents, default recipient": {setup{"desk@agency.example", true},
			`"listing_id":"L2"`, "desk@agency.example", "default_recipient"},
		"no listing, default recipient": {setup{"desk@agency.example", true}, ``, "desk@agency.example", "default_recipient"},
		"round robin":                   {setup{"", true}, ``, "*", "round_robin"},
		"blank recipient is none":       {setup{"  ", true}, ``, "*", "round_robin"},
		"nobody":                        {setup{"", false}, ``, "", "none"},
	} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, leads.Config{})
			if tc.agents {
				f.mustListings(t)
			}
			if tc.recipient != "" {
				f.mustExec(t, `UPDATE sites SET default_lead_recipient = $2 WHERE id = $1`, f.site, tc.recipient)
			}
			body := `{"name":"Ann","email":"ann@example.com"` + map[bool]string{true: ",", false: ""}[tc.body != ""] + tc.body + `}`
			c := f.mustCreate(t, body, nil)
			got := ""
			if c.AssignedTo != nil {
				got = *c.AssignedTo
			}
			if tc.want == "*" && got != "" { // any of the site's agents
				tc.want = got
			}
			if got != tc.want {
				t.Errorf("assigned to %q, want %q", got, tc.want)
			}
			var reason string
			var assigned *string
			f.scalar(t, &reason, `SELECT reason FROM lead_assignments WHERE lead_id = $1`, c.LeadID)
			f.scalar(t, &assigned, `SELECT assigned_to FROM leads WHERE id = $1`, c.LeadID)
			if reason != tc.reason || (assigned == nil) != (tc.want == "") || assigned != nil && *assigned != tc.want {
				t.Errorf("recorded %s / %v, want %s / %q", reason, assigned, tc.reason, tc.want)
			}
		})
	}
}

// Round robin cycles through the site's agents with an e-mail, in order.
func TestRoundRobinCycles(t *testing.T) {
	f := newFixture(t, leads.Config{})
	f.mustAgent(t, "A", "a@agency.example")
	f.mustExec(t, `INSERT INTO agents (site_id, name) VALUES ($1, 'No Mail')`, f.site)
	f.mustAgent(t, "B", "b@agency.example")
	var got []string
	for i := range 4 {
		c := f.mustCreate(t, `{"name":"Ann","email":"ann`+strconv.Itoa(i)+`@example.com"}`, nil)
		got = append(got, *c.AssignedTo)
	}
	if strings.Join(got, ",") != "a@agency.example,b@agency.example,a@agency.example,b@agency.example" {
		t.Errorf("round robin gave %v", got)
	}
}
