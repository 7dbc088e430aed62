package api

import (
	"errors"
	"io"
	"net/http"

	"github.com/listgate/listgate/pkg/apierror"
)

// ReadBody reads a request's whole body, at most limit bytes. A body
// larger than limit (by its Content-Length, before anything is read, or
// as it is read) is a 413 PAYLOAD_TOO_LARGE *apierror.Error; a body that
// cannot be read in full (the client went away) is a 422 on "body" that
// wraps the read error.
func ReadBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	if r.ContentLength > limit {
		return nil, apierror.PayloadTooLarge(limit)
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
		return nil, apierror.PayloadTooLarge(limit)
	}
	if err != nil {
		e := apierror.InvalidField("body", "could not be read in full")
		e.Err = err
		return nil, e
	}
	return body, nil
}
