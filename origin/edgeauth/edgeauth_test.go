package edgeauth

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/listgate/listgate/origin/api"
)

const token = "0123456789abcdef0123456789abcdef-edge"

func TestHeaderIsTheAPIs(t *testing.T) {
	if Header != api.HeaderInternalToken {
		t.Fatalf("Header = %q, origin/api uses %q", Header, api.HeaderInternalToken)
	}
}

func TestMiddleware(t *testing.T) {
	for name, tc := range map[string]struct {
		configured string
		sent       *string
		want       bool
	}{
		"valid token":          {token, ptr(token), true},
		"no token":             {token, nil, false},
		"empty token":          {token, ptr(""), false},
		"wrong token":          {token, ptr(token[:len(token)-1] + "x"), false},
		"prefix of the token":  {token, ptr(token[:10]), false},
		"token plus more":      {token, ptr(token + "x"), false},
		"nothing configured":   {"", ptr(""), false},
		"nothing configured 2": {"", ptr(token), false},
	} {
		t.Run(name, func(t *testing.T) {
			var got bool
			var headerKept bool
			h := Middleware(tc.configured)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				got = Verified(r.Context())
				headerKept = tc.sent == nil || r.Header.Get(Header) == *tc.sent
				if err := Require(r); (err == nil) != tc.want {
					t.Errorf("Require = %v, want ok=%v", err, tc.want)
				}
			}))
			req := httptest.NewRequest("GET", "/internal/v1/events", nil)
			if tc.sent != nil {
				req.Header.Set(Header, *tc.sent)
			}
			h.ServeHTTP(httptest.NewRecorder(), req)
			if got != tc.want {
				t.Errorf("Verified = %v, want %v", got, tc.want)
			}
			if !headerKept {
				t.Error("the middleware changed the token header")
			}
		})
	}
}

func TestRequireWithoutMiddlewareFailsClosed(t *testing.T) {
	req := httptest.NewRequest("GET", "/internal/v1/events", nil)
	req.Header.Set(Header, token)
	if err := Require(req); err == nil {
		t.Fatal("Require passed a request the middleware never saw")
	}
}

func ptr(s string) *string { return &s }
