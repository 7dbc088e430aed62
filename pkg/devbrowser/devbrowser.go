// Package devbrowser runs headless Chromium for Listgate's browser tests,
// through chromedp: it finds the binary, starts it with the flags this kind
// of machine needs (root without a sandbox, no GPU, offline), gives each
// test a browser of its own that is closed when the test ends, and saves
// screenshots for the docs when LISTGATE_SCREENSHOTS=1.
package devbrowser

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// names are the executables ExecPath looks for on PATH, in order.
var names = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}

// ExecPath returns the path of the first headless-capable Chromium on PATH,
// or "" when there is none.
func ExecPath() string {
	for _, name := range names {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// Require returns ExecPath. Without a Chromium it skips tb, except when the
// CI environment variable is set: there it fails tb (.ci/run installs
// Debian's chromium).
func Require(tb testing.TB) string {
	tb.Helper()
	if p := ExecPath(); p != "" {
		return p
	}
	if os.Getenv("CI") != "" {
		tb.Fatal("no Chromium on PATH (install Debian's chromium)")
	}
	tb.Skip("no Chromium on PATH; install chromium to run the browser tests")
	return ""
}

// Options tune New. The zero value is ready to use.
type Options struct {
	// Width and Height are the window's size. Default 1024×768.
	Width, Height int
	// Flags are added after the defaults, for example
	// chromedp.Flag("host-resolver-rules", "MAP a.example 127.0.0.1:8443").
	Flags []chromedp.ExecAllocatorOption
	// Timeout bounds each Do and Get. Default 30 s.
	Timeout time.Duration
}

// AllocatorOptions are the flags New starts Chromium bin with: chromedp's
// defaults (headless, no first-run, no background networking), no sandbox
// (Chromium refuses to run its sandbox as root), no GPU, the window size,
// then extra.
func AllocatorOptions(bin string, width, height int, extra ...chromedp.ExecAllocatorOption) []chromedp.ExecAllocatorOption {
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(bin),
		chromedp.NoSandbox, chromedp.DisableGPU, chromedp.WindowSize(width, height))
	return append(opts, extra...)
}

// Browser is one tab of a headless Chromium. Do, Get and Screenshot fail
// TB; a subtest that uses the browser sets TB to itself first. A Browser is
// not safe for concurrent use; Incognito gives another goroutine a tab of
// its own.
type Browser struct {
	// TB is the test that errors fail.
	TB testing.TB
	// Ctx is the tab's chromedp context. It has no deadline: Do and Get
	// bound each call by the Options' Timeout.
	Ctx context.Context

	timeout time.Duration
}

// New starts Chromium (see Require) and opens a tab. Both are closed when tb
// ends.
func New(tb testing.TB, opts Options) *Browser {
	tb.Helper()
	bin := Require(tb)
	if opts.Width == 0 || opts.Height == 0 {
		opts.Width, opts.Height = 1024, 768
	}
	if opts.Timeout == 0 {
		opts.Timeout = 30 * time.Second
	}
	actx, cancel := chromedp.NewExecAllocator(context.Background(),
		AllocatorOptions(bin, opts.Width, opts.Height, opts.Flags...)...)
	tb.Cleanup(cancel)
	ctx, cancel := chromedp.NewContext(actx)
	tb.Cleanup(cancel)
	b := &Browser{TB: tb, Ctx: ctx, timeout: opts.Timeout}
	// The first run starts the browser and binds its life to the context
	// it is given: give it the one without a deadline, and bound the
	// start by closing the browser if it takes too long.
	started := make(chan error, 1)
	go func() { started <- chromedp.Do(ctx) }()
	select {
	case err := <-started:
		if err != nil {
			tb.Fatalf("devbrowser: start %s: %v", bin, err)
		}
	case <-time.After(2 * opts.Timeout):
		cancel()
		<-started
		tb.Fatalf("devbrowser: %s did not start in %v", bin, 2*opts.Timeout)
	}
	return b
}

// Incognito opens a tab in a new browser context of the same Chromium: it
// shares no cookies or storage with b's. It is closed when b.TB ends.
func (b *Browser) Incognito() *Browser {
	b.TB.Helper()
	ctx, cancel := chromedp.NewContext(b.Ctx, chromedp.WithNewBrowserContext())
	b.TB.Cleanup(cancel)
	n := &Browser{TB: b.TB, Ctx: ctx, timeout: b.timeout}
	if err := chromedp.Do(ctx); err != nil {
		b.TB.Fatalf("devbrowser: new browser context: %v", err)
	}
	return n
}

// Do runs steps in order within the timeout, failing TB at the first error.
func (b *Browser) Do(steps ...chromedp.Action[chromedp.Void]) {
	b.TB.Helper()
	ctx, cancel := context.WithTimeout(b.Ctx, b.timeout)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		b.TB.Fatal(err)
	}
}

// Get runs a and returns its value within b's timeout, failing b.TB on an
// error.
func Get[T any](b *Browser, a chromedp.Action[T]) T {
	b.TB.Helper()
	ctx, cancel := context.WithTimeout(b.Ctx, b.timeout)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		b.TB.Fatal(err)
	}
	return v
}

// Screenshot saves the whole page as docs/screenshots/<name>.png of this
// module, only when LISTGATE_SCREENSHOTS=1 (so ordinary runs rewrite no
// files).
func (b *Browser) Screenshot(name string) {
	b.TB.Helper()
	if os.Getenv("LISTGATE_SCREENSHOTS") == "1" {
		b.saveScreenshot(name, Get(b, chromedp.FullScreenshot(100)))
	}
}

// ScreenshotOf is Screenshot of the first element that the CSS selector
// sel matches.
func (b *Browser) ScreenshotOf(name, sel string) {
	b.TB.Helper()
	if os.Getenv("LISTGATE_SCREENSHOTS") == "1" {
		b.saveScreenshot(name, Get(b, chromedp.Screenshot(chromedp.CSS(sel))))
	}
}

// saveScreenshot writes png as docs/screenshots/<name>.png.
func (b *Browser) saveScreenshot(name string, png []byte) {
	b.TB.Helper()
	root, err := moduleRoot()
	if err != nil {
		b.TB.Fatal(err)
	}
	dir := filepath.Join(root, "docs", "screenshots")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.TB.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		b.TB.Fatal(err)
	}
}

// moduleRoot is the nearest directory at or above the working directory
// (a test's package directory) that holds go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("devbrowser: no go.mod above the working directory")
		}
		dir = parent
	}
}

// PrintToPDF prints the page to PDF as Chromium's print dialog would: print
// media, backgrounds, the page size and margins of the page's CSS @page
// rule (A4 when it has none). Wait for the page to load first.
func (b *Browser) PrintToPDF() []byte {
	b.TB.Helper()
	return Get(b, chromedp.PrintToPDF(chromedp.PDFPaper(chromedp.PaperA4), chromedp.PDFPreferCSSPageSize(),
		chromedp.PDFPrintBackground()))
}

// pdfPageRE matches a page object's type, not the page tree's (/Pages).
var pdfPageRE = regexp.MustCompile(`/Type\s*/Page\b`)

// PDFPageCount counts the page objects of pdf (a "/Type /Page" dictionary
// each; the page tree is "/Type /Pages"). Chromium writes them outside
// object streams, so they can be counted in the file's bytes.
func PDFPageCount(pdf []byte) int { return len(pdfPageRE.FindAll(pdf, -1)) }

// PDFText returns the text of pdf as poppler's pdftotext lays it out
// (-layout). Without pdftotext it skips tb, except when the CI environment
// variable is set: there it fails tb (.ci/run installs poppler-utils).
func PDFText(tb testing.TB, pdf []byte) string {
	tb.Helper()
	return poppler(tb, "pdftotext", pdf, "-layout", "-enc", "UTF-8")
}

// PDFInfo returns what poppler's pdfinfo says of pdf ("Pages: 1",
// "Page size: 595.276 x 841.89 pts (A4)" …); it skips or fails tb as
// PDFText does without pdfinfo.
func PDFInfo(tb testing.TB, pdf []byte) string {
	tb.Helper()
	return poppler(tb, "pdfinfo", pdf)
}

// poppler runs the poppler tool name on pdf (written to a file of tb's
// temporary directory) with args, and returns its output.
func poppler(tb testing.TB, name string, pdf []byte, args ...string) string {
	tb.Helper()
	bin, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") != "" {
			tb.Fatalf("no %s on PATH (install Debian's poppler-utils)", name)
		}
		tb.Skipf("no %s on PATH; install poppler-utils to check printed pages", name)
	}
	file := filepath.Join(tb.TempDir(), "page.pdf")
	if err := os.WriteFile(file, pdf, 0o644); err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmdArgs := append(args, file)
	if name == "pdftotext" {
		cmdArgs = append(cmdArgs, "-") // to stdout
	}
	out, err := exec.CommandContext(ctx, bin, cmdArgs...).Output()
	if err != nil {
		tb.Fatalf("%s: %v", name, err)
	}
	return string(out)
}
