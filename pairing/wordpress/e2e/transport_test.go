package e2e

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/listgate/listgate/pkg/devwp"
)

// wpTransportEnv narrows TestWordPressPlugin, which runs with each of
// WordPress's HTTP transports (the plugin's calls to Listgate), to one:
// "curl" (PHP's curl extension, which WordPress prefers) or "streams"
// (fsockopen, what WordPress uses on a host without curl), e.g.
//
//	LISTGATE_E2E_WP_TRANSPORT=streams go test ./pairing/wordpress/e2e
const wpTransportEnv = "LISTGATE_E2E_WP_TRANSPORT"

// streamsPluginName is the must-use plugin that forces the streams
// transport.
const streamsPluginName = "listgate-test-streams"

// streamsPlugin makes WordPress send every HTTP request with fsockopen.
// The use_curl_transport filter alone does not: it is read only by the
// old WP_Http_Curl class, while wp_remote_request goes through the
// Requests library, which picks its own transport unless the request
// names one.
const streamsPlugin = `<?php
/*
 * Plugin Name: Listgate e2e: streams transport
 * Description: Written by the end-to-end test: WordPress's HTTP requests use fsockopen, as on a host without PHP's curl.
 */
add_filter( 'use_curl_transport', '__return_false' );
add_action(
	'requests-requests.before_request',
	function ( &$url, &$headers, &$data, &$type, &$options ) {
		$options['transport'] = class_exists( 'WpOrg\Requests\Transport\Fsockopen' ) ? 'WpOrg\Requests\Transport\Fsockopen' : 'Requests_Transport_fsockopen';
	},
	10,
	5
);
`

// transports are the WordPress transports a test runs with: the one
// wpTransportEnv names, or else all of them, curl first.
func transports(t *testing.T) []string {
	switch tr := os.Getenv(wpTransportEnv); tr {
	case "":
		return []string{"curl", "streams"}
	case "curl", "streams":
		return []string{tr}
	default:
		t.Fatalf("%s=%q: want curl or streams", wpTransportEnv, tr)
		return nil
	}
}

// setTransport writes the streams plugin into site for the streams
// transport; WordPress uses curl without it.
func setTransport(t *testing.T, site *devwp.Site, transport string) {
	t.Helper()
	if transport != "streams" {
		return
	}
	if err := site.WriteMUPlugin(streamsPluginName, streamsPlugin); err != nil {
		t.Fatal(err)
	}
	t.Log("WordPress sends its HTTP requests with fsockopen")
}

// transportProbe sends one request with wp_remote_get and prints the
// transports that handled it, then the body.
const transportProbe = `$used = array();
add_action( 'requests-curl.before_request', function () use ( &$used ) { $used[] = 'curl'; } );
add_action( 'requests-fsockopen.before_request', function () use ( &$used ) { $used[] = 'fsockopen'; } );
$response = wp_remote_get( $args['url'], array( 'timeout' => 5 ) );
echo is_wp_error( $response ) ? 'error: ' . $response->get_error_message() : implode( ',', $used ) . ' ' . wp_remote_retrieve_body( $response );`

// TestStreamsTransportPlugin checks that the streams plugin makes
// WordPress send a request with fsockopen, and that without it WordPress
// uses curl.
func TestStreamsTransportPlugin(t *testing.T) {
	devwp.Require(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) }))
	t.Cleanup(srv.Close)
	wp := startWordPress(t, "curl")
	plugin := filepath.Join(wp.Root, "wp-content", "mu-plugins", streamsPluginName+".php")
	probe := func() string {
		t.Helper()
		out, err := wp.PHP(context.Background(), transportProbe, map[string]string{"url": srv.URL})
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(out)
	}

	if err := os.Remove(plugin); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	if got := probe(); got != "curl ok" {
		t.Errorf("without the plugin: %q, want curl ok", got)
	}
	if err := wp.WriteMUPlugin(streamsPluginName, streamsPlugin); err != nil {
		t.Fatal(err)
	}
	if got := probe(); got != "fsockopen ok" {
		t.Errorf("with the streams plugin: %q, want fsockopen ok", got)
	}
}
