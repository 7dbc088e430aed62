package dashboard_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestMalformedQueryPages: the dashboard's own pages read their queries
// leniently (what does not parse is left out) and never fail on one; a
// form post whose address does not parse is refused as an unreadable form.
func TestMalformedQueryPages(t *testing.T) {
	f := newFixture(t)
	b := f.browser(t)
	if code, body := b.get("/dashboard/login?next=%zz;x=1"); code != http.StatusOK || !strings.Contains(body, "<h1>Sign in</h1>") {
		t.Fatalf("sign-in form: %d %s", code, body)
	}
	b.mustLogin("a@bayside.example", passwordA)
	site := "/dashboard/sites/" + f.siteA.ID
	for _, path := range []string{
		site + "/leads?page=%zz&status=new;x",
		site + "/leads/export?%zz=1",
		site + "/listings?q=%zz&page=2;3",
		site + "/clients?done=%zz",
		"/dashboard/pairing?user_code=%zz",
		"/dashboard?;",
	} {
		if code, body := b.get(path); code != http.StatusOK {
			t.Errorf("GET %s: %d %s", path, code, body)
		}
	}
	token := b.csrf(site + "/keys")
	code, body := b.post(site+"/keys?%zz", url.Values{"csrf_token": {token}, "name": {"x"}, "scope": {"listings:read"}})
	if code != http.StatusBadRequest || !strings.Contains(body, "could not be read") {
		t.Errorf("POST with a malformed query: %d %s", code, body)
	}
}
