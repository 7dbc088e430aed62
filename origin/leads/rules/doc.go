// Package rules is the plain Go of lead intake (API.md "Lead submission"):
// it decodes and validates a request body (Decode), normalises contacts
// (e-mail lower-cased, phones in E.164 with AU as the default region),
// decides what listing_ref, listing_id and agent_email name once the store
// has said what exists (ResolveRefs on RefFacts), computes the
// duplicate-lock keys (LockKeys), checks Idempotency-Keys and encodes the
// response of a stored submission (Response).
//
// Its functions do no I/O. It imports neither net/http nor pgx nor any
// origin package (a test checks it): the HTTP adapter (origin/leads) and
// the store (origin/store) import it, so one RefFacts and one Response
// serve both.
package rules
