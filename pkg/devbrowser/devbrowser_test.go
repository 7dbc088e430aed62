package devbrowser

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserAndIncognitoShareNoCookies reads a page in a tab and checks
// that an Incognito tab of the same browser does not see its cookie.
func TestBrowserAndIncognitoShareNoCookies(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/set" {
			http.SetCookie(w, &http.Cookie{Name: "who", Value: "first"})
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(`<title>devbrowser</title><p id="c"></p><script>document.getElementById("c").textContent = document.cookie || "none"</script>`))
	}))
	defer srv.Close()
	b := New(t, Options{})
	b.Do(chromedp.Navigate(srv.URL+"/set"), chromedp.Navigate(srv.URL+"/read"), chromedp.WaitVisible(`#c`))
	if got := Get(b, chromedp.Text(`#c`)); got != "who=first" {
		t.Fatalf("first tab's cookie %q", got)
	}
	if title := Get(b, chromedp.Title()); title != "devbrowser" {
		t.Errorf("title %q", title)
	}
	other := b.Incognito()
	other.Do(chromedp.Navigate(srv.URL+"/read"), chromedp.WaitVisible(`#c`))
	if got := Get(other, chromedp.Text(`#c`)); got != "none" {
		t.Fatalf("incognito tab sees cookie %q", got)
	}
}

// TestModuleRoot finds this module's go.mod from the package directory.
func TestModuleRoot(t *testing.T) {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "pkg", "devbrowser", "devbrowser.go")); err != nil {
		t.Fatalf("module root %s: %v", root, err)
	}
}
