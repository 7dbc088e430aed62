package dashboard_test

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/listgate/listgate/pkg/devbrowser"
)

// photoServer serves a listing photo (a PNG drawn here: sky, a house,
// grass) from an origin of its own, as a feed's media host would.
func photoServer(t *testing.T) *httptest.Server {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 800, 500))
	for y := range 500 {
		for x := range 800 {
			c := color.RGBA{R: 150 + uint8(y/10), G: 200, B: 240, A: 255} // sky
			switch {
			case y > 380:
				c = color.RGBA{R: 90, G: 150, B: 70, A: 255} // grass
			case x > 250 && x < 550 && y > 220:
				c = color.RGBA{R: 235, G: 225, B: 205, A: 255} // walls
			case x > 220 && x < 580 && y > 120 && y <= 220 && abs(x-400) < (y-120)*2:
				c = color.RGBA{R: 160, G: 60, B: 50, A: 255} // roof
			}
			img.Set(x, y, c)
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		w.Write(buf.Bytes())
	}))
	t.Cleanup(srv.Close)
	return srv
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// TestBrowserVendorReport drives a real headless Chromium to a listing's
// page and its vendor report, whose photo comes from another origin, and
// prints the report to PDF: one A4 page holding the agency's name, the
// address and the totals, without the dashboard's navigation.
func TestBrowserVendorReport(t *testing.T) {
	photos := photoServer(t)
	f, ref, _ := performanceFixture(t, photos.URL+"/ocean12.png")
	b := devbrowser.New(t, devbrowser.Options{Width: 1024, Height: 900})
	do := b.Do
	get := func(a chromedp.Action[string]) string {
		t.Helper()
		return devbrowser.Get(b, a)
	}
	signInAsA(b, f)

	// From the site's navigation to the top listings, to the listing.
	do(chromedp.Navigate(f.srv.URL+"/dashboard/sites/"+f.siteA.ID),
		chromedp.Click(`a[href$="/performance"]`),
		chromedp.WaitVisible(`#top-listings`),
		chromedp.Click(fmt.Sprintf(`#top-listings a[href$="/listings/%d"]`, ref)),
		chromedp.WaitVisible(`#views-svg`))
	bars := get(chromedp.Evaluate[string](`String(document.querySelectorAll("#views-svg rect.bar").length)`))
	photo := get(chromedp.Evaluate[string](`String(document.getElementById("listing-photo").naturalWidth)`))
	views := get(chromedp.Text(`[data-total="views"]`))
	if bars != "30" || photo != "800" || views != "35" {
		t.Fatalf("listing page: %s bars, photo %s px wide, %s views", bars, photo, views)
	}
	b.Screenshot("listing-performance")

	do(chromedp.Click(`#report-link`), chromedp.WaitVisible(`#report`))
	if w := get(chromedp.Evaluate[string](`String(document.getElementById("report-photo").naturalWidth)`)); w != "800" {
		t.Fatalf("the report's photo from %s did not load (natural width %s)", photos.URL, w)
	}
	// The print button opens the browser's print dialog.
	get(chromedp.Evaluate[string](`window.print = function () { sessionStorage.printed = "yes"; }; ""`))
	do(chromedp.Click(`#print-report`))
	if printed := get(chromedp.Evaluate[string](`sessionStorage.printed || ""`)); printed != "yes" {
		t.Error("the print button does not print")
	}
	b.ScreenshotOf("vendor-report", "#report")

	pdf := b.PrintToPDF()
	if n := devbrowser.PDFPageCount(pdf); n != 1 {
		t.Errorf("the report prints on %d pages, want 1", n)
	}
	if info := devbrowser.PDFInfo(t, pdf); !strings.Contains(info, "Pages:           1\n") || !strings.Contains(info, "(A4)") {
		t.Errorf("pdfinfo:\n%s", info)
	}
	text := devbrowser.PDFText(t, pdf)
	for _, s := range []string{"Bayside Realty", "12 Ocean Pde Seaview VIC 3001", "Listing performance report",
		"Days on market", "56", "138", "79", "2.17", "8 weeks", "38", "5.26", "Mon 23 Nov – Thu 26 Nov (to date)"} {
		if !strings.Contains(text, s) {
			t.Errorf("the printed report lacks %q", s)
		}
	}
	for _, s := range []string{"Sign out", "Connect WordPress", "Print or save as PDF", "a@bayside.example"} {
		if strings.Contains(text, s) {
			t.Errorf("the printed report shows the dashboard's %q", s)
		}
	}
	if t.Failed() {
		t.Logf("printed text:\n%s", text)
	}
}
