package e2e

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/chromedp/chromedp"
)

// mediaHost is the host of the demo listings' media URLs. It does not
// resolve here (offline): Chromium is told to send its requests to
// startMediaServer's server instead.
const mediaHost = "media.listgate.example"

// startMediaServer serves one small generated PNG for every path over
// HTTPS, in place of the listing photos, until the test ends.
func startMediaServer(t *testing.T) *httptest.Server {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 48, 32))
	for y := 0; y < 32; y++ {
		for x := 0; x < 48; x++ {
			img.Set(x, y, color.RGBA{uint8(40 + 4*x), uint8(90 + 3*y), 160, 255})
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	body := buf.Bytes()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		w.Header().Set("Cache-Control", "max-age=3600")
		w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// mediaFlags are the Chromium flags that send requests for mediaHost to srv
// and accept its self-signed certificate.
func mediaFlags(t *testing.T, srv *httptest.Server) []chromedp.ExecAllocatorOption {
	t.Helper()
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	return []chromedp.ExecAllocatorOption{
		chromedp.Flag("host-resolver-rules", "MAP "+mediaHost+" "+u.Host),
		chromedp.IgnoreCertErrors,
	}
}
