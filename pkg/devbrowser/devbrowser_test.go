package devbrowser

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
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

// TestPrintToPDF prints a page of two sheets (a forced page break) on the
// A4 of its @page rule and reads the PDF back: its pages counted in the
// bytes and by pdfinfo, its size and its text.
func TestPrintToPDF(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(`<!doctype html><title>pdf</title><style>@page { size: A4; margin: 10mm }
			.next { break-before: page }</style><p id="one">First sheet</p><p class="next">Second sheet</p>`))
	}))
	defer srv.Close()
	b := New(t, Options{})
	b.Do(chromedp.Navigate(srv.URL), chromedp.WaitVisible(`#one`))
	pdf := b.PrintToPDF()
	if !strings.HasPrefix(string(pdf), "%PDF-") {
		t.Fatalf("not a PDF: %q", pdf[:min(len(pdf), 16)])
	}
	if n := PDFPageCount(pdf); n != 2 {
		t.Fatalf("%d page objects, want 2", n)
	}
	info := PDFInfo(t, pdf)
	if !strings.Contains(info, "Pages:           2") || !strings.Contains(info, "(A4)") {
		t.Fatalf("pdfinfo:\n%s", info)
	}
	if text := PDFText(t, pdf); !strings.Contains(text, "First sheet") || !strings.Contains(text, "Second sheet") {
		t.Fatalf("text %q", text)
	}
}
