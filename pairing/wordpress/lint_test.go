package wordpress

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// pluginDir is the plugin, relative to this package.
const pluginDir = "listgate"

// phpFiles returns the plugin's PHP files, relative to pluginDir.
func phpFiles(tb testing.TB) []string {
	tb.Helper()
	var files []string
	err := filepath.WalkDir(pluginDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(path, ".php") {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		tb.Fatalf("walk %s: %v", pluginDir, err)
	}
	if len(files) == 0 {
		tb.Fatalf("no PHP files under %s", pluginDir)
	}
	return files
}

// mustPHP returns the php binary, skipping the test when there is none
// (failing it when CI is set: CI must check the plugin).
func mustPHP(tb testing.TB) string {
	tb.Helper()
	php, err := exec.LookPath("php")
	if err != nil {
		if os.Getenv("CI") != "" {
			tb.Fatalf("php is not installed, and CI is set: install php-cli to lint the WordPress plugin")
		}
		tb.Skip("php is not installed: skipping the PHP syntax check")
	}
	return php
}

// TestPHPSyntax runs `php -l` on every PHP file of the plugin.
func TestPHPSyntax(t *testing.T) {
	php := mustPHP(t)
	for _, f := range phpFiles(t) {
		t.Run(f, func(t *testing.T) {
			out, err := exec.Command(php, "-n", "-d", "display_errors=1", "-l", f).CombinedOutput()
			if err != nil || !bytes.Contains(out, []byte("No syntax errors detected")) {
				t.Errorf("php -l %s: %v\n%s", f, err, out)
			}
		})
	}
}

// Mechanical checks of the WordPress conventions the plugin promises.
var (
	// abspathGuard refuses a request for the file itself.
	abspathGuard = "defined( 'ABSPATH' ) || exit;"
	// uninstallGuard is uninstall.php's guard.
	uninstallGuard = regexp.MustCompile(`defined\(\s*'WP_UNINSTALL_PLUGIN'\s*\)`)
	// rawEcho is an echo or print of a variable that no escaping function wraps.
	rawEcho = regexp.MustCompile(`\b(echo|print)\s*\(?\s*\$|<\?=\s*\$`)
	// safeRemote is the SSRF-protected HTTP API, which refuses loopback
	// addresses that the plugin must reach in tests and on-premises setups.
	safeRemote = regexp.MustCompile(`\bwp_safe_remote_(get|post|request|head)\b`)
)

// TestPHPConventions checks every PHP file: it starts with `<?php`, refuses
// direct access (uninstall.php checks WP_UNINSTALL_PLUGIN instead), echoes
// no variable unescaped and calls Listgate through wp_remote_request.
func TestPHPConventions(t *testing.T) {
	for _, f := range phpFiles(t) {
		t.Run(f, func(t *testing.T) {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			src := string(b)
			if !strings.HasPrefix(src, "<?php\n") {
				t.Errorf("%s does not start with <?php and a newline", f)
			}
			if filepath.Base(f) == "uninstall.php" && filepath.Dir(f) == pluginDir {
				if !uninstallGuard.MatchString(src) {
					t.Errorf("%s does not check WP_UNINSTALL_PLUGIN", f)
				}
			} else if !strings.Contains(src, abspathGuard) {
				t.Errorf("%s lacks %q", f, abspathGuard)
			}
			for i, line := range strings.Split(src, "\n") {
				if rawEcho.MatchString(line) {
					t.Errorf("%s:%d echoes a variable unescaped: %s", f, i+1, strings.TrimSpace(line))
				}
				if safeRemote.MatchString(line) {
					t.Errorf("%s:%d uses wp_safe_remote_*: use wp_remote_request (Listgate may be on loopback)", f, i+1)
				}
			}
		})
	}
}

// pluginHeader matches a header field of the main plugin file.
func pluginHeader(src, field string) string {
	m := regexp.MustCompile(`(?m)^\s*\*\s*` + regexp.QuoteMeta(field) + `:\s*(.+?)\s*$`).FindStringSubmatch(src)
	if m == nil {
		return ""
	}
	return m[1]
}

// TestPluginVersion checks that the plugin header, the LISTGATE_VERSION
// constant and readme.txt's Stable tag agree, and the header's requirements.
func TestPluginVersion(t *testing.T) {
	main, err := os.ReadFile(filepath.Join(pluginDir, "listgate.php"))
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(pluginDir, "readme.txt"))
	if err != nil {
		t.Fatal(err)
	}
	src := string(main)
	want := map[string]string{
		"Plugin Name":       "Listgate",
		"Requires at least": "6.1",
		"Requires PHP":      "8.1",
		"License":           "GPL-2.0-or-later",
		"Text Domain":       "listgate",
	}
	for field, v := range want {
		if got := pluginHeader(src, field); got != v {
			t.Errorf("header %s = %q, want %q", field, got, v)
		}
	}
	version := pluginHeader(src, "Version")
	if version == "" {
		t.Fatal("the plugin header has no Version")
	}
	if !strings.Contains(src, "define( 'LISTGATE_VERSION', '"+version+"' );") {
		t.Errorf("LISTGATE_VERSION does not match the header's Version %s", version)
	}
	m := regexp.MustCompile(`(?m)^Stable tag:\s*(\S+)`).FindStringSubmatch(string(readme))
	if m == nil || m[1] != version {
		t.Errorf("readme.txt Stable tag %v does not match Version %s", m, version)
	}
}

// TestRawEchoPattern pins what counts as an unescaped echo.
func TestRawEchoPattern(t *testing.T) {
	tests := []struct {
		line string
		bad  bool
	}{
		{"echo $html;", true},
		{"\techo $args['message'];", true},
		{"print( $x );", true},
		{"<?= $title ?>", true},
		{"echo esc_html( $title );", false},
		{"echo wp_kses_post( wpautop( esc_html( $d ) ) );", false},
		{"<?php echo esc_url( $args['url'] ); ?>", false},
		{"$echo = $x;", false},
	}
	for _, tt := range tests {
		if got := rawEcho.MatchString(tt.line); got != tt.bad {
			t.Errorf("rawEcho.MatchString(%q) = %v, want %v", tt.line, got, tt.bad)
		}
	}
}
