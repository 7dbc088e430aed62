package contract

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"sync"
)

// bodyTee passes a request body through to the handler and keeps a copy of
// what the handler read, up to max bytes.
type bodyTee struct {
	io.ReadCloser
	max int

	mu       sync.Mutex
	buf      bytes.Buffer
	eof      bool
	overflow bool
}

func (t *bodyTee) Read(p []byte) (int, error) {
	n, err := t.ReadCloser.Read(p)
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.buf.Len()+n > t.max {
		t.overflow = true
	} else {
		t.buf.Write(p[:n])
	}
	if errors.Is(err, io.EOF) {
		t.eof = true
	}
	return n, err
}

// drain reads what the handler left of the body, up to the limit, so that
// it can be checked.
func (t *bodyTee) drain() {
	t.mu.Lock()
	done := t.eof || t.overflow
	t.mu.Unlock()
	if !done {
		_, _ = io.Copy(io.Discard, io.LimitReader(t, int64(t.max)+1))
	}
}

// captured returns the body and whether it is the whole body: the handler
// read it to the end and it was within the limit.
func (t *bodyTee) captured() ([]byte, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return bytes.Clone(t.buf.Bytes()), t.eof && !t.overflow
}

// recorder passes a response through and records its status, the headers
// as they were when it was sent, and its body up to max bytes.
type recorder struct {
	http.ResponseWriter
	max int

	status   int
	header   http.Header
	body     bytes.Buffer
	overflow bool
}

func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
		r.header = r.ResponseWriter.Header().Clone()
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.WriteHeader(http.StatusOK)
	}
	if r.body.Len()+len(b) > r.max {
		r.overflow = true
	} else {
		r.body.Write(b)
	}
	return r.ResponseWriter.Write(b)
}

// Flush lets streaming handlers flush through the recorder.
func (r *recorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		if r.status == 0 {
			r.WriteHeader(http.StatusOK)
		}
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the writer's deadlines.
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// finish fills in what a handler that wrote nothing implied: 200 and the
// headers as they are now.
func (r *recorder) finish() {
	if r.status == 0 {
		r.status = http.StatusOK
		r.header = r.ResponseWriter.Header().Clone()
	}
}

func jsonDecoder(b []byte) *json.Decoder {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return dec
}
