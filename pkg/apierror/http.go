package apierror

import (
	"errors"
	"net/http"
	"strconv"
)

// ContentType is the Content-Type of every error response.
const ContentType = "application/json; charset=utf-8"

// errNilWrite is the cause recorded when WriteHTTP is called without an error.
var errNilWrite = errors.New("apierror: WriteHTTP called with a nil error")

// WriteHTTP writes the error response for err to w and returns the *Error it
// rendered, so that the caller can log it (with its cause in Err) when its
// code is INTERNAL_ERROR. It is the net/http side's only error writer.
//
// err goes through From (a non-API error becomes INTERNAL_ERROR, a nil one
// too). WriteHTTP sets Content-Type (ContentType), Content-Length,
// Cache-Control: no-store and X-Content-Type-Options: nosniff; Retry-After
// from RetryAfterSeconds (removing any earlier value when there is none);
// Allow for METHOD_NOT_ALLOWED when set. Other headers already on w, such as
// the rate-limit ones, are kept. It then writes the status from Code.Status
// and the body from AppendJSON with requestID. It must be called before
// anything else is written to w; a failed body write (the client left) is
// ignored.
func WriteHTTP(w http.ResponseWriter, requestID string, err error) *Error {
	e := From(err)
	if e == nil {
		e = Internal(errNilWrite)
	}
	body := AppendJSON(make([]byte, 0, 256), e, requestID)

	h := w.Header()
	h.Set("Content-Type", ContentType)
	h.Set("Content-Length", strconv.Itoa(len(body)))
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	if s := e.RetryAfterSeconds(); s > 0 {
		h.Set("Retry-After", strconv.Itoa(s))
	} else {
		h.Del("Retry-After")
	}
	if e.Code == CodeMethodNotAllowed && e.Allow != "" {
		h.Set("Allow", e.Allow)
	}
	w.WriteHeader(e.Code.Status())
	_, _ = w.Write(body)
	return e
}
