// Package mail composes e-mail messages and sends them through an SMTP
// server: the origin uses it to send each new lead to its agent.
//
// [Message.Bytes] writes an RFC 5322 message (multipart/alternative
// text/plain and text/html, UTF-8, quoted-printable, CRLF) whose addresses
// and text may come from untrusted input: addresses are validated, text is
// cleaned and RFC 2047 encoded, and no input can add a header.
//
// A [Sender] is configured by one URL:
//
//	smtp://host:25?from=leads%40example.com
//	smtp://user:password@host:587?from=Listgate%20Leads%20%3Cleads%40example.com%3E
//	smtp://user:password@host:587?from=leads%40example.com&starttls=required
//	smtps://user:password@host:465?from=leads%40example.com
//
// The parts:
//
//   - smtp:// connects in the clear (default port 587) and then, by
//     starttls=:
//     auto (the default) upgrades with STARTTLS when the server offers it;
//     required fails unless the server offers it;
//     off never upgrades (for a relay on the same machine).
//     When STARTTLS is used the certificate must verify: there is no
//     fallback to the clear.
//   - smtps:// is TLS from the first byte (default port 465).
//   - user:password@ (percent-encoded) authenticates with AUTH PLAIN, which
//     is only ever sent over TLS or to localhost, 127.0.0.1 or ::1. Without
//     user information there is no AUTH.
//   - from= (required) is the envelope sender (MAIL FROM) and the header
//     From of messages that have none; its domain is the Message-ID's. It
//     is an address with an optional name, query-escaped
//     (from=Listgate%20Leads%20<leads@example.com> also parses).
//
// No other parameter is accepted. Pass the URL through [Redacted] before
// logging it; a Sender's String method does so already.
//
// [Sender.Send] fails with an [*Error]; [IsPermanent] reports a 5xx reply, an
// invalid message or a configuration the server cannot satisfy (stop
// retrying); 4xx replies, network errors and timeouts are temporary.
//
// Package mailtest (pkg/mail/mailtest) runs a real SMTP server for tests.
package mail
