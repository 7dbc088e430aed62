// Package leads is lead intake at the origin: POST /v1/leads.
//
// The rules — decoding and validating a body, normalising contacts,
// resolving references, duplicate keys, Idempotency-Keys, the response —
// are plain Go in origin/leads/rules. This package is the HTTP adapter: it
// checks the edge's identity and scope, the media type and size of the
// body, claims the Idempotency-Key, and hands the lead to the store
// (origin/store, leads.go), which detects duplicates, assigns an agent and
// records the submission and its response in one transaction. A 201 is
// written only after that transaction commits; a database that fails is a
// 503 with Retry-After.
package leads
