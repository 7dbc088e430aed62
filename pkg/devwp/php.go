package devwp

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"

	json "github.com/goccy/go-json"
)

// scripts numbers the script files PHP writes.
var scripts atomic.Int64

// PHP runs code with WordPress loaded, as the PHP CLI, and returns what it
// printed. args is JSON-encoded and decoded into the PHP array $args, so
// values need no quoting. A non-zero exit is an error carrying stderr and
// the end of stdout. The site must have a wp-config.php (see Serve).
func (s *Site) PHP(ctx context.Context, code string, args any) (string, error) {
	return s.runPHP(ctx, "", code, args)
}

// runPHP runs before, then loads WordPress, then runs after.
func (s *Site) runPHP(ctx context.Context, before, after string, args any) (string, error) {
	if args == nil {
		args = map[string]any{}
	}
	argsJSON, err := json.Marshal(args)
	if err != nil {
		return "", fmt.Errorf("devwp: args: %w", err)
	}
	u, err := url.Parse(s.URL)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("devwp: the site has no address yet: call Serve first")
	}
	// What a request to the site would set, for code that reads it.
	script := "<?php\n$args = json_decode( (string) getenv( 'DEVWP_ARGS' ), true );\n" +
		"$_SERVER['HTTP_HOST'] = " + phpQuote(u.Host) + ";\n$_SERVER['SERVER_NAME'] = " + phpQuote(u.Hostname()) + ";\n" +
		"$_SERVER['SERVER_PORT'] = " + phpQuote(u.Port()) + ";\n$_SERVER['REQUEST_URI'] = '/';\n" +
		before + "\nrequire " + phpQuote(filepath.Join(s.Root, "wp-load.php")) + ";\n" + after + "\n"
	path := filepath.Join(s.dir, fmt.Sprintf("cli-%d.php", scripts.Add(1)))
	if err := os.WriteFile(path, []byte(script), 0o600); err != nil {
		return "", fmt.Errorf("devwp: %w", err)
	}
	defer os.Remove(path)
	cmd := exec.CommandContext(ctx, s.php, path)
	cmd.Env = append(os.Environ(), "DEVWP_ARGS="+string(argsJSON))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("devwp: php: %w: %s %s", err, lastLines(stderr.Bytes(), 10), lastLines(stdout.Bytes(), 10))
	}
	return stdout.String(), nil
}

// InstallOptions are WordPress's install form, and the permalinks.
type InstallOptions struct {
	Title, User, Password, Email string
	// Permalinks is the permalink structure, e.g. "/%postname%/"; PHP's
	// server sends paths that are not files to index.php, so pretty
	// permalinks work. Empty: plain ones (?page_id=2).
	Permalinks string
}

// Install creates WordPress's tables and its administrator, as the
// installer does (wp_install), without the e-mail it would send and
// without the HTTP request that probes for pretty permalinks.
func (s *Site) Install(ctx context.Context, opts InstallOptions) error {
	_, err := s.runPHP(ctx, "define( 'WP_INSTALLING', true );", `
// Pluggable: upgrade.php defines it only when it does not exist. There
// is no mail here.
function wp_new_blog_notification( $blog_title, $blog_url, $user_id, $password ) {}
require_once ABSPATH . 'wp-admin/includes/upgrade.php';
add_filter( 'pre_http_request', function () {
	return new WP_Error( 'devwp', 'no HTTP while installing' );
} );
$result = wp_install( $args['title'], $args['user'], $args['email'], false, '', wp_slash( $args['password'] ) );
if ( is_wp_error( $result ) ) {
	fwrite( STDERR, 'wp_install: ' . $result->get_error_message() . "\n" );
	exit( 1 );
}
global $wp_rewrite;
$wp_rewrite->set_permalink_structure( $args['permalinks'] );
$wp_rewrite->flush_rules( false );`, map[string]string{"title": opts.Title, "user": opts.User, "password": opts.Password,
		"email": opts.Email, "permalinks": opts.Permalinks})
	return err
}
