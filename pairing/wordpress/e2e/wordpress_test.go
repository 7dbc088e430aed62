package e2e

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	json "github.com/goccy/go-json"

	"github.com/listgate/listgate/pkg/devwp"
)

// The WordPress administrator the browser signs in as.
const (
	adminUser     = "admin"
	adminPassword = "wp e2e admin: not for production"
)

// pluginDir is the plugin under test, copied into the site.
const pluginDir = "../listgate"

// wordpress is the site under test: the plugin active, a Listings page and
// a Featured page. Its servers stop when the test ends.
type wordpress struct {
	*devwp.Site
	// listingsURL and featuredURL are the pages with
	// [listgate_listings per_page="12"] and [listgate_featured count="4"].
	listingsURL, featuredURL string
}

// startWordPress starts MariaDB, lays out and serves WordPress with the
// plugin, installs it, activates the plugin and creates the pages.
func startWordPress(t *testing.T, transport string) *wordpress {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	db, err := devwp.StartMariaDB(ctx, t.TempDir(), "wordpress")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("--- MariaDB error log ---\n%s", tail(db.ErrorLog(), 20))
		}
		db.Close()
	})
	site, err := devwp.NewSite(t.TempDir(), devwp.SiteOptions{Socket: db.Socket, Plugins: []string{pluginDir}})
	if err != nil {
		t.Fatal(err)
	}
	setTransport(t, site, transport)
	if err := site.Serve(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		site.Close()
		if t.Failed() {
			t.Logf("--- PHP server log (end) ---\n%s", tail(site.ServerLog(), 40))
			t.Logf("--- WordPress debug.log ---\n%s", site.ReadDebugLog())
		}
	})
	if err := site.Install(ctx, devwp.InstallOptions{Title: "Demo Realty", User: adminUser,
		Password: adminPassword, Email: "admin@agency.example", Permalinks: "/%postname%/"}); err != nil {
		t.Fatal(err)
	}
	out, err := site.PHP(ctx, `
require_once ABSPATH . 'wp-admin/includes/plugin.php';
wp_set_current_user( 1 );
$activated = activate_plugin( 'listgate/listgate.php' );
if ( is_wp_error( $activated ) ) {
	fwrite( STDERR, 'activate_plugin: ' . $activated->get_error_message() . "\n" );
	exit( 1 );
}
$urls = array();
foreach ( $args['pages'] as $name => $page ) {
	$id = wp_insert_post( array( 'post_type' => 'page', 'post_status' => 'publish', 'post_author' => 1,
		'post_title' => $page[0], 'post_content' => $page[1] ), true );
	if ( is_wp_error( $id ) ) {
		fwrite( STDERR, 'wp_insert_post: ' . $id->get_error_message() . "\n" );
		exit( 1 );
	}
	$urls[ $name ] = get_permalink( $id );
}
echo wp_json_encode( $urls );`, map[string]any{"pages": map[string][2]string{
		"listings": {"Listings", `[listgate_listings per_page="12"]`},
		"featured": {"Featured", `[listgate_featured count="4"]`},
	}})
	if err != nil {
		t.Fatal(err)
	}
	var urls struct{ Listings, Featured string }
	if err := json.Unmarshal([]byte(out), &urls); err != nil || urls.Listings == "" {
		t.Fatalf("setting up WordPress printed %q: %v", out, err)
	}
	return &wordpress{Site: site, listingsURL: urls.Listings, featuredURL: urls.Featured}
}

// option returns get_option(name) decoded from JSON into dst.
func (wp *wordpress) option(tb testing.TB, name string, dst any) {
	tb.Helper()
	out, err := wp.PHP(context.Background(), `echo wp_json_encode( get_option( $args['name'], null ) );`,
		map[string]string{"name": name})
	if err != nil {
		tb.Fatal(err)
	}
	if err := json.Unmarshal([]byte(out), dst); err != nil {
		tb.Fatalf("option %s: %q: %v", name, out, err)
	}
}

// optionInt returns get_option(name) as an integer (WordPress stores
// numbers as strings), 0 when unset.
func (wp *wordpress) optionInt(tb testing.TB, name string) int {
	tb.Helper()
	var v any
	wp.option(tb, name, &v)
	n, err := strconv.Atoi(fmt.Sprint(v))
	if v != nil && err != nil {
		tb.Fatalf("option %s is %v, not a number", name, v)
	}
	return n
}

// autoload returns the autoload column of option name in wp_options.
func (wp *wordpress) autoload(tb testing.TB, name string) string {
	tb.Helper()
	out, err := wp.PHP(context.Background(), `global $wpdb;
echo (string) $wpdb->get_var( $wpdb->prepare( "SELECT autoload FROM {$wpdb->options} WHERE option_name = %s", $args['name'] ) );`,
		map[string]string{"name": name})
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
