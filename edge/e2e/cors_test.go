package e2e

import (
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	json "github.com/goccy/go-json"

	"github.com/listgate/listgate/pkg/devbrowser"
)

// frontEnd is an agency's JavaScript front-end: a blank page on an origin
// of its own, from which a test runs fetch() against the edge.
func frontEnd(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<!doctype html><title>Agency</title><p id="ready">ready</p>`)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}

// browserFetch runs fetch(url, init) in the page of b and returns
// "status etag" or "error: …" when the browser refused the answer.
func browserFetch(b *devbrowser.Browser, url string, init map[string]any) string {
	b.TB.Helper()
	u, _ := json.Marshal(url)
	in, _ := json.Marshal(init)
	return devbrowser.Get(b, chromedp.Evaluate[string](`fetch(`+string(u)+`, `+string(in)+`).then(
		r => r.status + " " + (r.headers.get("ETag") || "-"), e => "error: " + e.message)`, chromedp.EvalAwaitPromise))
}

// A real browser on an agency's own origin reads listings and sends an
// enquiry through the edge when the site allows that origin, and is
// refused (the browser hides the answer) when it does not; a change of
// the site's origins reaches the edge at once.
func TestCORSFromBrowser(t *testing.T) {
	b := devbrowser.New(t, devbrowser.Options{})
	s := newSystem(t)
	edge := s.startEdge(edgeOpts{})
	site := s.site("enterprise")
	key := s.key(site, "listings:read,leads:write")
	s.importFeed(site, feed("2024-02-01-10:00:00", "First headline"))
	allowed, other := frontEnd(t), frontEnd(t)
	s.cli(nil, "sites", "set-cors", site, allowed)

	listings := edge.url() + "/v1/sites/" + site + "/listings"
	read := map[string]any{"headers": map[string]string{"Authorization": "Bearer " + key.Key}}
	lead := func(email string) map[string]any {
		return map[string]any{"method": "POST", "headers": map[string]string{"Authorization": "Bearer " + key.Key,
			"Content-Type": "application/json", "Idempotency-Key": email},
			"body": `{"name":"Sam","email":"` + email + `","message":"Is it still available?"}`}
	}

	b.Do(chromedp.Navigate(allowed), chromedp.WaitVisible(`#ready`))
	if got := browserFetch(b, listings, read); !strings.HasPrefix(got, "200 \"") {
		t.Errorf("allowed origin, listings: %q (want 200 and a readable ETag)", got)
	}
	if got := browserFetch(b, listings+"?page=1", read); !strings.HasPrefix(got, "200 ") {
		t.Errorf("allowed origin, listings again (cached): %q", got)
	}
	if got := browserFetch(b, edge.url()+"/v1/leads", lead("cors-1@example.com")); !strings.HasPrefix(got, "201 ") {
		t.Errorf("allowed origin, enquiry: %q", got)
	}

	b.Do(chromedp.Navigate(other), chromedp.WaitVisible(`#ready`))
	if got := browserFetch(b, listings, read); !strings.HasPrefix(got, "error: ") {
		t.Errorf("other origin, listings: %q, want the browser to refuse it", got)
	}
	// The preflight of /v1/leads passes for any origin, but the answer is
	// not given to a page the key's site does not allow.
	if got := browserFetch(b, edge.url()+"/v1/leads", lead("cors-2@example.com")); !strings.HasPrefix(got, "error: ") {
		t.Errorf("other origin, enquiry: %q, want the browser to refuse the answer", got)
	}

	s.cli(nil, "sites", "set-cors", site, other)
	// Through the event stream: well before the edge's 5 min CORS TTL.
	deadline := time.Now().Add(5 * time.Second)
	for i := 2; ; i++ {
		// A new URL each time: the browser caches a refused preflight.
		got := browserFetch(b, fmt.Sprintf("%s?page=%d", listings, i), read)
		if strings.HasPrefix(got, "200 ") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("5 s after set-cors the other origin still gets %q", got)
		}
		time.Sleep(50 * time.Millisecond)
	}
	b.Do(chromedp.Navigate(allowed), chromedp.WaitVisible(`#ready`))
	if got := browserFetch(b, listings+"?page=99", read); !strings.HasPrefix(got, "error: ") {
		t.Errorf("the origin the site dropped: %q", got)
	}
}
