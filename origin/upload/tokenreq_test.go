package upload

import (
	"crypto/rand"
	"errors"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf8"
)

func TestParseTokenRequest(t *testing.T) {
	const id, secret = "lgc_abc", "lgs_s3cr3t"
	for name, c := range map[string]struct {
		auth     []string
		body     string
		code     string // "" for a well-formed request
		id, sec  string
		scope    string
		grantArg string
	}{
		"basic":                   {auth: []string{basicHeader(id, secret)}, body: "grant_type=client_credentials", id: id, sec: secret},
		"basic, scheme in caps":   {auth: []string{"BASIC " + b64(id+":"+secret)}, body: "grant_type=client_credentials", id: id, sec: secret},
		"basic, form-encoded":     {auth: []string{"Basic " + b64("a%2Bb+c:p%3Aq")}, body: "grant_type=x", id: "a+b c", sec: "p:q"},
		"basic, colon in secret":  {auth: []string{"Basic " + b64("a:b:c")}, body: "grant_type=x", id: "a", sec: "b:c"},
		"form":                    {body: "grant_type=client_credentials&client_id=" + id + "&client_secret=" + secret + "&scope=feeds%3Awrite", id: id, sec: secret, scope: "feeds:write"},
		"empty values are absent": {body: "grant_type=client_credentials&client_id=" + id + "&client_secret=" + secret + "&scope=", id: id, sec: secret},

		"both":                 {auth: []string{basicHeader(id, secret)}, body: "grant_type=client_credentials&client_id=" + id + "&client_secret=" + secret, code: errInvalidRequest},
		"other body id":        {auth: []string{basicHeader(id, secret)}, body: "grant_type=client_credentials&client_id=lgc_other", code: errInvalidRequest},
		"two headers":          {auth: []string{basicHeader(id, secret), basicHeader(id, secret)}, body: "grant_type=client_credentials", code: errInvalidRequest},
		"no grant type":        {auth: []string{basicHeader(id, secret)}, body: "scope=feeds:write", code: errInvalidRequest},
		"repeated":             {auth: []string{basicHeader(id, secret)}, body: "grant_type=a&grant_type=a", code: errInvalidRequest},
		"bad escape":           {auth: []string{basicHeader(id, secret)}, body: "grant_type=%zz", code: errInvalidRequest},
		"bad base64":           {auth: []string{"Basic ***"}, body: "grant_type=x", code: errInvalidRequest},
		"no colon":             {auth: []string{"Basic " + b64(id)}, body: "grant_type=x", code: errInvalidRequest},
		"bad escape in basic":  {auth: []string{"Basic " + b64("%zz:x")}, body: "grant_type=x", code: errInvalidRequest},
		"secret without id":    {body: "grant_type=x&client_secret=" + secret, code: errInvalidRequest},
		"nothing":              {body: "grant_type=x", code: errInvalidClient},
		"id only":              {body: "grant_type=x&client_id=" + id, code: errInvalidClient},
		"empty basic password": {auth: []string{"Basic " + b64(id+":")}, body: "grant_type=x", code: errInvalidClient},
		"digest scheme":        {auth: []string{"Digest username=x"}, body: "grant_type=x", code: errInvalidClient},
	} {
		t.Run(name, func(t *testing.T) {
			req, err := parseTokenRequest(c.auth, c.body)
			if c.code != "" {
				if err == nil || err.code != c.code {
					t.Fatalf("got %+v, %v; want %s", req, err, c.code)
				}
				return
			}
			if err != nil || req.clientID != c.id || req.clientSecret != c.sec || req.scope != c.scope {
				t.Fatalf("got %+v, %v; want id %q secret %q scope %q", req, err, c.id, c.sec, c.scope)
			}
		})
	}
}

// FuzzParseTokenRequest: any header and body give a complete request or an
// RFC 6749 error whose description uses only the characters §5.2 allows.
func FuzzParseTokenRequest(f *testing.F) {
	f.Add(basicHeader("lgc_a", "lgs_b"), "grant_type=client_credentials")
	f.Add("", "grant_type=client_credentials&client_id=a&client_secret=b&scope=feeds%3Awrite")
	f.Add("Basic "+b64("a%zz:b"), "grant_type=x&grant_type=y")
	f.Add("Basic", "%")
	f.Add("basic   "+b64(":"), ";&=")
	f.Fuzz(func(t *testing.T, auth, body string) {
		var hdr []string
		if auth != "" {
			hdr = []string{auth}
		}
		req, err := parseTokenRequest(hdr, body)
		if err != nil {
			switch err.code {
			case errInvalidRequest, errInvalidClient:
			default:
				t.Fatalf("code %q", err.code)
			}
			for _, r := range err.description {
				// RFC 6749 §5.2: %x20-21 / %x23-5B / %x5D-7E.
				if r < 0x20 || r > 0x7E || r == '"' || r == '\\' {
					t.Fatalf("description %q has %q", err.description, r)
				}
			}
			return
		}
		if req.clientID == "" || req.clientSecret == "" || req.grantType == "" {
			t.Fatalf("accepted an incomplete request %+v", req)
		}
	})
}

// FuzzBasicRoundTrip: credentials encoded as RFC 6749 §2.3.1 says are read
// back unchanged.
func FuzzBasicRoundTrip(f *testing.F) {
	f.Add("lgc_abc", "lgs_def")
	f.Add("a:b", "c d+e%")
	f.Add("", "")
	f.Fuzz(func(t *testing.T, id, secret string) {
		if !utf8.ValidString(id) || !utf8.ValidString(secret) {
			t.Skip()
		}
		gotID, gotSecret, basic, ok := parseBasic(basicHeader(id, secret))
		if !basic || !ok || gotID != id || gotSecret != secret {
			t.Fatalf("got %q, %q (%v %v); want %q, %q", gotID, gotSecret, basic, ok, id, secret)
		}
	})
}

func TestCredentialFormats(t *testing.T) {
	for name, c := range map[string]struct {
		prefix string
		n      int
	}{
		"client id": {ClientIDPrefix, ClientIDLen},
		"secret":    {SecretPrefix, SecretLen},
		"token":     {TokenPrefix, TokenLen},
	} {
		t.Run(name, func(t *testing.T) {
			seen := map[string]bool{}
			for range 100 {
				s, err := newCredential(rand.Reader, c.prefix, c.n-len(c.prefix))
				if err != nil || !wellFormed(s, c.prefix, c.n) || seen[s] {
					t.Fatalf("%q, %v (repeat %v)", s, err, seen[s])
				}
				seen[s] = true
			}
		})
	}
	if _, err := newCredential(iotest.ErrReader(errors.New("no entropy")), TokenPrefix, 40); err == nil {
		t.Error("a failing random source gave a credential")
	}
	for _, s := range []string{"", "lgt_", "lgt_" + strings.Repeat("a", 39), "lgt_" + strings.Repeat("a", 39) + "-",
		"lgs_" + strings.Repeat("a", 40), "lgt_" + strings.Repeat("é", 20)} {
		if wellFormed(s, TokenPrefix, TokenLen) {
			t.Errorf("%q passes as a token", s)
		}
	}
}
