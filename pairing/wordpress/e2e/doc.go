// Package e2e is the end-to-end test of the reference WordPress plugin
// (pairing/wordpress/listgate) in a real WordPress: Debian's WordPress on
// MariaDB behind PHP's built-in server (pkg/devwp), the real origin and edge
// binaries on a throwaway Postgres (pkg/devdb, pkg/devproc), and headless
// Chromium (pkg/devbrowser) as the site's administrator and as a visitor.
//
// It pairs the plugin with the edge, shows the demo site's listings with
// filters, featured listings and a listing page with its images, sends
// enquiries as leads, counts a visitor's listing views from the page's
// beacon into the stats API, the dashboard's vendor report and the
// plugin's top listings widget, serves cached listings while the site is rate
// limited, checks that no key reaches a page, disconnects, and checks that
// the plugin logs no PHP error. Visitors at loopback addresses of their
// own send the query parameters a script would (made-up suburbs, absurd
// pages, bogus listing references), and the test counts the API calls
// they cause from the edge's metrics. The plugin's walk-through runs once
// with each WordPress transport: curl, then fsockopen (as on hosts without
// PHP's curl); LISTGATE_E2E_WP_TRANSPORT=curl or =streams runs one.
//
// Without PHP, MariaDB or WordPress the tests are skipped (without
// Chromium, those that need a browser), except when CI is set: there they
// fail. The package has no code of its own.
package e2e
