package e2e

import (
	"strings"
	"testing"
	"time"
)

func TestAuthenticationMatrix(t *testing.T) {
	s := newSystem(t)
	edge := s.startEdge(edgeOpts{})
	site := s.site("professional")
	good := s.key(site, "listings:read,agents:read,stats:read,leads:write")
	revoked := s.key(site, "listings:read")
	s.cli(nil, "keys", "revoke", revoked.ID)
	url := edge.url() + "/v1/sites/" + site + "/listings"

	malformed := "lgk_notakey"
	badSum := good.Key[:36] + "zzzz"
	for name, tc := range map[string]struct {
		hdr    map[string]string
		status int
		code   string
	}{
		"no key":                   {nil, 401, "UNAUTHORIZED"},
		"malformed bearer":         {bearer(malformed), 401, "UNAUTHORIZED"},
		"malformed x-api-key":      {map[string]string{"X-API-Key": malformed}, 401, "UNAUTHORIZED"},
		"bad checksum bearer":      {bearer(badSum), 401, "UNAUTHORIZED"},
		"bad checksum x-api-key":   {map[string]string{"X-API-Key": badSum}, 401, "UNAUTHORIZED"},
		"unknown bearer":           {bearer(validUnknown(t)), 401, "UNAUTHORIZED"},
		"unknown x-api-key":        {map[string]string{"X-API-Key": validUnknown(t)}, 401, "UNAUTHORIZED"},
		"revoked bearer":           {bearer(revoked.Key), 401, "UNAUTHORIZED"},
		"revoked x-api-key":        {map[string]string{"X-API-Key": revoked.Key}, 401, "UNAUTHORIZED"},
		"basic auth":               {map[string]string{"Authorization": "Basic " + good.Key}, 401, "UNAUTHORIZED"},
		"conflicting headers":      {map[string]string{"Authorization": "Bearer " + good.Key, "X-API-Key": revoked.Key}, 401, "UNAUTHORIZED"},
		"good bearer":              {bearer(good.Key), 200, ""},
		"good x-api-key":           {map[string]string{"X-API-Key": good.Key}, 200, ""},
		"both headers, same key":   {map[string]string{"Authorization": "Bearer " + good.Key, "X-API-Key": good.Key}, 200, ""},
		"lower-case bearer scheme": {map[string]string{"Authorization": "bearer " + good.Key}, 200, ""},
	} {
		t.Run(name, func(t *testing.T) {
			r := do(t, "GET", url, nil, tc.hdr)
			if r.status != tc.status || r.code() != tc.code {
				t.Errorf("%d %s %s, want %d %s", r.status, r.code(), r.body, tc.status, tc.code)
			}
			if r.header.Get("X-Request-Id") == "" {
				t.Error("no X-Request-Id")
			}
			// RFC 6750: a 401 names the scheme, and invalid_token when a key was sent.
			if want := map[bool]string{true: `Bearer realm="listgate", error="invalid_token"`, false: `Bearer realm="listgate"`}[tc.hdr != nil]; r.status == 401 && r.header.Get("WWW-Authenticate") != want {
				t.Errorf("WWW-Authenticate %q, want %q", r.header.Get("WWW-Authenticate"), want)
			}
			if r.status == 200 && r.header.Get("X-RateLimit-Limit") != "600" {
				t.Errorf("X-RateLimit-Limit %q", r.header.Get("X-RateLimit-Limit"))
			}
		})
	}
}

// validUnknown returns a key with a correct checksum that was never issued.
func validUnknown(tb testing.TB) string {
	tb.Helper()
	k := mustGenerate(tb)
	return k
}

func TestSiteIsolationAndScopes(t *testing.T) {
	s := newSystem(t)
	edge := s.startEdge(edgeOpts{})
	siteA, siteB := s.site("enterprise"), s.site("enterprise")
	keyA := s.key(siteA, "listings:read,agents:read,stats:read,leads:write")

	r := do(t, "GET", edge.url()+"/v1/sites/"+siteB+"/listings", nil, bearer(keyA.Key))
	if r.status != 403 || r.code() != "FORBIDDEN" {
		t.Errorf("site A's key on site B: %d %s", r.status, r.body)
	}
	routes := map[string]string{
		"/listings": "listings:read", "/listings/search?q=x": "listings:read", "/listings/featured": "listings:read",
		"/listings/1": "listings:read", "/fields": "listings:read", "/media": "listings:read", "/media/1": "listings:read",
		"/agents": "agents:read", "/agents/1": "agents:read", "/stats/summary": "stats:read",
	}
	all := []string{"listings:read", "agents:read", "stats:read", "leads:write"}
	for _, missing := range all {
		var others []string
		for _, sc := range all {
			if sc != missing {
				others = append(others, sc)
			}
		}
		k := s.key(siteA, strings.Join(others, ","))
		for path, need := range routes {
			r := do(t, "GET", edge.url()+"/v1/sites/"+siteA+path, nil, bearer(k.Key))
			if need == missing {
				if r.status != 403 || !strings.Contains(r.message(), "missing scope "+need) {
					t.Errorf("%s without %s: %d %s", path, missing, r.status, r.body)
				}
			} else if r.status == 403 || r.status == 401 {
				t.Errorf("%s with %s: %d %s", path, strings.Join(others, ","), r.status, r.body)
			}
		}
		r := do(t, "POST", edge.url()+"/v1/leads", []byte(`{"name":"A","email":"a@example.com"}`),
			map[string]string{"Authorization": "Bearer " + k.Key, "Content-Type": "application/json"})
		if missing == "leads:write" {
			if r.status != 403 || !strings.Contains(r.message(), "missing scope leads:write") {
				t.Errorf("leads without leads:write: %d %s", r.status, r.body)
			}
		} else if r.status == 403 || r.status == 401 {
			t.Errorf("leads with leads:write: %d %s", r.status, r.body)
		}
	}
	for name, tc := range map[string]struct {
		method, path string
		status       int
	}{
		"unknown path":   {"GET", "/v1/nope", 404},
		"wrong method":   {"DELETE", "/v1/sites/" + siteA + "/listings", 405},
		"trailing slash": {"GET", "/v1/sites/" + siteA + "/listings/", 404},
	} {
		r := do(t, tc.method, edge.url()+tc.path, nil, bearer(keyA.Key))
		if r.status != tc.status {
			t.Errorf("%s: %d %s", name, r.status, r.body)
		}
		if tc.status == 405 && r.header.Get("Allow") == "" {
			t.Errorf("%s: no Allow header", name)
		}
	}
}

// A revoked key is refused by every edge within one second.
func TestRevocationReachesEveryEdge(t *testing.T) {
	s := newSystem(t)
	edges := []*proc{s.startEdge(edgeOpts{}), s.startEdge(edgeOpts{})}
	site := s.site("enterprise")
	k := s.key(site, "listings:read")
	url := "/v1/sites/" + site + "/listings"
	for _, e := range edges {
		if r := do(t, "GET", e.url()+url, nil, bearer(k.Key)); r.status != 200 {
			t.Fatalf("before revocation: %d %s", r.status, r.body)
		}
	}
	s.cli(nil, "keys", "revoke", k.ID)
	// The revocation comes through the event stream: well before the
	// 30 s key TTL, which alone would also refuse the key. How soon (the
	// documented second) is the bench's to measure (key-revoked): on a
	// loaded test machine the stream may take longer than a second.
	revokedAt := time.Now()
	for i, e := range edges {
		for {
			r := do(t, "GET", e.url()+url, nil, bearer(k.Key))
			if r.status == 401 {
				t.Logf("edge %d refused the revoked key after %v", i, time.Since(revokedAt).Round(time.Millisecond))
				break
			}
			if time.Since(revokedAt) > 5*time.Second {
				t.Fatalf("edge %d still accepts the key %v after revocation (%d)", i, time.Since(revokedAt), r.status)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

func TestOriginDown(t *testing.T) {
	s := newSystem(t)
	edge := s.startEdge(edgeOpts{})
	site := s.site("enterprise")
	k := s.key(site, "listings:read")
	other := s.key(site, "listings:read")
	if r := do(t, "GET", edge.url()+"/v1/sites/"+site+"/listings", nil, bearer(k.Key)); r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	s.origin.kill()
	for name, key := range map[string]string{"cached key": k.Key, "uncached key": other.Key, "unknown key": validUnknown(t)} {
		r := do(t, "GET", edge.url()+"/v1/sites/"+site+"/listings?per_page=3", nil, bearer(key))
		if r.status != 503 || r.code() != "SERVICE_UNAVAILABLE" || r.header.Get("Retry-After") == "" {
			t.Errorf("%s with the origin down: %d %s", name, r.status, r.body)
		}
	}
	if r := do(t, "GET", edge.url()+"/readyz", nil, nil); r.status != 503 {
		t.Errorf("readyz with the origin down: %d", r.status)
	}
	if r := do(t, "GET", edge.url()+"/healthz", nil, nil); r.status != 200 {
		t.Errorf("healthz: %d", r.status)
	}
}
