package openapi_test

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	json "github.com/goccy/go-json"

	"github.com/listgate/listgate/origin/api"
	"github.com/listgate/listgate/origin/ingest"
	"github.com/listgate/listgate/origin/leads"
	"github.com/listgate/listgate/origin/listings"
	"github.com/listgate/listgate/origin/openapi"
	"github.com/listgate/listgate/origin/openapi/contract"
	"github.com/listgate/listgate/origin/store"
	"github.com/listgate/listgate/origin/store/storetest"
	"github.com/listgate/listgate/origin/upload"
	"github.com/listgate/listgate/pairing"
	"github.com/listgate/listgate/pairing/pairinghttp"
	"github.com/listgate/listgate/pkg/apikey"
	"github.com/listgate/listgate/pkg/model"
	"github.com/listgate/listgate/pkg/ratelimit"
)

// pairingClock is the pairing service's clock, moved by the test.
type pairingClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *pairingClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *pairingClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// newFullOrigin is the origin's API with every route it serves (the
// pairing routes too, which newOrigin leaves out) on a database of its own,
// behind the contract check, with one site and no listings. A client IP
// may start two pairings an hour.
func newFullOrigin(tb testing.TB) (*origin, *pairing.Service, *pairingClock) {
	tb.Helper()
	db := storetest.NewDB(tb)
	site, err := db.CreateSite(context.Background(), "Pairing Realty", model.Professional, "")
	if err != nil {
		tb.Fatal(err)
	}
	clock := &pairingClock{now: time.Now().UTC()}
	log := slog.New(slog.DiscardHandler)
	svc, err := pairing.New(pairing.Config{Store: db.Pairings(), PublicURL: "https://api.listgate.example", Log: log,
		Now: clock.Now, StartsPerIP: ratelimit.NewWindowLimiter(2, time.Hour)})
	if err != nil {
		tb.Fatal(err)
	}
	ph, err := pairinghttp.New(pairinghttp.Config{Service: svc})
	if err != nil {
		tb.Fatal(err)
	}
	feeds, err := upload.New(upload.Config{DB: db, Importer: ingest.New(db, log), Log: log})
	if err != nil {
		tb.Fatal(err)
	}
	srv := api.New(api.Config{Ready: db.Ping, Unavailable: store.IsUnavailable, Metrics: db.WritePoolMetrics,
		Log: log, InternalToken: internalToken, Mounts: []api.Mounter{listings.New(listings.Config{DB: db}),
			leads.New(leads.Config{DB: db, Log: log}), feeds, ph, openapi.New()}})
	return &origin{db: db, h: contract.Wrap(tb, srv.Handler()), server: srv.Handler(), site: site.ID}, svc, clock
}

// public is a call to a route without a key, as the edge forwards it from
// the client at ip, with a JSON body unless contentType says otherwise.
func public(path, ip, contentType, body string) call {
	if contentType == "" {
		contentType = "application/json"
	}
	return call{method: "POST", path: path, scopes: "-", body: body, header: map[string]string{
		api.HeaderInternalToken: internalToken, api.HeaderClientIP: ip, "Content-Type": contentType}}
}

// The pairing routes' documented outcomes a client can cause at the
// origin, each checked against the document by contract.Wrap, with the
// error code (and the field of details) the document gives.
func TestPairingRoutesContractCases(t *testing.T) {
	o, svc, clock := newFullOrigin(t)
	const grant = `{"grant_type":"urn:ietf:params:oauth:grant-type:device_code","device_code":`
	start := `{"home_url":"https://agency.example","site_name":"Agency Realty","plugin_version":"1.0.0"}`
	big := `{"home_url":"https://agency.example","site_name":"` + strings.Repeat("x", pairinghttp.MaxBodyBytes) + `"}`

	// A pairing approved for the origin's site, whose key is delivered:
	// the key the plugin disconnects with.
	status, _, body := o.do(t, public("/v1/pairing/device", "203.0.113.1", "", start))
	var st struct {
		DeviceCode string `json:"device_code"`
		UserCode   string `json:"user_code"`
	}
	if err := json.Unmarshal(body, &st); status != 200 || err != nil {
		t.Fatalf("start: %d %s", status, body)
	}
	if _, err := svc.Approve(context.Background(), st.UserCode, o.site, pairing.Actor{}); err != nil {
		t.Fatal(err)
	}
	clock.advance(time.Minute)
	status, _, body = o.do(t, public("/v1/pairing/token", "203.0.113.1", "", grant+`"`+st.DeviceCode+`"}`))
	var key struct {
		APIKey string   `json:"api_key"`
		KeyID  string   `json:"key_id"`
		SiteID string   `json:"site_id"`
		Scopes []string `json:"scopes"`
	}
	if err := json.Unmarshal(body, &key); status != 200 || err != nil || key.KeyID == "" {
		t.Fatalf("poll after approval: %d %s", status, body)
	}
	paired := map[string]string{api.HeaderKeyID: key.KeyID, api.HeaderSite: key.SiteID, api.HeaderScopes: strings.Join(key.Scopes, ",")}

	cases := []struct {
		name  string
		c     call
		want  int
		code  string // the error envelope's code; "" for none
		field string // a key details must have
	}{
		{"device: not JSON", public("/v1/pairing/device", "203.0.113.2", "text/plain", start), 415, "UNSUPPORTED_MEDIA_TYPE", ""},
		{"device: JSON in Latin-1", public("/v1/pairing/device", "203.0.113.2", "application/json; charset=iso-8859-1", start), 415, "UNSUPPORTED_MEDIA_TYPE", ""},
		{"device: over 8 KiB", public("/v1/pairing/device", "203.0.113.2", "", big), 413, "PAYLOAD_TOO_LARGE", ""},
		{"device: malformed JSON", public("/v1/pairing/device", "203.0.113.2", "", `{"home_url":`), 422, "VALIDATION_ERROR", "body"},
		{"device: no home_url", public("/v1/pairing/device", "203.0.113.2", "", `{"site_name":"Agency Realty"}`), 422, "VALIDATION_ERROR", "home_url"},
		{"device: unknown field", public("/v1/pairing/device", "203.0.113.2", "", `{"home_url":"https://agency.example","colour":"red"}`), 422, "VALIDATION_ERROR", "colour"},
		{"device: second start from one IP", public("/v1/pairing/device", "203.0.113.1", "", start), 200, "", ""},
		{"device: over the per-IP limit", public("/v1/pairing/device", "203.0.113.1", "", start), 429, "RATE_LIMIT_EXCEEDED", ""},
		{"token: over 8 KiB", public("/v1/pairing/token", "203.0.113.2", "", grant+`"`+strings.Repeat("x", pairinghttp.MaxBodyBytes)+`"}`), 413, "PAYLOAD_TOO_LARGE", ""},
		{"disconnect: no identity", call{method: "DELETE", path: "/v1/pairing", scopes: "-"}, 401, "UNAUTHORIZED", ""},
		{"disconnect: a key pairing did not issue", call{method: "DELETE", path: "/v1/pairing"}, 403, "FORBIDDEN", ""},
		{"disconnect: the paired key", call{method: "DELETE", path: "/v1/pairing", header: paired}, 204, "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, hdr, body := o.do(t, tc.c)
			if status != tc.want {
				t.Fatalf("%s %s = %d %s, want %d", tc.c.method, tc.c.path, status, body, tc.want)
			}
			if tc.code == "" {
				return
			}
			var env struct {
				Error struct {
					Code    string
					Details map[string]string
				}
			}
			if err := json.Unmarshal(body, &env); err != nil || env.Error.Code != tc.code ||
				(tc.field != "" && env.Error.Details[tc.field] == "") {
				t.Errorf("%s %s = %d %s, want code %s with details[%q]", tc.c.method, tc.c.path, status, body, tc.code, tc.field)
			}
			if tc.want == 429 && hdr.Get("Retry-After") == "" {
				t.Errorf("429 without Retry-After")
			}
		})
	}

	// The 204 revoked the paired key.
	if k, err := o.db.KeyByHash(context.Background(), apikey.Hash(key.APIKey)); err != nil || k.RevokedAt == nil {
		t.Errorf("the paired key after DELETE /v1/pairing: %+v, %v; want it revoked", k, err)
	}

	// A database that is gone: every pairing route is 503 with Retry-After.
	o.db.Close()
	for _, c := range []call{
		public("/v1/pairing/device", "203.0.113.3", "", start),
		public("/v1/pairing/token", "203.0.113.3", "", grant+`"`+st.DeviceCode+`"}`),
		{method: "DELETE", path: "/v1/pairing", header: paired},
	} {
		status, hdr, body := o.do(t, c)
		var env struct{ Error struct{ Code string } }
		if status != 503 || hdr.Get("Retry-After") == "" || json.Unmarshal(body, &env) != nil || env.Error.Code != "SERVICE_UNAVAILABLE" {
			t.Errorf("%s %s with the database closed = %d (Retry-After %q) %s, want 503 SERVICE_UNAVAILABLE",
				c.method, c.path, status, hdr.Get("Retry-After"), body)
		}
	}
}

// A failure the server did not foresee (here: tables its queries name are
// gone, as after a botched migration) is 500 INTERNAL_ERROR on every route,
// in the documented envelope, and the message reveals nothing internal
// (API.md: "a bug; message reveals nothing internal").
func TestServerErrorsAgainstTheDocument(t *testing.T) {
	o, _, _ := newFullOrigin(t)
	client, secret, err := upload.CreateClient(context.Background(), o.db, o.site, "CRM")
	if err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"sites", "leads", "pairings", "oauth_clients", "oauth_tokens"} {
		if _, err := o.db.Pool.Exec(context.Background(), "ALTER TABLE "+table+" RENAME TO "+table+"_gone"); err != nil {
			t.Fatal(err)
		}
	}
	base := "/v1/sites/" + o.site
	bearer := map[string]string{"Authorization": "Bearer lgt_" + strings.Repeat("a", 40), "Content-Type": "application/xml"}
	calls := []call{
		{method: "POST", path: "/v1/leads", scopes: "leads:write", header: map[string]string{"Content-Type": "application/json"},
			body: `{"name":"Ann","email":"ann@example.com"}`},
		{method: "POST", path: "/v1/oauth/token", scopes: "-", header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"},
			body: "grant_type=client_credentials&client_id=" + client.ClientID + "&client_secret=" + secret},
		{method: "POST", path: "/v1/feeds", scopes: "-", header: bearer, body: "<propertyList/>"},
		{path: "/v1/feeds/6f1c2a8e-0000-4000-8000-000000000000", scopes: "-", header: bearer},
		public("/v1/pairing/device", "203.0.113.9", "", `{"home_url":"https://agency.example"}`),
		public("/v1/pairing/token", "203.0.113.9", "", `{"grant_type":"urn:ietf:params:oauth:grant-type:device_code","device_code":"`+strings.Repeat("A", pairing.DeviceCodeLen)+`"}`),
		{method: "DELETE", path: "/v1/pairing"},
	}
	for _, p := range []string{"/listings", "/listings/search?q=house", "/listings/featured", "/listings/1", "/fields",
		"/media", "/media/1", "/agents", "/agents/1", "/stats/summary", "/stats/listings", "/stats/listings/1"} {
		calls = append(calls, call{path: base + p})
	}
	for _, c := range calls {
		status, _, body := o.do(t, c)
		var env struct {
			Error struct{ Code, Message string }
		}
		if status != 500 || json.Unmarshal(body, &env) != nil || env.Error.Code != "INTERNAL_ERROR" {
			t.Errorf("%s %s with its tables gone = %d %s, want 500 INTERNAL_ERROR", c.method, c.path, status, body)
		}
		for _, leak := range []string{"_gone", "relation", "SQLSTATE", "store:"} {
			if strings.Contains(string(body), leak) {
				t.Errorf("%s %s: the 500 reveals %q: %s", c.method, c.path, leak, body)
			}
		}
	}
}
