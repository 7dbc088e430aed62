package devwp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// SiteOptions configure NewSite.
type SiteOptions struct {
	// Socket is the MariaDB socket (MariaDB.Socket). Required.
	Socket string
	// Database is the database's name. Default "wordpress"; it must exist
	// (StartMariaDB creates it).
	Database string
	// Plugins are plugin directories, each copied (not linked: PHP
	// resolves __FILE__ through links, which would break plugin URLs)
	// into wp-content/plugins/<its base name>.
	Plugins []string
	// Theme is the theme copied from Debian's WordPress (its package is
	// wordpress-theme-<Theme>). Default DefaultTheme.
	Theme string
	// Workers is PHP_CLI_SERVER_WORKERS: requests served at once. Default 4.
	Workers int
}

// Site is a WordPress in a directory of its own, served by PHP's built-in
// server once Serve is called. Safe for concurrent use once served.
type Site struct {
	// Root is the document root, Dir/wordpress.
	Root string
	// URL is the site's address, http://127.0.0.1:PORT with no trailing
	// slash; set by Serve.
	URL string
	// DebugLog is the file WordPress logs PHP errors to (WP_DEBUG_LOG).
	DebugLog string

	dir     string
	opts    SiteOptions
	php     string
	server  *exec.Cmd
	exited  chan struct{}
	stopOne sync.Once
}

// NewSite lays out a WordPress in dir: Debian's core files copied, a
// wp-content with opts.Theme and opts.Plugins, and an mu-plugin that keeps
// it from calling WordPress.org. wp-config.php is written by Serve, when
// the address is known.
func NewSite(dir string, opts SiteOptions) (*Site, error) {
	if err := Installed(); err != nil {
		return nil, err
	}
	if opts.Socket == "" {
		return nil, fmt.Errorf("devwp: SiteOptions.Socket is required")
	}
	if opts.Database == "" {
		opts.Database = "wordpress"
	}
	if opts.Theme == "" {
		opts.Theme = DefaultTheme
	}
	if err := themeInstalled(opts.Theme); err != nil {
		return nil, err
	}
	if opts.Workers == 0 {
		opts.Workers = 4
	}
	php, _ := lookPath("php")
	s := &Site{Root: filepath.Join(dir, "wordpress"), DebugLog: filepath.Join(dir, "debug.log"), dir: dir, opts: opts, php: php}
	content := filepath.Join(s.Root, "wp-content")
	for _, d := range []string{"themes", "plugins", "mu-plugins", "uploads"} {
		if err := os.MkdirAll(filepath.Join(content, d), 0o755); err != nil {
			return nil, fmt.Errorf("devwp: %w", err)
		}
	}
	core, err := filepath.Glob(filepath.Join(WordPressDir, "*.php"))
	if err != nil {
		return nil, err
	}
	var sources []string
	for _, f := range core {
		if filepath.Base(f) != "wp-config.php" { // Debian's reads /etc/wordpress
			sources = append(sources, f)
		}
	}
	sources = append(sources, filepath.Join(WordPressDir, "wp-admin"), filepath.Join(WordPressDir, "wp-includes"))
	if err := copyInto(s.Root, sources...); err != nil {
		return nil, err
	}
	if err := copyInto(filepath.Join(content, "themes"), filepath.Join(WordPressDir, "wp-content", "themes", opts.Theme)); err != nil {
		return nil, err
	}
	for _, p := range opts.Plugins {
		if err := copyInto(filepath.Join(content, "plugins"), filepath.Clean(p)); err != nil {
			return nil, err
		}
	}
	if err := s.WriteMUPlugin("devwp-offline", offlinePlugin); err != nil {
		return nil, err
	}
	return s, nil
}

// copyInto copies each source (file or directory) into dir with cp -a,
// which keeps the absolute links Debian's WordPress has into /usr/share/php.
func copyInto(dir string, sources ...string) error {
	out, err := exec.Command("cp", append(append([]string{"-a"}, sources...), dir+"/")...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("devwp: copy into %s: %w: %s", dir, err, lastLines(out, 3))
	}
	return nil
}

// offlinePlugin keeps the admin from asking WordPress.org for updates:
// there is no network here, and each try would log a warning.
const offlinePlugin = `<?php
/*
 * Plugin Name: devwp offline
 * Description: Written by Listgate's pkg/devwp. This throwaway site is offline: no update checks.
 */
remove_action( 'admin_init', '_maybe_update_core' );
remove_action( 'admin_init', '_maybe_update_plugins' );
remove_action( 'admin_init', '_maybe_update_themes' );
remove_action( 'init', 'wp_schedule_update_checks' );
`

// WriteMUPlugin writes a must-use plugin, wp-content/mu-plugins/<name>.php,
// which WordPress loads on every later request.
func (s *Site) WriteMUPlugin(name, code string) error {
	path := filepath.Join(s.Root, "wp-content", "mu-plugins", name+".php")
	if err := os.WriteFile(path, []byte(code), 0o644); err != nil {
		return fmt.Errorf("devwp: %w", err)
	}
	return nil
}

// writeConfig writes wp-config.php for the site at s.URL.
func (s *Site) writeConfig() error {
	var b strings.Builder
	b.WriteString("<?php\n// Written by github.com/listgate/listgate/pkg/devwp for a throwaway site.\n")
	define := func(name string, v any) {
		switch v := v.(type) {
		case string:
			fmt.Fprintf(&b, "define( '%s', %s );\n", name, phpQuote(v))
		default:
			fmt.Fprintf(&b, "define( '%s', %v );\n", name, v)
		}
	}
	define("DB_NAME", s.opts.Database)
	define("DB_USER", "root")
	define("DB_PASSWORD", "")
	define("DB_HOST", "localhost:"+s.opts.Socket)
	define("DB_CHARSET", "utf8mb4")
	define("DB_COLLATE", "")
	for _, k := range []string{"AUTH_KEY", "SECURE_AUTH_KEY", "LOGGED_IN_KEY", "NONCE_KEY",
		"AUTH_SALT", "SECURE_AUTH_SALT", "LOGGED_IN_SALT", "NONCE_SALT"} {
		salt := make([]byte, 32)
		rand.Read(salt)
		define(k, hex.EncodeToString(salt))
	}
	b.WriteString("$table_prefix = 'wp_';\n")
	define("WP_HOME", s.URL)
	define("WP_SITEURL", s.URL)
	define("DISABLE_WP_CRON", true)
	define("AUTOMATIC_UPDATER_DISABLED", true)
	// Offline: WordPress may call only its own host (127.0.0.1, where the
	// servers under test listen).
	define("WP_HTTP_BLOCK_EXTERNAL", true)
	define("WP_DEBUG", true)
	define("WP_DEBUG_LOG", s.DebugLog)
	define("WP_DEBUG_DISPLAY", false)
	b.WriteString("if ( ! defined( 'ABSPATH' ) ) {\n\tdefine( 'ABSPATH', __DIR__ . '/' );\n}\nrequire_once ABSPATH . 'wp-settings.php';\n")
	if err := os.WriteFile(filepath.Join(s.Root, "wp-config.php"), []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("devwp: %w", err)
	}
	return nil
}

// phpQuote returns s as a PHP single-quoted string literal.
func phpQuote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

// Serve writes wp-config.php for a free loopback port and starts PHP's
// built-in server there with opts.Workers workers and OPcache on; it
// returns once the server runs PHP, it exits, or ctx ends. The server's
// output goes to ServerLog.
func (s *Site) Serve(ctx context.Context) error {
	var lastErr error
	// A port can be taken between choosing it and binding it: retry.
	for attempt := 0; attempt < 5 && ctx.Err() == nil; attempt++ {
		port, err := freePort()
		if err != nil {
			return err
		}
		s.URL = "http://127.0.0.1:" + strconv.Itoa(port)
		if err := s.writeConfig(); err != nil {
			return err
		}
		logf, err := os.OpenFile(s.serverLogPath(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return fmt.Errorf("devwp: %w", err)
		}
		cmd := exec.Command(s.php, "-d", "opcache.enable_cli=1", "-S", "127.0.0.1:"+strconv.Itoa(port), "-t", s.Root)
		cmd.Env = append(os.Environ(), "PHP_CLI_SERVER_WORKERS="+strconv.Itoa(s.opts.Workers))
		cmd.Stdout, cmd.Stderr = logf, logf
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
		err = cmd.Start()
		logf.Close()
		if err != nil {
			return fmt.Errorf("devwp: start php: %w", err)
		}
		s.server, s.exited, s.stopOne = cmd, make(chan struct{}), sync.Once{}
		go func(exited chan struct{}) { cmd.Wait(); close(exited) }(s.exited)
		if lastErr = s.waitServing(ctx); lastErr == nil {
			return nil
		}
		s.Close()
	}
	return fmt.Errorf("devwp: php -S did not start: %w: %s", lastErr, lastLines([]byte(s.ServerLog()), 5))
}

// waitServing requests a PHP file that needs no database until it answers,
// the server exits, or ctx ends.
func (s *Site) waitServing(ctx context.Context) error {
	client := &http.Client{Timeout: 2 * time.Second}
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		req, _ := http.NewRequestWithContext(ctx, "GET", s.URL+"/wp-includes/version.php", nil)
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("status %d", resp.StatusCode)
		}
		select {
		case <-s.exited:
			return fmt.Errorf("server exited")
		case <-ctx.Done():
			return fmt.Errorf("%w (last: %v)", ctx.Err(), err)
		case <-tick.C:
		}
	}
}

func (s *Site) serverLogPath() string { return filepath.Join(s.dir, "php-server.log") }

// ServerLog returns what PHP's server printed: one line per request, and
// start-up errors.
func (s *Site) ServerLog() string {
	b, _ := os.ReadFile(s.serverLogPath())
	return string(b)
}

// ReadDebugLog returns WordPress's debug.log ("" when nothing was logged).
func (s *Site) ReadDebugLog() string {
	b, _ := os.ReadFile(s.DebugLog)
	return string(b)
}

// Close kills the web server and its workers, and waits for it. It leaves
// the directory to its owner. Calling it again does nothing.
func (s *Site) Close() {
	if s.server == nil {
		return
	}
	s.stopOne.Do(func() {
		_ = syscall.Kill(-s.server.Process.Pid, syscall.SIGKILL)
		<-s.exited
	})
}

// freePort asks the kernel for a free loopback port.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("devwp: free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
