package dashboard_test

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/listgate/listgate/pkg/apikey"
)

// chromium returns the path of a headless-capable Chromium. Without one the
// test is skipped, except when CI is set: there it fails (.ci/run installs
// Debian's chromium).
func chromium(tb testing.TB) string {
	tb.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		tb.Fatal("no Chromium on PATH (install Debian's chromium)")
	}
	tb.Skip("no Chromium on PATH; install chromium to run the browser tests")
	return ""
}

// TestBrowserSignInAndKey drives a real headless Chromium: sign in, create
// a key and read it once, revoke it after confirming.
func TestBrowserSignInAndKey(t *testing.T) {
	bin := chromium(t)
	f := newFixture(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(bin),
		chromedp.NoSandbox, chromedp.DisableGPU, chromedp.WindowSize(390, 844)) // phone width
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, 60*time.Second)
	defer cancel()

	do := func(steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, steps...); err != nil {
			t.Fatal(err)
		}
	}
	get := func(a chromedp.Action[string]) string {
		t.Helper()
		v, err := chromedp.Run(ctx, a)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}

	do(chromedp.Navigate(f.srv.URL+"/dashboard"),
		chromedp.WaitVisible(`#email`),
		chromedp.SendKeys(`#email`, "a@bayside.example"),
		chromedp.SendKeys(`#password`, passwordA),
		chromedp.Click(`#sign-in`),
		chromedp.WaitVisible(`main table`))
	if sites := get(chromedp.Text(`main`)); !strings.Contains(sites, "Bayside Realty") || strings.Contains(sites, "Hillside") {
		t.Fatalf("sites page %q", sites)
	}
	do(chromedp.Navigate(f.srv.URL+"/dashboard/sites/"+f.siteA.ID+"/keys"),
		chromedp.WaitVisible(`#key-name`),
		chromedp.SendKeys(`#key-name`, "Website"),
		chromedp.Click(`#create-key`),
		chromedp.WaitVisible(`#secret`))
	secret := get(chromedp.Value(`#secret`))
	k, err := f.db.KeyByHash(context.Background(), apikey.Hash(secret))
	if err != nil || k.Name != "Website" || k.Scopes != apikey.ReadOnly {
		t.Fatalf("key %q: %+v %v", secret, k, err)
	}
	// Revoke, answering the confirmation yes (and recording its question).
	do(chromedp.Navigate(f.srv.URL+"/dashboard/sites/"+f.siteA.ID+"/keys"),
		chromedp.WaitVisible(`#keys`))
	get(chromedp.Evaluate[string](`window.confirm = function (m) { sessionStorage.asked = m; return true; }; ""`))
	do(chromedp.Click(`#keys button.danger`),
		chromedp.WaitVisible(`.notice`))
	keysTable := get(chromedp.Text(`#keys`))
	asked := get(chromedp.Evaluate[string](`sessionStorage.asked || ""`))
	if !strings.Contains(asked, "Revoke the key") {
		t.Errorf("no confirmation before revoking (asked %q)", asked)
	}
	if strings.Contains(keysTable, secret) || !strings.Contains(keysTable, "revoked") {
		t.Fatalf("keys table after revoking %q", keysTable)
	}
	if k, _ := f.db.KeyByHash(context.Background(), apikey.Hash(secret)); k.RevokedAt == nil {
		t.Fatal("not revoked")
	}
}
