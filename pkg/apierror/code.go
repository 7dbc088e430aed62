// Package apierror is Listgate's one error type for the public API, its JSON
// envelope and its one table from error codes to HTTP statuses.
//
// Handlers and middleware, on the edge and on the origin, return errors; a
// single writer at the end of the chain turns them into responses: WriteHTTP
// for net/http, and on the edge a fasthttp writer built from From, AppendJSON,
// Code.Status and Error.RetryAfterSeconds. Nothing else maps codes to
// statuses. An error that is not an *Error becomes INTERNAL_ERROR with a
// message that reveals nothing; its cause is kept in Error.Err for the log
// line, never rendered.
//
// The envelope is
//
//	{"error": {"code": "...", "message": "...", "details": {...}, "request_id": "..."}}
//
// with details only on VALIDATION_ERROR and request_id only when known.
//
// The package holds no mutable state; its functions are safe for concurrent
// use. An *Error is not synchronised: build it, then treat it as read-only.
package apierror

import "net/http"

// Code is a machine-readable error code of the public API. The constants
// below are the whole set; any other value is treated as an internal error.
type Code string

// The API's error codes, with the status Code.Status maps each to.
const (
	// CodeBadRequest (400): a request the server cannot read as HTTP, or a
	// request target it refuses as ambiguous (encoded "/" or "\", dot
	// segments); answered by the edge before anything else.
	CodeBadRequest Code = "BAD_REQUEST"
	// CodeUnauthorized (401): missing, malformed, unknown or revoked key.
	CodeUnauthorized Code = "UNAUTHORIZED"
	// CodeForbidden (403): missing scope (the message names it) or the key
	// cannot access the site.
	CodeForbidden Code = "FORBIDDEN"
	// CodeNotFound (404): unknown path or resource.
	CodeNotFound Code = "NOT_FOUND"
	// CodeMethodNotAllowed (405): known path, wrong method; carries Allow.
	CodeMethodNotAllowed Code = "METHOD_NOT_ALLOWED"
	// CodeNotAcceptable (406): the Accept header excludes JSON.
	CodeNotAcceptable Code = "NOT_ACCEPTABLE"
	// CodeConflict (409): a request with the same Idempotency-Key is still
	// in flight.
	CodeConflict Code = "CONFLICT"
	// CodeRequestTimeout (408): the request, or a feed upload's body, did
	// not arrive in time; the edge closes the connection.
	CodeRequestTimeout Code = "REQUEST_TIMEOUT"
	// CodePayloadTooLarge (413): the body is over the route's limit.
	CodePayloadTooLarge Code = "PAYLOAD_TOO_LARGE"
	// CodeUnsupportedMediaType (415): the body is not application/json.
	CodeUnsupportedMediaType Code = "UNSUPPORTED_MEDIA_TYPE"
	// CodeValidationError (422): bad query parameter or body, malformed JSON,
	// unknown body field; the only code whose envelope carries details.
	CodeValidationError Code = "VALIDATION_ERROR"
	// CodeRateLimitExceeded (429): the site's plan limit; carries Retry-After.
	CodeRateLimitExceeded Code = "RATE_LIMIT_EXCEEDED"
	// CodeHeaderTooLarge (431): the request's header block is over the
	// edge's limit; the edge closes the connection.
	CodeHeaderTooLarge Code = "REQUEST_HEADER_FIELDS_TOO_LARGE"
	// CodeInternalError (500): a bug; the message reveals nothing internal.
	CodeInternalError Code = "INTERNAL_ERROR"
	// CodeServiceUnavailable (503): the origin or database is unreachable and
	// the answer cannot be served; carries Retry-After.
	CodeServiceUnavailable Code = "SERVICE_UNAVAILABLE"
)

// table is the one code→status table, with the message used when an error is
// built without one. Its order is Codes's order.
var table = [...]struct {
	code    Code
	status  int
	message string
}{
	{CodeBadRequest, http.StatusBadRequest, "malformed request"},
	{CodeUnauthorized, http.StatusUnauthorized, "missing or invalid API key"},
	{CodeForbidden, http.StatusForbidden, "forbidden"},
	{CodeNotFound, http.StatusNotFound, "not found"},
	{CodeMethodNotAllowed, http.StatusMethodNotAllowed, "method not allowed"},
	{CodeNotAcceptable, http.StatusNotAcceptable, "only application/json is available"},
	{CodeRequestTimeout, http.StatusRequestTimeout, "request not received in time"},
	{CodeConflict, http.StatusConflict, "conflict"},
	{CodePayloadTooLarge, http.StatusRequestEntityTooLarge, "request body too large"},
	{CodeUnsupportedMediaType, http.StatusUnsupportedMediaType, "request body must be application/json"},
	{CodeValidationError, http.StatusUnprocessableEntity, "invalid request"},
	{CodeRateLimitExceeded, http.StatusTooManyRequests, "too many requests"},
	{CodeHeaderTooLarge, http.StatusRequestHeaderFieldsTooLarge, "request headers too large"},
	{CodeInternalError, http.StatusInternalServerError, "internal error"},
	{CodeServiceUnavailable, http.StatusServiceUnavailable, "service unavailable"},
}

// index returns c's position in table, or -1.
func (c Code) index() int {
	for i := range table {
		if table[i].code == c {
			return i
		}
	}
	return -1
}

// Status returns the HTTP status for c: 400, 401, 403, 404, 405, 406, 408,
// 409, 413, 415, 422, 429, 431, 500 or 503. An unknown code, including "", is 500. This is
// the only place codes are mapped to statuses.
func (c Code) Status() int {
	if i := c.index(); i >= 0 {
		return table[i].status
	}
	return http.StatusInternalServerError
}

// Known reports whether c is one of the API's codes.
func (c Code) Known() bool {
	return c.index() >= 0
}

// defaultMessage is the message for an error of code c built without one.
func (c Code) defaultMessage() string {
	if i := c.index(); i >= 0 {
		return table[i].message
	}
	return msgInternal
}

// Codes returns every known code, ordered by status. The slice is new on
// every call; use it for documentation and tests.
func Codes() []Code {
	codes := make([]Code, len(table))
	for i := range table {
		codes[i] = table[i].code
	}
	return codes
}
