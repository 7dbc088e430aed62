package wordpress

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// pagingScript loads the shortcodes class with the few WordPress functions
// its pagination uses stubbed, and prints the pagination of each
// collection meta given, one line each: the page numbers shown (0 a gap)
// and whether there is a next link.
const pagingScript = `<?php
define( 'ABSPATH', '/' );
function listgate_current_url( $drop ) { return 'https://agency.example/buy/'; }
function add_query_arg( $k, $v, $url ) { return $url . '?' . $k . '=' . $v; }
require $argv[1];
$m = new ReflectionMethod( 'Listgate_Shortcodes', 'pagination_args' );
$m->setAccessible( true );
foreach ( json_decode( $argv[2], true ) as $meta ) {
	$a = $m->invoke( null, array( 'meta' => $meta ) );
	echo implode( ',', array_map( function ( $p ) { return $p['number']; }, $a['pages'] ) ), ' next=', '' === $a['next'] ? 'no' : 'yes', "\n";
}
`

// The grid's pagination follows meta.total_pages; when the API says its
// total is a lower bound (total_exact false), the last page shown still
// has a next link, and an exact total ends there.
func TestPaginationWithBoundedTotal(t *testing.T) {
	php := mustPHP(t)
	script := filepath.Join(t.TempDir(), "paging.php")
	if err := os.WriteFile(script, []byte(pagingScript), 0o600); err != nil {
		t.Fatal(err)
	}
	metas := `[
		{"page": 51, "per_page": 20, "total": 1020, "total_exact": false, "total_pages": 51},
		{"page": 51, "per_page": 20, "total": 1020, "total_exact": true, "total_pages": 51},
		{"page": 1, "per_page": 20, "total": 20, "total_exact": false, "total_pages": 1},
		{"page": 3, "per_page": 20, "total": 60, "total_pages": 3}
	]`
	out, err := exec.Command(php, "-n", script, filepath.Join(pluginDir, "includes", "class-listgate-shortcodes.php"), metas).CombinedOutput()
	if err != nil {
		t.Fatalf("php: %v\n%s", err, out)
	}
	got := strings.Split(strings.TrimSpace(string(out)), "\n")
	want := []string{
		"1,0,49,50,51 next=yes", // a lower bound: there is more
		"1,0,49,50,51 next=no",  // exact: the last page
		"1 next=yes",
		"1,2,3 next=no", // an API without total_exact: exact
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("pagination:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
