// Package devwp runs a throwaway WordPress for tests, from the machine's
// own Debian packages: MariaDB in a temporary directory (mariadb-server),
// a copy of Debian's WordPress (wordpress) with a wp-config.php of its own,
// and PHP's built-in web server (php-cli, php-mysql).
//
// The pieces are separate so a caller can arrange them: [StartMariaDB],
// then [NewSite] on its socket, [Site.Serve], [Site.Install], and
// [Site.PHP] to run code inside WordPress (activate a plugin, create
// pages, read options). Everything lives under directories the caller
// gives, and Close stops the servers. When something is not installed, the
// error wraps [ErrMissing] and names the Debian package.
package devwp

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// ErrMissing is wrapped by the errors of Installed, StartMariaDB and
// NewSite when a binary or WordPress itself is not installed.
var ErrMissing = errors.New("not installed")

// WordPressDir is where Debian's wordpress package puts WordPress.
const WordPressDir = "/usr/share/wordpress"

// DefaultTheme is the theme a site gets unless SiteOptions says otherwise:
// the one Debian packages for WordPress 6.1.
const DefaultTheme = "twentytwentythree"

// Installed reports whether everything this package runs is there, with an
// error that names the Debian packages to install when not.
func Installed() error {
	for _, need := range []struct{ bin, pkg string }{
		{"php", "php-cli"}, {"mariadbd", "mariadb-server"}, {"mariadb-install-db", "mariadb-server"},
	} {
		if _, err := lookPath(need.bin); err != nil {
			return fmt.Errorf("devwp: %w: %s (apt-get install %s)", ErrMissing, need.bin, need.pkg)
		}
	}
	php, _ := lookPath("php")
	if exec.Command(php, "-r", `exit(extension_loaded("mysqli") ? 0 : 1);`).Run() != nil {
		return fmt.Errorf("devwp: %w: PHP's mysqli extension (apt-get install php-mysql)", ErrMissing)
	}
	if _, err := os.Stat(WordPressDir + "/wp-settings.php"); err != nil {
		return fmt.Errorf("devwp: %w: WordPress in %s (apt-get install wordpress)", ErrMissing, WordPressDir)
	}
	return themeInstalled(DefaultTheme)
}

// themeInstalled reports whether Debian's package of theme is installed,
// with an error naming it when not.
func themeInstalled(theme string) error {
	if _, err := os.Stat(filepath.Join(WordPressDir, "wp-content", "themes", theme, "style.css")); err != nil {
		return fmt.Errorf("devwp: %w: the theme %s (apt-get install wordpress-theme-%s)", ErrMissing, theme, theme)
	}
	return nil
}

// lookPath is exec.LookPath that also searches the sbin directories, where
// Debian puts mariadbd but a normal user's PATH may not reach.
func lookPath(bin string) (string, error) {
	if p, err := exec.LookPath(bin); err == nil {
		return p, nil
	}
	for _, dir := range []string{"/usr/sbin", "/usr/local/sbin", "/sbin"} {
		p := dir + "/" + bin
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("devwp: %w: %s", ErrMissing, bin)
}

// Require checks Installed: when something is missing it skips tb, except
// when the CI environment variable is set: there it fails tb.
func Require(tb testing.TB) {
	tb.Helper()
	err := Installed()
	if err == nil {
		return
	}
	if os.Getenv("CI") == "" {
		tb.Skip(err)
	}
	tb.Fatal(err)
}
