package upload

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

func TestTokenEndpoint(t *testing.T) {
	// Many cases fail authentication: keep them clear of the limit.
	h := newHarness(t, func(c *Config) { c.AuthFailures = 1000 })
	site := mustSite(t, h.db)
	id, secret := mustClient(t, h.db, site.ID)
	wrongSecret := secret[:len(secret)-1] + map[bool]string{true: "y", false: "x"}[strings.HasSuffix(secret, "x")]
	revokedID, revokedSecret := mustClient(t, h.db, site.ID)
	if _, err := h.db.RevokeOAuthClient(context.Background(), revokedID); err != nil {
		t.Fatal(err)
	}
	grant := url.Values{"grant_type": {"client_credentials"}}
	with := func(extra map[string]string) url.Values {
		v := url.Values{"grant_type": {"client_credentials"}}
		for k, x := range extra {
			v.Set(k, x)
		}
		return v
	}
	// percentEncoded spells every character of s as %XX.
	percentEncoded := func(s string) string {
		var b strings.Builder
		for i := 0; i < len(s); i++ {
			fmt.Fprintf(&b, "%%%02X", s[i])
		}
		return b.String()
	}
	type tc struct {
		req       func() *http.Request
		status    int
		oauthCode string // error of an RFC 6749 response; "" for success or an envelope
		envelope  string // code of an API error envelope
	}
	post := func(form url.Values, auth string) func() *http.Request {
		return func() *http.Request {
			req := h.newRequest("POST", "/v1/oauth/token", strings.NewReader(form.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			if auth != "" {
				req.Header.Set("Authorization", auth)
			}
			return req
		}
	}
	for name, c := range map[string]tc{
		"basic":                  {req: post(grant, basicHeader(id, secret)), status: 200},
		"basic, scope requested": {req: post(with(map[string]string{"scope": "feeds:write"}), basicHeader(id, secret)), status: 200},
		"basic, percent-encoded": {req: post(grant, "basic "+b64(percentEncoded(id)+":"+percentEncoded(secret))), status: 200},
		"basic and same body id": {req: post(with(map[string]string{"client_id": id}), basicHeader(id, secret)), status: 200},
		"form":                   {req: post(with(map[string]string{"client_id": id, "client_secret": secret}), ""), status: 200},
		"form with charset": {req: func() *http.Request {
			r := post(with(map[string]string{"client_id": id, "client_secret": secret}), "")()
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
			return r
		}, status: 200},

		"wrong secret":         {req: post(grant, basicHeader(id, wrongSecret)), status: 401, oauthCode: "invalid_client"},
		"wrong secret in form": {req: post(with(map[string]string{"client_id": id, "client_secret": "lgs_nope"}), ""), status: 401, oauthCode: "invalid_client"},
		"unknown client":       {req: post(grant, basicHeader("lgc_000000000000000000000000", secret)), status: 401, oauthCode: "invalid_client"},
		"malformed client id":  {req: post(grant, basicHeader("admin", secret)), status: 401, oauthCode: "invalid_client"},
		"revoked client":       {req: post(grant, basicHeader(revokedID, revokedSecret)), status: 401, oauthCode: "invalid_client"},
		"no credentials":       {req: post(grant, ""), status: 401, oauthCode: "invalid_client"},
		"id without secret":    {req: post(with(map[string]string{"client_id": id}), ""), status: 401, oauthCode: "invalid_client"},
		"bearer scheme":        {req: post(grant, "Bearer "+secret), status: 401, oauthCode: "invalid_client"},

		"both methods":       {req: post(with(map[string]string{"client_id": id, "client_secret": secret}), basicHeader(id, secret)), status: 400, oauthCode: "invalid_request"},
		"missing grant_type": {req: post(url.Values{}, basicHeader(id, secret)), status: 400, oauthCode: "invalid_request"},
		"empty grant_type":   {req: post(url.Values{"grant_type": {""}}, basicHeader(id, secret)), status: 400, oauthCode: "invalid_request"},
		"repeated parameter": {req: post(url.Values{"grant_type": {"client_credentials", "client_credentials"}}, basicHeader(id, secret)), status: 400, oauthCode: "invalid_request"},
		"secret without id":  {req: post(with(map[string]string{"client_secret": secret}), ""), status: 400, oauthCode: "invalid_request"},
		"malformed basic":    {req: post(grant, "Basic !!!"), status: 400, oauthCode: "invalid_request"},
		"json body": {req: func() *http.Request {
			r := post(grant, basicHeader(id, secret))()
			r.Header.Set("Content-Type", "application/json")
			return r
		}, status: 400, oauthCode: "invalid_request"},
		"credentials in query": {req: func() *http.Request {
			r := post(grant, "")()
			r.URL.RawQuery = url.Values{"client_id": {id}, "client_secret": {secret}}.Encode()
			return r
		}, status: 400, oauthCode: "invalid_request"},
		"body over 8 KiB": {req: post(with(map[string]string{"pad": strings.Repeat("x", 9000)}), basicHeader(id, secret)), status: 400, oauthCode: "invalid_request"},

		"password grant":     {req: post(url.Values{"grant_type": {"password"}, "username": {"a"}, "password": {"b"}}, basicHeader(id, secret)), status: 400, oauthCode: "unsupported_grant_type"},
		"authorization code": {req: post(url.Values{"grant_type": {"authorization_code"}, "code": {"x"}}, basicHeader(id, secret)), status: 400, oauthCode: "unsupported_grant_type"},
		"admin scope":        {req: post(with(map[string]string{"scope": "admin"}), basicHeader(id, secret)), status: 400, oauthCode: "invalid_scope"},
		"two scopes":         {req: post(with(map[string]string{"scope": "feeds:write listings:read"}), basicHeader(id, secret)), status: 400, oauthCode: "invalid_scope"},

		"GET": {req: func() *http.Request { return h.newRequest("GET", "/v1/oauth/token", nil) }, status: 405, envelope: "METHOD_NOT_ALLOWED"},
	} {
		t.Run(name, func(t *testing.T) {
			r := h.do(c.req())
			if r.status != c.status {
				t.Fatalf("status %d, want %d: %s", r.status, c.status, r.body)
			}
			if strings.Contains(string(r.body), secret) || strings.Contains(string(r.body), revokedSecret) {
				t.Errorf("response shows a client secret: %s", r.body)
			}
			if c.envelope != "" {
				if code := r.errorCode(t); code != c.envelope {
					t.Errorf("envelope code %s, want %s", code, c.envelope)
				}
				if c.status == 405 && r.header.Get("Allow") != "POST" {
					t.Errorf("Allow %q", r.header.Get("Allow"))
				}
				return
			}
			if r.header.Get("Cache-Control") != "no-store" || r.header.Get("Pragma") != "no-cache" {
				t.Errorf("Cache-Control %q, Pragma %q; want no-store, no-cache", r.header.Get("Cache-Control"), r.header.Get("Pragma"))
			}
			if !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") {
				t.Errorf("Content-Type %q", r.header.Get("Content-Type"))
			}
			wantAuth := ""
			if c.status == 401 {
				wantAuth = `Basic realm="listgate"`
			}
			if got := r.header.Get("WWW-Authenticate"); got != wantAuth {
				t.Errorf("WWW-Authenticate %q, want %q", got, wantAuth)
			}
			if c.oauthCode != "" {
				var e map[string]string
				r.json(t, &e)
				if e["error"] != c.oauthCode || e["error_description"] == "" || len(e) != 2 {
					t.Errorf("error body %v, want error %s with a description", e, c.oauthCode)
				}
				return
			}
			var tok tokenResponse
			r.json(t, &tok)
			if !wellFormed(tok.AccessToken, TokenPrefix, TokenLen) || tok.TokenType != "Bearer" || tok.ExpiresIn != 3600 || tok.Scope != "feeds:write" {
				t.Errorf("token response %s", r.body)
			}
		})
	}
	t.Run("token is stored only as its hash", func(t *testing.T) {
		tok := h.mustToken(id, secret)
		var inClear bool
		if err := h.db.Pool.QueryRow(context.Background(), `SELECT EXISTS (SELECT 1 FROM oauth_tokens t
			WHERE position($1 in t::text) > 0 OR position($2 in t::text) > 0)`, tok, secret).Scan(&inClear); err != nil || inClear {
			t.Fatalf("token or secret stored in clear (%v)", err)
		}
	})
	if logs := h.logs.String(); strings.Contains(logs, secret) || strings.Contains(logs, "lgt_") {
		t.Errorf("logs show a secret or a token:\n%s", logs)
	}
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func TestTokenExpiry(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.TokenTTL = 10 * time.Minute })
	site := mustSite(t, h.db)
	id, secret := mustClient(t, h.db, site.ID)
	r := h.postToken(url.Values{"grant_type": {"client_credentials"}}, id, secret)
	var tok tokenResponse
	r.json(t, &tok)
	if tok.ExpiresIn != 600 {
		t.Fatalf("expires_in %d, want 600", tok.ExpiresIn)
	}
	// An authenticated request for an unknown feed is 404; an
	// unauthenticated one is 401.
	const unknownFeed = "6f1c2a8e-0000-4000-8000-000000000000"
	if r := h.getFeed(tok.AccessToken, unknownFeed); r.status != 404 {
		t.Fatalf("fresh token: %d %s", r.status, r.body)
	}
	h.clock.advance(10*time.Minute - time.Second)
	if r := h.getFeed(tok.AccessToken, unknownFeed); r.status != 404 {
		t.Fatalf("token a second before expiry: %d %s", r.status, r.body)
	}
	h.clock.advance(time.Second)
	r = h.getFeed(tok.AccessToken, unknownFeed)
	if r.status != 401 || r.header.Get("WWW-Authenticate") != `Bearer error="invalid_token"` {
		t.Fatalf("expired token: %d %q %s", r.status, r.header.Get("WWW-Authenticate"), r.body)
	}
	// The next token request purges expired tokens.
	h.mustToken(id, secret)
	var left int
	if err := h.db.Pool.QueryRow(context.Background(), `SELECT count(*) FROM oauth_tokens WHERE token_hash = $1`,
		hashOf(tok.AccessToken)).Scan(&left); err != nil || left != 0 {
		t.Fatalf("expired token still stored (%d, %v)", left, err)
	}
}

func TestRevokedClientTokensStopWorking(t *testing.T) {
	h := newHarness(t, nil)
	site := mustSite(t, h.db)
	id, secret := mustClient(t, h.db, site.ID)
	tok := h.mustToken(id, secret)
	if _, err := h.db.RevokeOAuthClient(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	if r := h.getFeed(tok, "6f1c2a8e-0000-4000-8000-000000000000"); r.status != 401 {
		t.Fatalf("token of a revoked client: %d %s", r.status, r.body)
	}
}

func TestTokenFailedAuthLimit(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.AuthFailures = 3 })
	site := mustSite(t, h.db)
	id, secret := mustClient(t, h.db, site.ID)
	grant := url.Values{"grant_type": {"client_credentials"}}
	for i := range 3 {
		if r := h.postToken(grant, id, "lgs_wrong"); r.status != 401 {
			t.Fatalf("failure %d: %d %s", i+1, r.status, r.body)
		}
	}
	// Blocked now, even with the right secret.
	r := h.postToken(grant, id, secret)
	if r.status != 429 || r.errorCode(t) != "RATE_LIMIT_EXCEEDED" || r.header.Get("Retry-After") != "60" {
		t.Fatalf("after 3 failures: %d Retry-After %q %s", r.status, r.header.Get("Retry-After"), r.body)
	}
	h.clock.advance(time.Minute)
	if r := h.postToken(grant, id, secret); r.status != 200 {
		t.Fatalf("a minute later: %d %s", r.status, r.body)
	}
}

func hashOf(s string) []byte {
	h := hashSecret(s)
	return h[:]
}
