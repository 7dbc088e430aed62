package api

import (
	"errors"
	"io"
	"net/http"
	"strconv"

	json "github.com/goccy/go-json"
)

// WriteJSON writes v as the JSON body of a response with status: the
// encoding and a newline, with Content-Type application/json (UTF-8) and
// Content-Length. Headers the caller set before (Cache-Control, …) are
// kept. An error encoding v is returned before anything is written; an
// error writing is the connection's.
func WriteJSON(w http.ResponseWriter, status int, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	_, err = w.Write(b)
	return err
}

// ErrTrailingData is DecodeStrict's error for a body with more than white
// space after its JSON value.
var ErrTrailingData = errors.New("unexpected data after the JSON value")

// DecodeStrict decodes the one JSON value r holds into v. It is stricter
// than json.Unmarshal: an object member that v has no field for is an
// error (json.Decoder.DisallowUnknownFields), and so is anything but white
// space after the value (ErrTrailingData).
//
// An error reading r is returned as it is: for a body over the limit of
// http.MaxBytesReader, an *http.MaxBytesError, which the server answers
// with 413. Otherwise a value that is not valid JSON, has a member of the
// wrong type (*json.UnmarshalTypeError, naming the field) or an unknown
// member is the decoder's error. The caller words the client's message.
func DecodeStrict(r io.Reader, v any) error {
	rr := &readErrors{r: r}
	dec := json.NewDecoder(rr)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if rr.err != nil {
			return rr.err
		}
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		if rr.err != nil {
			return rr.err
		}
		return ErrTrailingData
	}
	return nil
}

// readErrors remembers the first error of its reader other than io.EOF.
type readErrors struct {
	r   io.Reader
	err error
}

func (e *readErrors) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && err != io.EOF && e.err == nil {
		e.err = err
	}
	return n, err
}
