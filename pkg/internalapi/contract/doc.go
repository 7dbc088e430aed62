// Package contract holds the test that runs the edge's side of the
// internal API (edge/upstream, edge/keycache, edge/usage, pkg/eventstream)
// against the origin's handlers (origin/introspect, origin/usage,
// origin/events) on a real Postgres, so that a change on one side that the
// other does not follow fails a test. It has no code of its own.
package contract
