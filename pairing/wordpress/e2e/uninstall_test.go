package e2e

import (
	"context"
	"encoding/json"
	"testing"
)

// listgateOptions lists the names of the options (transients included)
// the plugin has stored.
func listgateOptions(t *testing.T, e *env) []string {
	t.Helper()
	out, err := e.wp.PHP(context.Background(), `global $wpdb;
echo wp_json_encode( $wpdb->get_col( "SELECT option_name FROM {$wpdb->options} WHERE option_name LIKE '%listgate%' ORDER BY option_name" ) );`, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	if err := json.Unmarshal([]byte(out), &names); err != nil {
		t.Fatalf("options: %q: %v", out, err)
	}
	return names
}

// testUninstall deactivates and uninstalls the plugin the way WordPress
// does (uninstall_plugin runs uninstall.php): every option and transient
// it stored is gone.
func testUninstall(t *testing.T, e *env) {
	before := listgateOptions(t, e)
	if len(before) == 0 {
		t.Fatal("the plugin stored no options before the uninstall: nothing to check")
	}
	if _, err := e.wp.PHP(context.Background(), `require_once ABSPATH . 'wp-admin/includes/plugin.php';
deactivate_plugins( 'listgate/listgate.php' );
uninstall_plugin( 'listgate/listgate.php' );`, nil); err != nil {
		t.Fatal(err)
	}
	if after := listgateOptions(t, e); len(after) != 0 {
		t.Fatalf("after the uninstall these remain: %v (before: %v)", after, before)
	}
	t.Logf("uninstall removed %d options: %v", len(before), before)
}
