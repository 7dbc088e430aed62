// Package leads is lead intake at the origin: POST /v1/leads.
//
// The rules (lead.go, decode.go, contact.go, metadata.go, refs.go,
// dupkey.go, idemkey.go) are plain Go: they decode and validate a request
// body, normalise contacts (e-mail lower-cased, phones in E.164 with AU as
// the default region), decide what listing_ref, listing_id and agent_email
// name once the store has said what exists, and compute the duplicate-lock
// keys. They import neither net/http nor pgx; a test checks it.
//
// The adapter (http.go, submit.go) is the HTTP handler: it checks the
// edge's identity and scope, the media type and size of the body, claims
// the Idempotency-Key, and hands the lead to the store (origin/store,
// leads.go), which detects duplicates, assigns an agent and records the
// submission in one transaction. A 201 is written only after that
// transaction commits; a database that fails is a 503 with Retry-After.
package leads
