package pairinghttp_test

import (
	"context"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/listgate/listgate/origin/store"
	"github.com/listgate/listgate/pairing"
	"github.com/listgate/listgate/pkg/apikey"
)

// The device endpoint's answers, each checked against the document.
func TestStart(t *testing.T) {
	e := newEnv(t)
	r := e.do(t, request{path: "/v1/pairing/device",
		body: `{"home_url":"HTTPS://Agency.Example/","site_name":"Agency Realty","plugin_version":"1.2.3"}`})
	if r.status != 200 || r.header.Get("Cache-Control") != "no-store" ||
		!strings.HasPrefix(r.header.Get("Content-Type"), "application/json") {
		t.Fatalf("start: %d %v %s", r.status, r.header, r.body)
	}
	m := r.json(t)
	user, _ := m["user_code"].(string)
	device, _ := m["device_code"].(string)
	if len(device) != pairing.DeviceCodeLen || len(user) != 9 || m["expires_in"] != 600.0 || m["interval"] != 5.0 ||
		m["verification_uri"] != publicURL+"/dashboard/pairing" ||
		m["verification_uri_complete"] != publicURL+"/dashboard/pairing?user_code="+user {
		t.Fatalf("start answered %s", r.body)
	}

	// Only hashes are stored, and the home URL in canonical form.
	var home, ip string
	var inClear bool
	err := e.db.Pool.QueryRow(context.Background(), `SELECT home_url, client_ip,
		EXISTS (SELECT 1 FROM pairings p WHERE position($1 in p::text) > 0 OR position($2 in p::text) > 0)
		FROM pairings`, device, user).Scan(&home, &ip, &inClear)
	if err != nil {
		t.Fatal(err)
	}
	if home != "https://agency.example" || ip != clientIP || inClear {
		t.Errorf("stored home_url %q, client_ip %q, a code in clear %v", home, ip, inClear)
	}
	if logs := e.logs.String(); strings.Contains(logs, device) || strings.Contains(logs, user) {
		t.Error("a code is in the logs")
	}
}

func TestStartRefusals(t *testing.T) {
	e := newEnv(t)
	big := `{"home_url":"https://a.example","site_name":"` + strings.Repeat("a", 9000) + `"}`
	tests := []struct {
		name        string
		body        string
		contentType string
		status      int
		detail      string // the details key of a 422
	}{
		{"not JSON media type", `{"home_url":"https://a.example"}`, "text/plain", 415, ""},
		{"no media type", `{"home_url":"https://a.example"}`, "-", 415, ""},
		{"latin-1 JSON", `{"home_url":"https://a.example"}`, "application/json; charset=latin1", 415, ""},
		{"too large", big, "", 413, ""},
		{"empty", ``, "", 422, "body"},
		{"malformed", `{"home_url":`, "", 422, "body"},
		{"array", `[]`, "", 422, "body"},
		{"null", `null`, "", 422, "body"},
		{"trailing data", `{"home_url":"https://a.example"} {}`, "", 422, "body"},
		{"unknown field", `{"home_url":"https://a.example","client_id":"x"}`, "", 422, "client_id"},
		{"repeated field", `{"home_url":"https://a.example","home_url":"https://b.example"}`, "", 422, "home_url"},
		{"missing home_url", `{"site_name":"x"}`, "", 422, "home_url"},
		{"null home_url", `{"home_url":null}`, "", 422, "home_url"},
		{"number home_url", `{"home_url":5}`, "", 422, "home_url"},
		{"relative home_url", `{"home_url":"/wp"}`, "", 422, "home_url"},
		{"ftp home_url", `{"home_url":"ftp://a.example"}`, "", 422, "home_url"},
		{"home_url with user info", `{"home_url":"https://bank.example@evil.example"}`, "", 422, "home_url"},
		{"home_url too long", `{"home_url":"https://a.example/` + strings.Repeat("a", 2040) + `"}`, "", 422, "home_url"},
		{"site_name too long", `{"home_url":"https://a.example","site_name":"` + strings.Repeat("é", 201) + `"}`, "", 422, "site_name"},
		{"site_name not a string", `{"home_url":"https://a.example","site_name":{}}`, "", 422, "site_name"},
		{"plugin_version too long", `{"home_url":"https://a.example","plugin_version":"` + strings.Repeat("1", 51) + `"}`, "", 422, "plugin_version"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.do(t, request{path: "/v1/pairing/device", body: tt.body, contentType: tt.contentType})
			if r.status != tt.status {
				t.Fatalf("status %d, want %d: %s", r.status, tt.status, r.body)
			}
			if tt.detail != "" {
				details, _ := r.json(t)["error"].(map[string]any)["details"].(map[string]any)
				if details[tt.detail] == nil {
					t.Errorf("no detail for %s: %s", tt.detail, r.body)
				}
			}
		})
	}
	var n int
	e.db.Pool.QueryRow(context.Background(), `SELECT count(*) FROM pairings`).Scan(&n)
	if n != 0 {
		t.Errorf("%d pairings stored from refused requests", n)
	}
}

// Ten starts per client IP in ten minutes; the eleventh is 429 with
// Retry-After, and other IPs are not affected.
func TestStartLimitPerIP(t *testing.T) {
	e := newEnv(t)
	body := `{"home_url":"https://a.example"}`
	for i := range 10 {
		if r := e.do(t, request{path: "/v1/pairing/device", body: body}); r.status != 200 {
			t.Fatalf("start %d: %d %s", i+1, r.status, r.body)
		}
	}
	r := e.do(t, request{path: "/v1/pairing/device", body: body})
	if r.status != 429 || r.header.Get("Retry-After") != "600" {
		t.Fatalf("start 11: %d Retry-After %q %s", r.status, r.header.Get("Retry-After"), r.body)
	}
	if r := e.do(t, request{path: "/v1/pairing/device", body: body, ip: "2001:db8::1"}); r.status != 200 {
		t.Fatalf("another IP: %d", r.status)
	}
	e.clock.Advance(10 * time.Minute)
	if r := e.do(t, request{path: "/v1/pairing/device", body: body}); r.status != 200 {
		t.Fatalf("after the window: %d", r.status)
	}
}

// Token requests the endpoint cannot take: RFC 6749 §5.2 errors, 400.
func TestTokenRefusals(t *testing.T) {
	e := newEnv(t)
	grant := `"grant_type":"urn:ietf:params:oauth:grant-type:device_code"`
	unknown := strings.Repeat("A", pairing.DeviceCodeLen)
	tests := []struct {
		name, body, contentType, want string
	}{
		{"form encoded", "grant_type=x", "application/x-www-form-urlencoded", "invalid_request"},
		{"malformed", `{`, "", "invalid_request"},
		{"not an object", `"x"`, "", "invalid_request"},
		{"unknown parameter", `{` + grant + `,"device_code":"` + unknown + `","client_id":"x"}`, "", "invalid_request"},
		{"repeated parameter", `{` + grant + `,` + grant + `,"device_code":"` + unknown + `"}`, "", "invalid_request"},
		{"no grant_type", `{"device_code":"` + unknown + `"}`, "", "invalid_request"},
		{"grant_type not a string", `{"grant_type":1,"device_code":"` + unknown + `"}`, "", "invalid_request"},
		{"other grant_type", `{"grant_type":"client_credentials","device_code":"` + unknown + `"}`, "", "unsupported_grant_type"},
		{"no device_code", `{` + grant + `}`, "", "invalid_request"},
		{"device_code not a string", `{` + grant + `,"device_code":42}`, "", "invalid_request"},
		{"malformed device_code", `{` + grant + `,"device_code":"abc"}`, "", "invalid_grant"},
		{"unknown device_code", `{` + grant + `,"device_code":"` + unknown + `"}`, "", "invalid_grant"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.do(t, request{path: "/v1/pairing/token", body: tt.body, contentType: tt.contentType})
			m := r.json(t)
			if r.status != 400 || m["error"] != tt.want || r.header.Get("Cache-Control") != "no-store" {
				t.Fatalf("%d %v, want 400 %s", r.status, r.body, tt.want)
			}
			if d, _ := m["error_description"].(string); d == "" || strings.Contains(d, unknown) {
				t.Errorf("error_description %q", d)
			}
		})
	}
	big := `{` + grant + `,"device_code":"` + strings.Repeat("A", 9000) + `"}`
	if r := e.do(t, request{path: "/v1/pairing/token", body: big}); r.status != 413 {
		t.Errorf("a body over 8 KiB: %d %s", r.status, r.body)
	}
}

// The whole flow: pending, slow_down (the interval grows), approval, the
// key exactly once, then expired_token; the key is the documented one.
func TestFlow(t *testing.T) {
	e := newEnv(t)
	s := e.mustStart(t, "https://agency.example/")
	if got := e.pollError(t, s.DeviceCode); got != "authorization_pending" {
		t.Fatalf("first poll: %s", got)
	}
	e.clock.Advance(time.Second)
	if got := e.pollError(t, s.DeviceCode); got != "slow_down" {
		t.Fatalf("poll after 1s: %s", got)
	}
	e.clock.Advance(9 * time.Second) // 9 s: within the new 10 s interval
	if got := e.pollError(t, s.DeviceCode); got != "slow_down" {
		t.Fatalf("poll within the grown interval: %s", got)
	}
	e.clock.Advance(15 * time.Second) // the interval is now 15 s
	if got := e.pollError(t, s.DeviceCode); got != "authorization_pending" {
		t.Fatalf("poll after the grown interval: %s", got)
	}

	p, err := e.svc.Approve(context.Background(), strings.ToLower(strings.ReplaceAll(s.UserCode, "-", "")), e.site, pairing.Actor{})
	if err != nil {
		t.Fatal(err)
	}
	if p.HomeURL != "https://agency.example" || p.SiteName != "Agency Realty" || p.Status != pairing.StatusApproved {
		t.Fatalf("approved %+v", p)
	}
	d := e.mustDeliver(t, s.DeviceCode)
	if !strings.HasPrefix(d.APIKey, "lgk_") || apikey.Check(d.APIKey) != nil || d.SiteID != e.site ||
		d.BaseURL != publicURL+"/v1" || strings.Join(d.Scopes, ",") != "listings:read,agents:read,stats:read" {
		t.Fatalf("delivered %+v", d)
	}
	for range 2 {
		e.clock.Advance(time.Minute)
		if got := e.pollError(t, s.DeviceCode); got != "expired_token" {
			t.Fatalf("poll after delivery: %s", got)
		}
	}

	k := e.mustKey(t, d.APIKey)
	if k.ID != d.KeyID || k.SiteID != e.site || k.Name != "WordPress: agency.example" || k.Source != store.SourcePairing ||
		k.Scopes != apikey.ReadOnly || k.RevokedAt != nil {
		t.Fatalf("stored key %+v", k)
	}
	// The site's beacon id comes with it: views:write alone.
	if b := e.mustKey(t, d.BeaconID); b.SiteID != e.site || b.Scopes != apikey.ViewsWrite || b.RevokedAt != nil || d.BeaconID == d.APIKey {
		t.Fatalf("beacon id %+v", b)
	}
	got := e.pairingsByKey(t, e.site)[d.KeyID]
	if got.Status != pairing.StatusDelivered || got.DeliveredAt.IsZero() || got.DecidedBy != "operator" {
		t.Fatalf("pairing after delivery %+v", got)
	}
	if logs := e.logs.String(); strings.Contains(logs, d.APIKey) || strings.Contains(logs, s.DeviceCode) ||
		strings.Contains(logs, s.UserCode) {
		t.Error("a secret is in the logs")
	}
}

// Polls racing each other after approval: exactly one gets the key.
func TestConcurrentPollsDeliverOnce(t *testing.T) {
	e := newEnv(t)
	s := e.mustStart(t, "https://agency.example")
	if _, err := e.svc.Approve(context.Background(), s.UserCode, e.site, pairing.Actor{}); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(time.Minute)
	const n = 8
	statuses := make(chan int, n)
	for range n {
		go func() { statuses <- e.poll(t, s.DeviceCode).status }()
	}
	ok := 0
	for range n {
		if <-statuses == 200 {
			ok++
		}
	}
	var keys int
	e.db.Pool.QueryRow(context.Background(), `SELECT count(*) FROM api_keys WHERE beacon_id IS NULL`).Scan(&keys)
	if ok != 1 || keys != 1 {
		t.Fatalf("%d polls got a key, %d keys exist; want 1 and 1", ok, keys)
	}
}

func TestDeny(t *testing.T) {
	e := newEnv(t)
	s := e.mustStart(t, "https://agency.example")
	p, err := e.svc.Deny(context.Background(), s.UserCode, pairing.Actor{Account: "acct-1", IP: "198.51.100.1"})
	if err != nil || p.Status != pairing.StatusDenied || p.DecidedBy != "acct-1" {
		t.Fatalf("deny: %+v, %v", p, err)
	}
	for range 2 {
		e.clock.Advance(time.Minute)
		if got := e.pollError(t, s.DeviceCode); got != "access_denied" {
			t.Fatalf("poll after denial: %s", got)
		}
	}
	if _, err := e.svc.Approve(context.Background(), s.UserCode, e.site, pairing.Actor{}); !errors.Is(err, pairing.ErrDecided) {
		t.Fatalf("approve after denial: %v", err)
	}
	var keys int
	e.db.Pool.QueryRow(context.Background(), `SELECT count(*) FROM api_keys`).Scan(&keys)
	if keys != 0 {
		t.Errorf("%d keys after a denial", keys)
	}
}

func TestExpiry(t *testing.T) {
	tests := []struct {
		name    string
		approve time.Duration // after the start; <0: never
		poll    time.Duration // after the start
		want    string
		wantErr error // of the approval
	}{
		{"pending until it expires", -1, 600 * time.Second, "expired_token", nil},
		{"pending just before", -1, 599 * time.Second, "authorization_pending", nil},
		{"approved too late", 600 * time.Second, 601 * time.Second, "expired_token", pairing.ErrExpired},
		{"approved but not polled in time", 590 * time.Second, 600 * time.Second, "expired_token", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			start := e.clock.Now()
			s := e.mustStart(t, "https://agency.example")
			if tt.approve >= 0 {
				e.clock.Advance(tt.approve)
				if _, err := e.svc.Approve(context.Background(), s.UserCode, e.site, pairing.Actor{}); !errors.Is(err, tt.wantErr) {
					t.Fatalf("approve: %v, want %v", err, tt.wantErr)
				}
			}
			e.clock.Advance(start.Add(tt.poll).Sub(e.clock.Now()))
			if got := e.pollError(t, s.DeviceCode); got != tt.want {
				t.Fatalf("poll: %s, want %s", got, tt.want)
			}
			var keys int
			e.db.Pool.QueryRow(context.Background(), `SELECT count(*) FROM api_keys`).Scan(&keys)
			if keys != 0 {
				t.Errorf("%d keys", keys)
			}
		})
	}
}

// Stale pairings are marked expired in the database by a later start.
func TestStaleMarkedExpired(t *testing.T) {
	e := newEnv(t)
	e.mustStart(t, "https://a.example")
	e.clock.Advance(11 * time.Minute)
	e.mustStart(t, "https://b.example")
	var statuses string
	e.db.Pool.QueryRow(context.Background(), `SELECT string_agg(status, ',' ORDER BY created_at) FROM pairings`).Scan(&statuses)
	if statuses != "expired,pending" {
		t.Errorf("statuses %q", statuses)
	}
}

// A wrong code that shares its first group with a live code counts against
// it; the fifth kills it. Codes sharing nothing are not charged.
func TestWrongEntriesKillTheCode(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	s := e.mustStart(t, "https://agency.example")
	other := e.mustStart(t, "https://other.example")
	wrong := func(code string, i int) string {
		// the same first group, another second
		alt := []byte(code)
		alt[5+i%4] = map[bool]byte{true: 'B', false: 'C'}[alt[5+i%4] != 'B']
		return string(alt)
	}
	for i := range 5 {
		if i == 2 {
			// a code of another first group: no pairing is charged
			if _, err := e.svc.Approve(ctx, "XXXX-XXXX", e.site, pairing.Actor{}); !errors.Is(err, pairing.ErrNotFound) {
				t.Fatalf("unrelated code: %v", err)
			}
		}
		if _, err := e.svc.Approve(ctx, wrong(s.UserCode, i), e.site, pairing.Actor{}); !errors.Is(err, pairing.ErrNotFound) {
			t.Fatalf("wrong code %d: %v", i+1, err)
		}
	}
	if _, err := e.svc.Approve(ctx, s.UserCode, e.site, pairing.Actor{}); !errors.Is(err, pairing.ErrExpired) {
		t.Fatalf("the right code after five wrong ones: %v", err)
	}
	if got := e.pollError(t, s.DeviceCode); got != "expired_token" {
		t.Fatalf("poll of a dead code: %s", got)
	}
	if strings.HasPrefix(other.UserCode, s.UserCode[:4]) {
		t.Skip("the two codes share a first group")
	}
	if _, err := e.svc.Approve(ctx, other.UserCode, e.site, pairing.Actor{}); err != nil {
		t.Fatalf("another code was charged: %v", err)
	}
}

// Wrong codes are limited per client IP and per dashboard account; an
// operator at the CLI (no IP, no account) is not.
func TestWrongEntryLimits(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	tests := []struct {
		name    string
		actor   pairing.Actor
		limited bool
	}{
		{"per IP", pairing.Actor{IP: "198.51.100.9"}, true},
		{"per account", pairing.Actor{Account: "acct-9"}, true},
		{"operator", pairing.Actor{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for i := range 10 {
				code := "ZZZZ-ZZZ" + string(pairing.UserCodeAlphabet[i])
				if i%2 == 1 {
					code = "not a code"
				}
				if _, err := e.svc.Deny(ctx, code, tt.actor); !errors.Is(err, pairing.ErrNotFound) && !errors.Is(err, pairing.ErrMalformedUserCode) {
					t.Fatalf("wrong code %d: %v", i+1, err)
				}
			}
			_, err := e.svc.Deny(ctx, "ZZZZ-ZZZZ", tt.actor)
			if rl, ok := err.(*pairing.RateLimitError); ok != tt.limited || (ok && rl.RetryAfter <= 0) {
				t.Fatalf("eleventh wrong code: %v", err)
			}
		})
	}
	// The account's limit does not spill onto another account from the same IP.
	if _, err := e.svc.Deny(ctx, "ZZZZ-ZZZZ", pairing.Actor{Account: "acct-10"}); !errors.Is(err, pairing.ErrNotFound) {
		t.Errorf("another account: %v", err)
	}
}

func TestApproveUnknownSite(t *testing.T) {
	e := newEnv(t)
	s := e.mustStart(t, "https://agency.example")
	for _, site := range []string{"6f1c2a8e-0000-4000-8000-000000000000", "not-a-uuid"} {
		if _, err := e.svc.Approve(context.Background(), s.UserCode, site, pairing.Actor{}); !errors.Is(err, pairing.ErrUnknownSite) {
			t.Errorf("approve for %s: %v", site, err)
		}
	}
	if got := e.pollError(t, s.DeviceCode); got != "authorization_pending" {
		t.Errorf("poll: %s", got)
	}
}

// Re-pairing a home URL to the same site revokes the earlier key (with the
// key.revoked event edges act on); to another site it does not.
func TestRepairRevokesTheEarlierKey(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	first := e.mustPair(t, "https://agency.example", e.site)
	other, err := e.db.CreateSite(ctx, "Other Realty", "starter", "")
	if err != nil {
		t.Fatal(err)
	}
	elsewhere := e.mustPair(t, "https://agency.example", other.ID)
	unrelated := e.mustPair(t, "https://agency.example/blog", e.site)
	second := e.mustPair(t, "HTTPS://AGENCY.EXAMPLE:443/", e.site)

	if k := e.mustKey(t, first.APIKey); k.RevokedAt == nil {
		t.Fatal("the first key works after re-pairing")
	}
	// The site's beacon id is one for every pairing, and stays.
	if second.BeaconID != first.BeaconID || elsewhere.BeaconID == first.BeaconID || e.mustKey(t, first.BeaconID).RevokedAt != nil {
		t.Errorf("beacon ids: first %s second %s other site %s", first.BeaconID, second.BeaconID, elsewhere.BeaconID)
	}
	for name, d := range map[string]delivered{"second": second, "other site": elsewhere, "other home url": unrelated} {
		if k := e.mustKey(t, d.APIKey); k.RevokedAt != nil {
			t.Errorf("%s key revoked", name)
		}
	}
	events := e.revokedEvents(t)
	hash := apikey.Hash(first.APIKey)
	if len(events) != 1 || events[first.KeyID] != hex.EncodeToString(hash[:]) {
		t.Fatalf("key.revoked events %v", events)
	}
	ps := e.pairingsByKey(t, e.site)
	old, cur := ps[first.KeyID], ps[second.KeyID]
	if old.Status != pairing.StatusDisconnected || old.ReplacedBy != cur.ID || old.DisconnectedAt.IsZero() ||
		cur.Status != pairing.StatusDelivered {
		t.Fatalf("pairings after re-pairing: %+v / %+v", old, cur)
	}
}

// DELETE /v1/pairing with the paired key revokes it; other keys cannot.
func TestDisconnect(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	d := e.mustPair(t, "https://agency.example", e.site)
	paired := e.mustKey(t, d.APIKey)
	cliKey, cliSecret, err := e.db.CreateKey(ctx, store.NewKey{SiteID: e.site, Name: "WordPress by hand", Scopes: apikey.ReadOnly, Source: store.SourceCLI})
	if err != nil {
		t.Fatal(err)
	}
	forged := paired
	forged.SiteID = "6f1c2a8e-0000-4000-8000-000000000000"

	tests := []struct {
		name string
		key  *store.Key
		want int
	}{
		{"no identity", nil, 401},
		{"a key not issued by pairing", &cliKey, 403},
		{"the paired key of another site", &forged, 403},
		{"the paired key", &paired, 204},
		{"again", &paired, 204},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.do(t, request{method: "DELETE", path: "/v1/pairing", contentType: "-", key: tt.key})
			if r.status != tt.want {
				t.Fatalf("DELETE: %d, want %d: %s", r.status, tt.want, r.body)
			}
			if tt.want == 204 && len(r.body) != 0 {
				t.Errorf("204 with a body %q", r.body)
			}
		})
	}
	if k := e.mustKey(t, d.APIKey); k.RevokedAt == nil {
		t.Fatal("the key works after DELETE /v1/pairing")
	}
	if events := e.revokedEvents(t); len(events) != 1 || events[paired.ID] == "" {
		t.Errorf("key.revoked events %v", events)
	}
	p := e.pairingsByKey(t, e.site)[paired.ID]
	if p.Status != pairing.StatusDisconnected || p.ReplacedBy != "" || p.DisconnectedAt.IsZero() {
		t.Errorf("pairing after DELETE %+v", p)
	}
	if k := e.mustKey(t, cliSecret); k.RevokedAt != nil {
		t.Error("the CLI key was revoked")
	}
}

// With the database gone every route answers 503 with Retry-After, the
// API's envelope, never a poll error.
func TestDatabaseGone(t *testing.T) {
	e := newEnv(t)
	d := e.mustPair(t, "https://agency.example", e.site)
	s := e.mustStart(t, "https://other.example")
	paired := e.mustKey(t, d.APIKey)
	e.db.Close()
	for name, rq := range map[string]request{
		"start":      {path: "/v1/pairing/device", body: `{"home_url":"https://a.example"}`},
		"poll":       {path: "/v1/pairing/token", body: `{"grant_type":"urn:ietf:params:oauth:grant-type:device_code","device_code":"` + s.DeviceCode + `"}`},
		"disconnect": {method: "DELETE", path: "/v1/pairing", contentType: "-", key: &paired},
	} {
		t.Run(name, func(t *testing.T) {
			r := e.do(t, rq)
			if r.status != 503 || r.header.Get("Retry-After") == "" {
				t.Fatalf("%d %v %s", r.status, r.header, r.body)
			}
		})
	}
}
