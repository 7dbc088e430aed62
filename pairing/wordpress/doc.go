// Package wordpress holds the Listgate WordPress plugin (listgate/, PHP)
// and the Go tests that check it: every PHP file passes `php -l`, starts
// with `<?php`, refuses direct access, and echoes no variable unescaped.
// The plugin is the client half of the pairing flow (package pairing) and
// a client of the read and lead APIs; docs/wordpress.md describes it.
package wordpress
