package contract

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"sync"
	"testing"
)

// CheckExchange checks one exchange a client made, over the network, with
// a server that serves the document (the edge, in front of the origin):
// req as it was sent, with reqBody its whole body, and the answer's status,
// headers and whole body. Each mismatch is reported with tb.Errorf, as
// Wrap reports them, and the (route, status) pair counts for Coverage. A
// path the document does not have is not checked (the end-to-end tests
// also reach the dashboard and the service endpoints of each program); nor
// is an answer the edge gives before reading a request (over a connection
// limit), which no route of the document describes.
func CheckExchange(tb testing.TB, req *http.Request, reqBody []byte, status int, header http.Header, body []byte) {
	tb.Helper()
	c, err := loadChecker()
	if err != nil {
		tb.Fatalf("contract: %v", err)
	}
	if rt, _ := c.match(req.URL.EscapedPath()); rt == nil {
		return
	}
	if dir := coverageDir(); dir != "" {
		registerCoverageWriter(tb, dir)
	}
	if header.Get("Content-Encoding") == "gzip" {
		// Asked for by the test (Go's client inflates only what it asked
		// for itself): the document describes the inflated body.
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			tb.Errorf("contract: %s %s: a gzip body that does not inflate: %v", req.Method, req.URL.RequestURI(), err)
			return
		}
		if body, err = io.ReadAll(io.LimitReader(zr, maxResponseBody+1)); err != nil {
			tb.Errorf("contract: %s %s: a gzip body that does not inflate: %v", req.Method, req.URL.RequestURI(), err)
			return
		}
	}
	rec := &recorder{status: status, header: header.Clone()}
	if len(body) > maxResponseBody {
		rec.overflow = true
	} else {
		rec.body = *bytes.NewBuffer(bytes.Clone(body))
	}
	for _, msg := range c.check(req, reqBody, len(reqBody) <= maxRequestBody, rec, true) {
		tb.Errorf("%s", msg)
	}
}

// coverageWriters are the tests whose end writes this binary's pairs: one
// cleanup a test, however many exchanges it checks.
var coverageWriters sync.Map // testing.TB → struct{}

func registerCoverageWriter(tb testing.TB, dir string) {
	if _, loaded := coverageWriters.LoadOrStore(tb, struct{}{}); loaded {
		return
	}
	tb.Cleanup(func() {
		coverageWriters.Delete(tb)
		if err := writeCoverage(dir); err != nil {
			tb.Errorf("contract: %v", err)
		}
	})
}
