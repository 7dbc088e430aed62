package apierror

import (
	"context"
	"errors"
	"fmt"
	"net/http"
)

// Messages fixed by the API.
const (
	msgInternal    = "internal error"
	msgValidation  = "invalid request"
	msgUnavailable = "service unavailable"
	msgRateLimited = "too many requests"
)

// Error is an API error: what the client is told (Code, Message, Details and
// the RetryAfter and Allow headers) plus, in Err, what only the log is told.
//
// Build one with New or a named constructor and return it, wrapped or not, up
// the handler chain; From finds it again. Once returned it should be treated
// as read-only: From hands back the same pointer, and a package-level *Error
// may be shared by many goroutines.
type Error struct {
	// Code selects the HTTP status (Code.Status) and is rendered as "code".
	Code Code
	// Message is rendered as "message": short, human-readable, public. It
	// must not carry internal detail, keys or tokens. For INTERNAL_ERROR it is
	// never rendered; the body always says "internal error".
	Message string
	// Details maps each offending field (or "body") to a message. It is
	// rendered, keys sorted, only for VALIDATION_ERROR, and ignored otherwise.
	Details map[string]string
	// RetryAfter is the Retry-After header in seconds; 0 means none. 429 and
	// 503 responses always carry at least 1 (see RetryAfterSeconds).
	RetryAfter int
	// Allow is the Allow header of a 405 response, such as "GET, HEAD".
	Allow string
	// Err is the internal cause, for logs only: never rendered. Unwrap
	// returns it, so errors.Is and errors.As see through an *Error.
	Err error
}

// Error returns "CODE: message" followed by ": cause" when Err is set. It is
// meant for logs, not for clients: it includes the internal cause. A nil
// *Error returns "<nil>".
func (e *Error) Error() string {
	if e == nil {
		return "<nil>"
	}
	s := string(e.Code) + ": " + e.Message
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the internal cause, or nil (also for a nil *Error).
func (e *Error) Unwrap() error {
	if e == nil {
		return nil
	}
	return e.Err
}

// RetryAfterSeconds returns the value for the Retry-After header, 0 meaning
// no header: RetryAfter when positive, and at least 1 for
// RATE_LIMIT_EXCEEDED and SERVICE_UNAVAILABLE, whose responses must carry one.
// Response writers use it instead of reading RetryAfter.
func (e *Error) RetryAfterSeconds() int {
	if e.RetryAfter > 0 {
		return e.RetryAfter
	}
	if e.Code == CodeRateLimitExceeded || e.Code == CodeServiceUnavailable {
		return 1
	}
	return 0
}

// New returns an error with the given code and public message. An empty
// message is replaced by the code's generic one (such as "not found").
func New(code Code, msg string) *Error {
	if msg == "" {
		msg = code.defaultMessage()
	}
	return &Error{Code: code, Message: msg}
}

// Newf is New with a message formatted by fmt.Sprintf. The message is public:
// format no internal errors into it; to keep a cause, set Err.
func Newf(code Code, format string, args ...any) *Error {
	return New(code, fmt.Sprintf(format, args...))
}

// Unauthorized returns an UNAUTHORIZED (401) error; an empty msg becomes
// "missing or invalid API key".
func Unauthorized(msg string) *Error { return New(CodeUnauthorized, msg) }

// Forbidden returns a FORBIDDEN (403) error; an empty msg becomes "forbidden".
func Forbidden(msg string) *Error { return New(CodeForbidden, msg) }

// MissingScope returns the FORBIDDEN (403) error for a key lacking scope,
// with the message "missing scope <scope>", e.g. "missing scope listings:read".
func MissingScope(scope string) *Error { return New(CodeForbidden, "missing scope "+scope) }

// NotFound returns a NOT_FOUND (404) error; an empty msg becomes "not found".
func NotFound(msg string) *Error { return New(CodeNotFound, msg) }

// MethodNotAllowed returns a METHOD_NOT_ALLOWED (405) error whose response
// carries the Allow header allow, such as "GET, HEAD".
func MethodNotAllowed(allow string) *Error {
	e := New(CodeMethodNotAllowed, "")
	e.Allow = allow
	return e
}

// NotAcceptable returns a NOT_ACCEPTABLE (406) error for an Accept header
// that excludes JSON.
func NotAcceptable() *Error { return New(CodeNotAcceptable, "") }

// Conflict returns a CONFLICT (409) error; an empty msg becomes "conflict".
func Conflict(msg string) *Error { return New(CodeConflict, msg) }

// PayloadTooLarge returns a PAYLOAD_TOO_LARGE (413) error naming the limit in
// bytes, or with a generic message if limit <= 0.
func PayloadTooLarge(limit int64) *Error {
	if limit <= 0 {
		return New(CodePayloadTooLarge, "")
	}
	return Newf(CodePayloadTooLarge, "request body exceeds %d bytes", limit)
}

// UnsupportedMediaType returns an UNSUPPORTED_MEDIA_TYPE (415) error; an
// empty msg becomes "request body must be application/json".
func UnsupportedMediaType(msg string) *Error { return New(CodeUnsupportedMediaType, msg) }

// Validation returns a VALIDATION_ERROR (422) error with the message "invalid
// request" and details mapping each offending field (or "body") to a message.
// The map is kept, not copied. A nil or empty map renders as "details": {}.
func Validation(details map[string]string) *Error {
	return &Error{Code: CodeValidationError, Message: msgValidation, Details: details}
}

// InvalidField returns a VALIDATION_ERROR (422) error for one field, such as
// InvalidField("email", "not an e-mail address").
func InvalidField(field, msg string) *Error {
	return Validation(map[string]string{field: msg})
}

// RateLimited returns the RATE_LIMIT_EXCEEDED (429) error, message "too many
// requests", with Retry-After retryAfter seconds (at least 1 when written).
func RateLimited(retryAfter int) *Error {
	return &Error{Code: CodeRateLimitExceeded, Message: msgRateLimited, RetryAfter: retryAfter}
}

// Internal returns an INTERNAL_ERROR (500) error with the message "internal
// error", keeping err (which may be nil) as the cause for the log.
func Internal(err error) *Error {
	return &Error{Code: CodeInternalError, Message: msgInternal, Err: err}
}

// Unavailable returns a SERVICE_UNAVAILABLE (503) error with the message
// "service unavailable" and Retry-After retryAfter seconds (at least 1 when
// written), keeping err as the cause for the log.
func Unavailable(retryAfter int, err error) *Error {
	return &Error{Code: CodeServiceUnavailable, Message: msgUnavailable, RetryAfter: retryAfter, Err: err}
}

// From returns the *Error that err is or wraps, for writing a response.
// It returns nil for a nil err, and otherwise never nil:
//
//   - an *Error found by errors.As is returned itself (not a copy), unless its
//     code is unknown, which is a bug and becomes INTERNAL_ERROR;
//   - an *http.MaxBytesError (from http.MaxBytesReader) becomes
//     PAYLOAD_TOO_LARGE naming the limit;
//   - context.DeadlineExceeded and context.Canceled become
//     SERVICE_UNAVAILABLE with Retry-After 1: a deadline means a dependency
//     did not answer in time, which is not a bug and may succeed on retry,
//     and a cancellation means the client left or the server is shutting
//     down, when nobody reads the body and no bug should be reported;
//   - anything else becomes INTERNAL_ERROR with the message "internal error".
//
// In the last three cases the new *Error keeps err in Err for the log.
// An *Error in the chain wins over the other cases.
func From(err error) *Error {
	if err == nil {
		return nil
	}
	if e, ok := errors.AsType[*Error](err); ok && e != nil {
		if e.Code.Known() {
			return e
		}
		return Internal(err)
	}
	if mbe, ok := errors.AsType[*http.MaxBytesError](err); ok {
		e := PayloadTooLarge(mbe.Limit)
		e.Err = err
		return e
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return Unavailable(1, err)
	}
	return Internal(err)
}

// CodeOf returns the code From would give err, or "" for a nil err.
func CodeOf(err error) Code {
	if e := From(err); e != nil {
		return e.Code
	}
	return ""
}
