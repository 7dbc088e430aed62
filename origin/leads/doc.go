// Package leads is lead intake at the origin: POST /v1/leads.
//
// The rules — decoding and validating a body, normalising contacts,
// resolving references, duplicate keys, Idempotency-Keys, the response —
// are plain Go in origin/leads/rules. This package is the HTTP adapter: it
// checks the edge's identity and scope, the media type and size of the
// body, looks up the listing and agent the lead names (if any), and hands
// the lead to the store (origin/store, leads.go), which claims its
// Idempotency-Key, detects duplicates, assigns an agent and records the
// submission, its outbox event and its response in one transaction, in one
// round trip. A 201 is written only after that transaction commits; a
// database that fails is a 503 with Retry-After.
package leads
