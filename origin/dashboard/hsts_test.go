package dashboard_test

import (
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/listgate/listgate/origin/api"
)

// Dashboard responses to requests that came over HTTPS — TLS at the origin,
// or X-Forwarded-Proto: https from the edge (with the internal token) —
// carry Strict-Transport-Security; nothing else does, and a client's own
// X-Forwarded-Proto does not count.
func TestHSTS(t *testing.T) {
	f := newFixture(t)
	tlsSrv := httptest.NewTLSServer(f.srv.Config.Handler)
	t.Cleanup(tlsSrv.Close)
	noFollow := func(c *http.Client) *http.Client {
		c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		return c
	}
	plain, overTLS := noFollow(&http.Client{}), noFollow(tlsSrv.Client())
	overTLS.Transport.(*http.Transport).TLSClientConfig = &tls.Config{InsecureSkipVerify: true}

	paths := map[string]int{
		"/dashboard/login":                         http.StatusOK,
		"/dashboard":                               http.StatusSeeOther, // signed out: to the sign-in form
		"/dashboard/static/dashboard.css":          http.StatusOK,
		"/dashboard/static/nope.js":                http.StatusNotFound,
		"/dashboard/sites/" + f.siteA.ID + "/keys": http.StatusSeeOther,
	}
	for name, tc := range map[string]struct {
		c      *http.Client
		base   string
		header map[string]string
		hsts   bool
	}{
		"plain HTTP":                     {plain, f.srv.URL, nil, false},
		"client's X-Forwarded-Proto":     {plain, f.srv.URL, map[string]string{"X-Forwarded-Proto": "https"}, false},
		"X-Forwarded-Proto, wrong token": {plain, f.srv.URL, map[string]string{"X-Forwarded-Proto": "https", api.HeaderInternalToken: internalToken + "x"}, false},
		"edge over HTTP":                 {plain, f.srv.URL, map[string]string{"X-Forwarded-Proto": "http", api.HeaderInternalToken: internalToken}, false},
		"edge without X-Forwarded-Proto": {plain, f.srv.URL, map[string]string{api.HeaderInternalToken: internalToken}, false},
		"edge over HTTPS":                {plain, f.srv.URL, map[string]string{"X-Forwarded-Proto": "https", api.HeaderInternalToken: internalToken}, true},
		"edge over HTTPS, upper case":    {plain, f.srv.URL, map[string]string{"X-Forwarded-Proto": "HTTPS", api.HeaderInternalToken: internalToken}, true},
		"TLS at the origin":              {overTLS, tlsSrv.URL, nil, true},
	} {
		t.Run(name, func(t *testing.T) {
			for path, status := range paths {
				req, _ := http.NewRequest(http.MethodGet, tc.base+path, nil)
				for k, v := range tc.header {
					req.Header.Set(k, v)
				}
				resp, err := tc.c.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				got := resp.Header.Get("Strict-Transport-Security")
				if resp.StatusCode != status || (got == "max-age=31536000") != tc.hsts || (!tc.hsts && got != "") {
					t.Errorf("GET %s: %d, Strict-Transport-Security %q; want %d, sent %v", path, resp.StatusCode, got, status, tc.hsts)
				}
				secureCookie := false
				for _, c := range resp.Cookies() {
					secureCookie = secureCookie || c.Secure || strings.HasPrefix(c.Name, "__Host-")
				}
				if secureCookie != (tc.hsts && path == "/dashboard/login") {
					t.Errorf("GET %s: cookies %v", path, resp.Cookies())
				}
			}
		})
	}
}
