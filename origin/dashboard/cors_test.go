package dashboard_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/listgate/listgate/origin/store"
)

// corsState returns the site's stored origins and its site.cors_changed
// events.
func (f *fixture) corsState(tb testing.TB, siteID string) ([]string, int) {
	tb.Helper()
	site, err := f.db.GetSite(context.Background(), siteID)
	if err != nil {
		tb.Fatal(err)
	}
	var n int
	if err := f.db.Pool.QueryRow(context.Background(), `SELECT count(*) FROM events WHERE site_id = $1 AND type = $2`,
		siteID, store.EventCORSChanged).Scan(&n); err != nil {
		tb.Fatal(err)
	}
	return site.CORSOrigins, n
}

func TestSiteCORSForm(t *testing.T) {
	f := newFixture(t)
	b := f.browser(t)
	b.mustLogin("a@bayside.example", passwordA)
	page := "/dashboard/sites/" + f.siteA.ID
	action := page + "/cors"

	code, body := b.get(page)
	if code != http.StatusOK || !strings.Contains(body, "Allowed browser origins") ||
		!strings.Contains(body, "No browser origins are allowed") || !strings.Contains(body, `action="`+action+`"`) {
		t.Fatalf("site page: %d %s", code, body)
	}
	// Without the CSRF token: 403, nothing changes.
	if code, _ := b.post(action, url.Values{"origins": {"https://bayside.example"}}); code != http.StatusForbidden {
		t.Fatalf("no CSRF: %d", code)
	}
	if origins, events := f.corsState(t, f.siteA.ID); len(origins) != 0 || events != 0 {
		t.Fatalf("changed without CSRF: %q, %d events", origins, events)
	}

	token := b.csrf(page)
	// One origin a line, as a browser sends a textarea (CRLF), blank lines
	// and spaces ignored; the list is normalized and shown.
	code, body = b.post(action, url.Values{"csrf_token": {token},
		"origins": {"https://WWW.Bayside.example/\r\n\r\n  http://localhost:3000 \r\nhttps://www.bayside.example:443\r\n"}})
	want := []string{"https://www.bayside.example", "http://localhost:3000"}
	if origins, events := f.corsState(t, f.siteA.ID); code != http.StatusOK || !reflect.DeepEqual(origins, want) || events != 1 {
		t.Fatalf("save: %d, %q, %d events: %s", code, origins, events, body)
	}
	for _, s := range []string{"origins are saved", "<li><code>https://www.bayside.example</code></li>",
		"<li><code>http://localhost:3000</code></li>", ">https://www.bayside.example\nhttp://localhost:3000</textarea>"} {
		if !strings.Contains(body, s) {
			t.Errorf("page after saving lacks %q", s)
		}
	}

	// A list the store refuses is shown again with the reason; nothing
	// changes.
	tooMany := make([]string, 21)
	for i := range tooMany {
		tooMany[i] = fmt.Sprintf("https://s%d.example", i)
	}
	for name, tc := range map[string]struct{ text, reason string }{
		"wildcard": {"https://ok.example\nhttps://*.bayside.example", "wildcards are not allowed"},
		"path":     {"https://bayside.example/listings", "without path"},
		"scheme":   {"bayside.example", "must start with http:// or https://"},
		"too many": {strings.Join(tooMany, "\n"), "at most 20 origins"},
		"markup":   {`https://a.example"><script>alert(1)</script>`, "Not saved"},
	} {
		t.Run(name, func(t *testing.T) {
			code, body := b.post(action, url.Values{"csrf_token": {token}, "origins": {tc.text}})
			if code != http.StatusUnprocessableEntity || !strings.Contains(body, `class="problem" role="alert">Not saved: `) ||
				!strings.Contains(body, tc.reason) {
				t.Fatalf("%d %s", code, body)
			}
			if strings.Contains(body, "<script>") {
				t.Fatal("the text is not escaped")
			}
			if name != "markup" && !strings.Contains(body, ">"+tc.text+"</textarea>") {
				t.Errorf("the form lost the text")
			}
			if origins, events := f.corsState(t, f.siteA.ID); !reflect.DeepEqual(origins, want) || events != 1 {
				t.Fatalf("refused list changed the site: %q, %d events", origins, events)
			}
		})
	}

	// An empty form clears the list.
	code, body = b.post(action, url.Values{"csrf_token": {token}, "origins": {"\r\n  "}})
	if origins, events := f.corsState(t, f.siteA.ID); code != http.StatusOK || len(origins) != 0 || events != 2 ||
		!strings.Contains(body, "No browser origins are allowed") {
		t.Fatalf("clear: %d, %q, %d events", code, origins, events)
	}
}

// Another account's user cannot see or change a site's origins, through
// its path or through their own site's.
func TestSiteCORSOtherAccount(t *testing.T) {
	f := newFixture(t)
	if _, err := f.db.SetCORS(context.Background(), f.siteA.ID, []string{"https://bayside.example"}); err != nil {
		t.Fatal(err)
	}
	b := f.browser(t)
	b.mustLogin("B@Hillside.example", passwordB)
	token := b.csrf("/dashboard/sites/" + f.siteB.ID)
	siteA := "/dashboard/sites/" + f.siteA.ID
	if code, body := b.get(siteA); code != http.StatusNotFound || strings.Contains(body, "bayside.example") {
		t.Fatalf("GET A's page as B: %d", code)
	}
	for _, path := range []string{siteA + "/cors", "/dashboard/sites/not-a-uuid/cors"} {
		if code, body := b.post(path, url.Values{"csrf_token": {token}, "origins": {"https://evil.example"}}); code != http.StatusNotFound ||
			strings.Contains(body, "bayside.example") {
			t.Errorf("POST %s as B: %d", path, code)
		}
	}
	// B's own site changes; A's does not.
	if code, _ := b.post("/dashboard/sites/"+f.siteB.ID+"/cors", url.Values{"csrf_token": {token},
		"origins": {"https://hillside.example"}}); code != http.StatusOK {
		t.Fatalf("B's own site: %d", code)
	}
	if origins, events := f.corsState(t, f.siteA.ID); !reflect.DeepEqual(origins, []string{"https://bayside.example"}) || events != 1 {
		t.Fatalf("A's origins %q, %d events", origins, events)
	}
	if origins, _ := f.corsState(t, f.siteB.ID); !reflect.DeepEqual(origins, []string{"https://hillside.example"}) {
		t.Fatalf("B's origins %q", origins)
	}
}
