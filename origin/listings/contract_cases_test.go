package listings

import (
	"fmt"
	"strings"
	"testing"
	"time"

	json "github.com/goccy/go-json"

	"github.com/listgate/listgate/origin/store/storetest"
)

// newEnvAt is newEnv with the read API's clock stopped at now: the stats
// routes' generated_at (to the minute) is in their body and so in their
// ETag, which must not move between a request and its revalidation.
func newEnvAt(tb testing.TB, now time.Time) *testEnv {
	tb.Helper()
	return newEnvWith(tb, storetest.NewDB(tb), Config{Now: func() time.Time { return now }})
}

// The stats routes' documented outcomes a client can cause at the origin,
// each checked against the document by contract.Wrap: revalidation (304),
// no identity (401), the wrong site or scope (403), a site that is gone
// (404), an Accept without JSON (406) and a database that is gone (503),
// each with the error code API.md gives its status.
func TestStatsRoutesContractCases(t *testing.T) {
	e := newEnvAt(t, time.Date(2026, 11, 4, 1, 2, 3, 0, time.UTC))
	ref := mustRef(t, e, e.site, "S1", "current")
	gone := "6f1c2a8e-0000-4000-8000-000000000000"
	routes := map[string]string{
		"summary": "/v1/sites/{site}/stats/summary",
		"top":     "/v1/sites/{site}/stats/listings",
		"listing": fmt.Sprintf("/v1/sites/{site}/stats/listings/%d", ref),
	}
	etags := map[string]string{}
	for name, path := range routes {
		resp, body := e.do(t, req{path: strings.ReplaceAll(path, "{site}", e.site)})
		if resp.StatusCode != 200 || resp.Header.Get("ETag") == "" {
			t.Fatalf("%s: GET %s = %d %s", name, path, resp.StatusCode, body)
		}
		etags[name] = resp.Header.Get("ETag")
	}

	cases := []struct {
		name  string
		route string
		r     req
		want  int
		code  string // the error's code; "" for an answer without a body
	}{
		{"summary revalidated", "summary", req{header: map[string]string{"If-None-Match": etags["summary"]}}, 304, ""},
		{"top revalidated", "top", req{header: map[string]string{"If-None-Match": `"other", ` + etags["top"]}}, 304, ""},
		{"listing revalidated", "listing", req{header: map[string]string{"If-None-Match": etags["listing"]}}, 304, ""},
		{"top without identity", "top", req{anon: true}, 401, "UNAUTHORIZED"},
		{"listing without identity", "listing", req{anon: true}, 401, "UNAUTHORIZED"},
		{"listing without stats:read", "listing", req{scopes: "listings:read,agents:read"}, 403, "FORBIDDEN"},
		{"listing of another site's key", "listing", req{site: gone}, 403, "FORBIDDEN"},
		{"top of a site that is gone", "top", req{site: gone, path: "/v1/sites/" + gone + "/stats/listings"}, 404, "NOT_FOUND"},
		{"top not acceptable", "top", req{header: map[string]string{"Accept": "text/html"}}, 406, "NOT_ACCEPTABLE"},
		{"listing not acceptable", "listing", req{header: map[string]string{"Accept": "text/html, application/json;q=0"}}, 406, "NOT_ACCEPTABLE"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.r
			if r.path == "" {
				r.path = strings.ReplaceAll(routes[tc.route], "{site}", e.site)
			}
			resp, body := e.do(t, r)
			if resp.StatusCode != tc.want {
				t.Fatalf("GET %s = %d %s, want %d", r.path, resp.StatusCode, body, tc.want)
			}
			if tc.code == "" {
				if len(body) != 0 || resp.Header.Get("ETag") != etags[tc.route] {
					t.Errorf("304: ETag %q, body %q; want ETag %q and no body", resp.Header.Get("ETag"), body, etags[tc.route])
				}
				return
			}
			var eb errorBody
			if err := json.Unmarshal(body, &eb); err != nil || eb.Error.Code != tc.code {
				t.Errorf("GET %s = %d %s, want code %s", r.path, resp.StatusCode, body, tc.code)
			}
		})
	}

	// A database that is gone: 503 with Retry-After, on a site whose time
	// zone the service has cached (the request gets as far as its query).
	e.db.Close()
	for _, name := range []string{"top", "listing"} {
		path := strings.ReplaceAll(routes[name], "{site}", e.site)
		resp, body := e.do(t, req{path: path})
		var eb errorBody
		if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" ||
			json.Unmarshal(body, &eb) != nil || eb.Error.Code != "SERVICE_UNAVAILABLE" {
			t.Errorf("GET %s with the database closed = %d (Retry-After %q) %s, want 503 SERVICE_UNAVAILABLE",
				path, resp.StatusCode, resp.Header.Get("Retry-After"), body)
		}
	}
}
