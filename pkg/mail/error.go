package mail

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net/textproto"
)

// Error is why [Sender.Send] failed. Send returns every failure as an
// *Error; find it with errors.As, or ask [IsPermanent].
//
// Its text names the server (host:port) and the step, never the password.
type Error struct {
	// Server is the SMTP server's host:port; empty when Send failed before
	// dialling (an invalid message).
	Server string
	// Op is the step that failed: "compose", "dial", "greeting", "hello",
	// "starttls", "auth", "mail from", "rcpt to" or "data".
	Op string
	// Code is the server's SMTP reply code (421, 451, 535, 550, …), 0 when
	// the server did not answer with one (network, TLS, local checks).
	Code int
	// Permanent reports that sending this message with this Sender again
	// will fail the same way until someone changes the message, the
	// configuration or the server: a 5xx reply, an invalid message, a
	// certificate that does not verify, a server that lacks STARTTLS or
	// AUTH PLAIN when they are needed. Everything else (4xx replies,
	// network errors, timeouts, a cancelled context) is temporary: a retry
	// may succeed.
	Permanent bool
	// Err is the underlying error: a *textproto.Error for a server reply.
	Err error
}

func (e *Error) Error() string {
	if e.Server == "" {
		return "mail: " + e.Op + ": " + e.Err.Error()
	}
	return "mail: " + e.Server + ": " + e.Op + ": " + e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// IsPermanent reports whether err (or an error it wraps) is an [*Error]
// marked Permanent: the caller should stop retrying. It is false for nil
// and for any other error.
func IsPermanent(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Permanent
}

// policyError is a failure of this package's own rules about the server
// (STARTTLS required but not offered, credentials but no AUTH PLAIN, AUTH
// on an unencrypted connection): permanent, as no retry fixes it.
type policyError string

func (e policyError) Error() string { return string(e) }

// classify returns the server's reply code in err, if any, and whether err
// is permanent in the sense of Error.Permanent.
func classify(err error) (code int, permanent bool) {
	var tp *textproto.Error
	if errors.As(err, &tp) {
		return tp.Code, tp.Code >= 500 && tp.Code < 600
	}
	var (
		policy    policyError
		verify    *tls.CertificateVerificationError
		authority x509.UnknownAuthorityError
		hostname  x509.HostnameError
		invalid   x509.CertificateInvalidError
	)
	switch {
	case errors.As(err, &policy),
		errors.As(err, &verify),
		errors.As(err, &authority),
		errors.As(err, &hostname),
		errors.As(err, &invalid):
		return 0, true
	}
	return 0, false
}
