// Package pairing is the WordPress pairing flow: device-style codes that a
// WordPress site starts, a signed-in agency user approves in the dashboard,
// and one-time delivery of the site's read-only API key (API.md "Pairing").
// Its core has no HTTP or SQL types; the origin mounts its handlers and
// store. pairing/wordpress/listgate/ holds the WordPress plugin, the client
// half of the flow.
package pairing
