package openapi_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"

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
	"github.com/listgate/listgate/pkg/devdb/devdbtest"
	"github.com/listgate/listgate/pkg/model"
	"github.com/listgate/listgate/pkg/reaxml/reaxmlgen"
)

func TestMain(m *testing.M) { os.Exit(devdbtest.RunTests(m)) }

const internalToken = "0123456789abcdef0123456789abcdef-openapi"

// origin is the whole origin API on a database of its own, behind the
// contract check, with one site of generated listings.
type origin struct {
	db *store.DB
	h  http.Handler // the server behind the contract check
	// server is the API's handler alone, for inputs the document cannot
	// describe (FuzzReadRoutes).
	server http.Handler
	site   string
}

func newOrigin(tb testing.TB) *origin {
	tb.Helper()
	db := storetest.NewDB(tb)
	log := slog.New(slog.DiscardHandler)
	site, err := db.CreateSite(context.Background(), "Contract Realty", model.Professional, "")
	if err != nil {
		tb.Fatal(err)
	}
	var feed strings.Builder
	if err := reaxmlgen.Generate(&feed, reaxmlgen.Options{Seed: 7, Listings: 60}); err != nil {
		tb.Fatal(err)
	}
	if _, err := ingest.New(db, log).Import(context.Background(), site.ID, strings.NewReader(feed.String()), ingest.Options{}); err != nil {
		tb.Fatal(err)
	}
	feeds, err := upload.New(upload.Config{DB: db, Importer: ingest.New(db, log), Log: log})
	if err != nil {
		tb.Fatal(err)
	}
	srv := api.New(api.Config{Ready: db.Ping, Unavailable: store.IsUnavailable, Metrics: db.WritePoolMetrics,
		Log: log, InternalToken: internalToken, Mounts: []api.Mounter{listings.New(listings.Config{DB: db}),
			leads.New(leads.Config{DB: db, Log: log}), feeds, openapi.New()}})
	return &origin{db: db, h: contract.Wrap(tb, srv.Handler()), server: srv.Handler(), site: site.ID}
}

// call is one request as the edge forwards it.
type call struct {
	method, path string
	scopes       string // "" for the read scopes; "-" for no identity
	site         string // the identity's site; "" for the origin's
	header       map[string]string
	body         string
}

func (o *origin) do(tb testing.TB, c call) (int, http.Header, []byte) {
	tb.Helper()
	if c.method == "" {
		c.method = "GET"
	}
	req := httptest.NewRequest(c.method, c.path, strings.NewReader(c.body))
	if c.scopes != "-" {
		if c.scopes == "" {
			c.scopes = "listings:read,agents:read,stats:read"
		}
		if c.site == "" {
			c.site = o.site
		}
		req.Header.Set(api.HeaderInternalToken, internalToken)
		req.Header.Set(api.HeaderSite, c.site)
		req.Header.Set(api.HeaderKeyID, "6f1c2a8e-0000-4000-8000-0000000000aa")
		req.Header.Set(api.HeaderScopes, c.scopes)
	}
	for k, v := range c.header {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	o.h.ServeHTTP(rec, req)
	body, _ := io.ReadAll(rec.Result().Body)
	return rec.Code, rec.Header(), body
}

func (o *origin) first(tb testing.TB, path, field string) string {
	tb.Helper()
	status, _, body := o.do(tb, call{path: path})
	var page struct{ Data []map[string]any }
	if err := json.Unmarshal(body, &page); status != 200 || err != nil || len(page.Data) == 0 {
		tb.Fatalf("GET %s = %d %s", path, status, body)
	}
	switch v := page.Data[0][field].(type) {
	case string:
		return v
	case float64:
		return strconv.FormatInt(int64(v), 10)
	}
	tb.Fatalf("%s of %s: %v", field, path, page.Data[0][field])
	return ""
}

// Every read route answers each of its documented outcomes a client can
// cause, and each answer matches the document (contract.Wrap checks them).
func TestReadRoutesAgainstTheDocument(t *testing.T) {
	o := newOrigin(t)
	base := "/v1/sites/" + o.site
	ref := o.first(t, base+"/listings", "listing_ref")
	media := o.first(t, base+"/media", "media_id")
	agent := o.first(t, base+"/agents", "agent_id")
	other := "6f1c2a8e-0000-4000-8000-000000000000"
	routes := []struct {
		path, scope, missing string // missing: a resource that does not exist
	}{
		{"/listings", "listings:read", ""},
		{"/listings/search?q=house", "listings:read", ""},
		{"/listings/featured", "listings:read", ""},
		{"/listings/" + ref, "listings:read", "/listings/NO-SUCH-LISTING"},
		{"/fields", "listings:read", ""},
		{"/media", "listings:read", ""},
		{"/media/" + media, "listings:read", "/media/999999999"},
		{"/agents", "agents:read", ""},
		{"/agents/" + agent, "agents:read", "/agents/999999999"},
		{"/stats/summary", "stats:read", ""},
	}
	for _, rt := range routes {
		t.Run(rt.path, func(t *testing.T) {
			path := base + rt.path
			sep := "?"
			if strings.Contains(path, "?") {
				sep = "&"
			}
			status, hdr, body := o.do(t, call{path: path})
			if status != 200 || hdr.Get("ETag") == "" {
				t.Fatalf("GET %s = %d %s", path, status, body)
			}
			cases := map[string]struct {
				c    call
				want int
			}{
				"not modified":   {call{path: path, header: map[string]string{"If-None-Match": hdr.Get("ETag")}}, 304},
				"head":           {call{method: "HEAD", path: path}, 200},
				"no identity":    {call{path: path, scopes: "-"}, 401},
				"other site":     {call{path: "/v1/sites/" + other + rt.path}, 403},
				"missing scope":  {call{path: path, scopes: "leads:write"}, 403},
				"not acceptable": {call{path: path, header: map[string]string{"Accept": "text/html"}}, 406},
				"unknown param":  {call{path: path + sep + "colour=red"}, 422},
				"site gone":      {call{path: "/v1/sites/" + other + rt.path, site: other}, 404},
				"wrong method":   {call{method: "DELETE", path: path}, 405},
			}
			if rt.path == "/stats/summary" {
				// generated_at is the request's minute, so the summary's
				// ETag changes each minute and a revalidation that crosses
				// one does not match: with a running clock it is not
				// asserted here (TestStatsRoutesContractCases stops the
				// clock and gets its 304).
				delete(cases, "not modified")
			}
			for name, tc := range cases {
				if status, _, body := o.do(t, tc.c); status != tc.want {
					t.Errorf("%s: %s %s = %d, want %d: %s", name, tc.c.method, tc.c.path, status, tc.want, body)
				}
			}
			if rt.missing != "" {
				// Ids no text column can hold (a NUL, bytes that are not
				// UTF-8) are not found either: never sent to fail a query.
				parent := rt.missing[:strings.LastIndexByte(rt.missing, '/')+1]
				for _, missing := range []string{rt.missing, parent + "%00", parent + "a%00b", parent + "%FF", parent + "X:%00"} {
					if status, _, body := o.do(t, call{path: base + missing}); status != 404 {
						t.Errorf("%s = %d, want 404: %s", missing, status, body)
					}
				}
			}
			if strings.HasPrefix(rt.path, "/listings") && !strings.Contains(rt.path, "/listings/") || strings.HasPrefix(rt.path, "/listings/search") {
				// A query value no text column can hold is refused as a
				// malformed query, before any query runs.
				for _, v := range []string{"suburb=%00", "category=a%00b"} {
					if status, _, body := o.do(t, call{path: path + sep + v}); status != 422 {
						t.Errorf("%s%s%s = %d, want 422: %s", path, sep, v, status, body)
					}
				}
			}
		})
	}
}

// The service endpoints, the lead route's basic outcomes and the document
// route, against the document.
func TestServiceRoutesAgainstTheDocument(t *testing.T) {
	o := newOrigin(t)
	for _, c := range []struct {
		c    call
		want int
	}{
		{call{path: "/healthz", scopes: "-"}, 200},
		{call{path: "/readyz", scopes: "-"}, 200},
		{call{path: "/metrics", scopes: "-", header: map[string]string{api.HeaderInternalToken: internalToken}}, 200},
		{call{path: "/metrics", scopes: "-"}, 404}, // not from loopback, no token
		{call{path: "/v1/openapi.json", scopes: "-"}, 200},
		{call{method: "POST", path: "/v1/leads", scopes: "leads:write", header: map[string]string{"Content-Type": "application/json"},
			body: `{"name":"Ann","email":"ann@example.com"}`}, 201},
		{call{method: "POST", path: "/v1/leads", scopes: "leads:write", header: map[string]string{"Content-Type": "application/json"},
			body: `{"name":"Ann"}`}, 422},
		{call{method: "POST", path: "/v1/leads", header: map[string]string{"Content-Type": "application/json"},
			body: `{"name":"Ann","email":"ann@example.com"}`}, 403},
		{call{method: "POST", path: "/v1/leads", scopes: "-", header: map[string]string{"Content-Type": "application/json"},
			body: `{"name":"Ann","email":"ann@example.com"}`}, 401},
	} {
		if status, _, body := o.do(t, c.c); status != c.want {
			t.Errorf("%s %s = %d, want %d: %s", c.c.method, c.c.path, status, c.want, body)
		}
	}
	// A database that is gone: /readyz, the reads and lead intake are 503
	// with Retry-After.
	o.db.Close()
	gone := []call{{path: "/readyz", scopes: "-"},
		{method: "POST", path: "/v1/leads", scopes: "leads:write", header: map[string]string{"Content-Type": "application/json"},
			body: `{"name":"Ann","email":"ann@example.com"}`}}
	for _, p := range []string{"/listings", "/listings/search?q=house", "/listings/featured", "/listings/1", "/fields",
		"/media", "/media/1", "/agents", "/agents/1", "/stats/summary"} {
		gone = append(gone, call{path: "/v1/sites/" + o.site + p})
	}
	for _, c := range gone {
		if status, hdr, body := o.do(t, c); status != 503 || hdr.Get("Retry-After") == "" {
			t.Errorf("%s %s with the database closed = %d %s", c.method, c.path, status, body)
		}
	}
	// The upload API answers 500 here where API.md asks for 503 (reported);
	// whatever it answers must still be documented.
	bearer := map[string]string{"Authorization": "Bearer lgt_" + strings.Repeat("a", 40), "Content-Type": "application/xml"}
	for _, c := range []call{
		{method: "POST", path: "/v1/oauth/token", scopes: "-", header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"},
			body: "grant_type=client_credentials&client_id=lgc_" + strings.Repeat("a", 24) + "&client_secret=x"},
		{method: "POST", path: "/v1/feeds", scopes: "-", header: bearer, body: "<propertyList/>"},
		{path: "/v1/feeds/6f1c2a8e-0000-4000-8000-000000000000", scopes: "-", header: bearer},
	} {
		if status, _, body := o.do(t, c); status < 500 {
			t.Errorf("%s %s with the database closed = %d %s", c.method, c.path, status, body)
		}
	}
}

// Whatever query string a client sends to any read route, and whatever it
// puts where an id goes, the origin never answers with a server error:
// every value is checked before it reaches a query.
func FuzzReadRoutes(f *testing.F) {
	routes := []string{"/listings", "/listings/search", "/listings/featured", "/listings/", "/fields", "/media", "/media/",
		"/agents", "/agents/", "/stats/summary", "/stats/listings/"}
	for i := range routes {
		for _, s := range []string{"", "page=2", "x", "q=pool", "listing_ref=1&kind=image", "status=sold,leased",
			"modified_since=2024-05-01T09:00:00%2B10:00", "suburb=%00", "%00", "%ff", "1", "99999999999999999999",
			"-1", "a:b", "per_page=100&page=10000"} {
			f.Add(uint8(i), s)
		}
	}
	o := newOrigin(f)
	f.Fuzz(func(t *testing.T, route uint8, s string) {
		if strings.IndexFunc(s, func(r rune) bool { return r <= ' ' || r >= 0x7f || r == '#' || r == '?' }) >= 0 {
			return // not on a request line as it is: a client escapes it
		}
		r := routes[int(route)%len(routes)]
		path := "/v1/sites/" + o.site + r
		if strings.HasSuffix(r, "/") { // an id
			if s == "" || strings.ContainsRune(s, '/') {
				return
			}
			path += s
		} else {
			path += "?" + s
		}
		if _, err := url.ParseRequestURI(path); err != nil {
			return // HTTP servers refuse it (400) before any handler
		}
		rec := o.serveBare(httptest.NewRequest("GET", path, nil), "listings:read,agents:read,stats:read")
		if rec.Code >= 500 {
			t.Fatalf("GET %s: %d %s", path, rec.Code, rec.Body)
		}
	})
}

// Whatever body a client posts as a lead, and with whatever Idempotency-Key,
// the origin never answers with a server error: the body is decoded and
// checked whole before the lead's references are looked up or it is stored.
func FuzzLeadRoute(f *testing.F) {
	o := newOrigin(f)
	ref := o.first(f, "/v1/sites/"+o.site+"/listings", "listing_ref")
	id := o.first(f, "/v1/sites/"+o.site+"/listings", "listing_id")
	agent := o.first(f, "/v1/sites/"+o.site+"/agents", "agent_id")
	for _, b := range []string{`{"name":"Ann","email":"ann@example.com"}`, `{"name":"Ann","phone":"+61 400 000 000"}`,
		`{"name":"Ann","email":"ann@example.com","listing_ref":` + ref + `}`, `{"name":"Ann","email":"a@b.c","listing_id":"` + id + `"}`,
		`{"name":"Ann","email":"a@b.c","listing_id":"X:` + id + `"}`, `{"name":"Ann","email":"a@b.c","agent_id":"` + agent + `"}`,
		`{"name":"Ann","email":"a@b.c","listing_ref":99999999999999}`, `{"name":"Ann","email":"a@b.c","listing_ref":-1}`,
		`{"name":"Ann","email":"a@b.c","type":"appraisal","message":"` + strings.Repeat("x", 5000) + `"}`,
		`{"name":"Ann","email":"a@b.c","metadata":{"utm":"x","n":1,"b":true,"z":null}}`, `{"name":"\u0000"}`, `{"name":"\ud800"}`,
		`{"name":"Ann","email":"a@b.c","inspection_at":"2024-02-30T10:00:00Z"}`, `[]`, `null`, `{`, ``, `{"name":1e999}`} {
		f.Add(b, "")
		f.Add(b, "key-1")
	}
	f.Fuzz(func(t *testing.T, body, key string) {
		req := httptest.NewRequest("POST", "/v1/leads", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if key != "" {
			if strings.IndexFunc(key, func(r rune) bool { return r < ' ' || r == 0x7f }) >= 0 {
				return // not a header value HTTP carries
			}
			req.Header.Set("Idempotency-Key", key)
		}
		rec := o.serveBare(req, "leads:write")
		if rec.Code >= 500 {
			t.Fatalf("POST /v1/leads %q (key %q): %d %s", body, key, rec.Code, rec.Body)
		}
	})
}

// serveBare serves req as the edge forwards it, with the origin's site and
// scopes, by the server alone (no contract check: a fuzz target's inputs).
func (o *origin) serveBare(req *http.Request, scopes string) *httptest.ResponseRecorder {
	req.Header.Set(api.HeaderInternalToken, internalToken)
	req.Header.Set(api.HeaderSite, o.site)
	req.Header.Set(api.HeaderKeyID, "6f1c2a8e-0000-4000-8000-0000000000aa")
	req.Header.Set(api.HeaderScopes, scopes)
	rec := httptest.NewRecorder()
	o.server.ServeHTTP(rec, req)
	return rec
}
