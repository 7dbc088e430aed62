// Package webhook signs and delivers Listgate's webhooks (lead events) the
// way the Standard Webhooks specification (https://www.standardwebhooks.com)
// describes, so that receivers can verify them with the specification's
// libraries or a few lines of their own (docs/webhooks.md).
//
// It has four parts, each in its own file:
//
//   - secret.go: endpoints' signing secrets. They are not stored: each is
//     derived from the operator's master key (LISTGATE_SECRET_KEY), the
//     endpoint's id and a generation number that rotation raises
//     (DeriveSecret, ParseMasterKey, NewMasterKey).
//   - sign.go: the webhook-id, webhook-timestamp and webhook-signature
//     headers (Sign, SignatureHeader, SetHeaders) and their check (Verify,
//     which receivers' code and our tests use).
//   - client.go, address.go: an HTTP client for URLs that agencies type in,
//     which connects only to public internet addresses, checked at connect
//     time against the address actually dialled, and follows no redirect
//     (NewClient, ClientOptions, AddressError).
//   - url.go: the check of such a URL when it is entered (CheckURL).
//   - retry.go: when to try again (Backoff, ParseRetryAfter, NextAttempt,
//     RetryFor).
//
// The package uses only the standard library, imports no adapter, and holds
// no mutable state: every function is safe for concurrent use. Its errors
// never contain a secret, a master key, or the user name or password of a URL.
package webhook
