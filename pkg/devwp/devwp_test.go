package devwp

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestSiteServesInstalledWordPress starts MariaDB, lays out and serves a
// site, installs WordPress, and reads its front page and an option.
func TestSiteServesInstalledWordPress(t *testing.T) {
	Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	db, err := StartMariaDB(ctx, t.TempDir(), "wordpress")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	site, err := NewSite(t.TempDir(), SiteOptions{Socket: db.Socket})
	if err != nil {
		t.Fatal(err)
	}
	if err := site.Serve(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(site.Close)
	if err := site.Install(ctx, InstallOptions{Title: "Devwp Test", User: "admin", Password: `pa$$'word\`, Email: "admin@example.com", Permalinks: "/%postname%/"}); err != nil {
		t.Fatal(err)
	}
	out, err := site.PHP(ctx, `echo get_option( 'blogname' ), '|', get_option( 'siteurl' ), '|',
		wp_check_password( wp_slash( $args['pw'] ), get_user_by( 'login', 'admin' )->user_pass ) ? 'ok' : 'bad', '|',
		get_permalink( wp_insert_post( array( 'post_type' => 'page', 'post_status' => 'publish',
			'post_title' => 'Pretty', 'post_content' => 'A pretty permalink' ) ) );`,
		map[string]string{"pw": `pa$$'word\`})
	if err != nil {
		t.Fatal(err)
	}
	if want := "Devwp Test|" + site.URL + "|ok|" + site.URL + "/pretty/"; out != want {
		t.Fatalf("PHP printed %q, want %q", out, want)
	}
	for path, want := range map[string]string{"/": "Devwp Test", "/pretty/": "A pretty permalink"} {
		resp, err := http.Get(site.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(body), want) {
			t.Fatalf("%s: %d %.300s", path, resp.StatusCode, body)
		}
	}
	site.Close()
	if _, err := http.Get(site.URL + "/"); err == nil {
		t.Error("the site still answers after Close")
	}
	// WordPress 6.1 has PHP 8.2 deprecations of its own: only worse counts.
	for _, line := range strings.Split(site.ReadDebugLog(), "\n") {
		if strings.Contains(line, "PHP Fatal") || strings.Contains(line, "PHP Warning") || strings.Contains(line, "PHP Parse") {
			t.Errorf("debug.log: %s", line)
		}
	}
}

// TestMissingPHPNamesPackage checks that Installed names the Debian package
// of a missing binary.
func TestMissingPHPNamesPackage(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	err := Installed()
	if !errors.Is(err, ErrMissing) || !strings.Contains(err.Error(), "apt-get install php-cli") {
		t.Fatalf("Installed() = %v, want ErrMissing naming php-cli", err)
	}
}
