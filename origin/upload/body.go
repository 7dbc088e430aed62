package upload

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/listgate/listgate/pkg/apierror"
	"github.com/listgate/listgate/pkg/reaxml"
)

// errNotXML is the sniffer's verdict on a body whose first significant byte
// is not '<', or that has none.
var errNotXML = errors.New("upload: not an XML document")

// checkFeedContentType accepts application/xml and text/xml, with a charset
// parameter or none.
func checkFeedContentType(v string) error {
	mt, params, err := mime.ParseMediaType(v)
	if err == nil && (mt == "application/xml" || mt == "text/xml") {
		if _, ok := params["charset"]; len(params) == 0 || ok && len(params) == 1 {
			return nil
		}
	}
	return apierror.UnsupportedMediaType("request body must be application/xml or text/xml")
}

// feedEncoding reports whether the body is gzip-encoded: Content-Encoding
// may be absent, identity or gzip (x-gzip too), nothing else.
func feedEncoding(values []string) (gzipped bool, err error) {
	if len(values) > 1 {
		return false, apierror.UnsupportedMediaType("Content-Encoding must be gzip or identity")
	}
	enc := ""
	if len(values) == 1 {
		enc = strings.ToLower(strings.TrimSpace(values[0]))
	}
	switch enc {
	case "", "identity":
		return false, nil
	case "gzip", "x-gzip":
		return true, nil
	}
	return false, apierror.UnsupportedMediaType("Content-Encoding must be gzip or identity")
}

// readFeed reads an upload body (already bounded as sent): it decompresses
// it when gzipped, bounds it to limit bytes decompressed, checks that it
// starts like XML, removes the feed's credentials and compresses the result
// for storage. It returns the compressed copy and the feed's decompressed
// size. Errors are API errors for what the client sent: 413 over a limit,
// 422 for a body that is not XML or not valid gzip.
func readFeed(body io.Reader, gzipped bool, limit int64) ([]byte, int64, error) {
	src := body
	if gzipped {
		zr, err := gzip.NewReader(body)
		if err != nil {
			return nil, 0, feedReadError(err, limit)
		}
		defer zr.Close()
		src = zr
	}
	lr := &limitReader{r: src, limit: limit}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if err := reaxml.RedactCredentials(zw, &xmlSniffer{r: lr}); err != nil {
		return nil, 0, feedReadError(err, limit)
	}
	if err := zw.Close(); err != nil {
		return nil, 0, err
	}
	return buf.Bytes(), lr.n, nil
}

// feedReadError turns an error met while reading a feed into what the
// client is told.
func feedReadError(err error, limit int64) error {
	var mbe *http.MaxBytesError
	var corrupt flate.CorruptInputError
	switch {
	case errors.As(err, &mbe), errors.Is(err, errFeedTooLarge):
		e := apierror.PayloadTooLarge(limit)
		e.Err = err
		return e
	case errors.Is(err, errNotXML):
		return apierror.InvalidField("body", "not an XML document")
	case errors.Is(err, reaxml.ErrRootTagTooLong):
		return apierror.InvalidField("body", "the root start tag is longer than 1 MiB")
	case errors.Is(err, gzip.ErrHeader), errors.Is(err, gzip.ErrChecksum), errors.As(err, &corrupt):
		return apierror.InvalidField("body", "not valid gzip")
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return apierror.InvalidField("body", "the body ended early")
	}
	return err
}

// errFeedTooLarge is limitReader's error past its limit.
var errFeedTooLarge = errors.New("upload: feed over the size limit")

// limitReader reads at most limit bytes from r and fails with
// errFeedTooLarge if r has more. n counts the bytes read.
type limitReader struct {
	r     io.Reader
	limit int64
	n     int64
}

func (l *limitReader) Read(p []byte) (int, error) {
	if l.n > l.limit {
		return 0, errFeedTooLarge
	}
	if int64(len(p)) > l.limit-l.n+1 {
		p = p[:l.limit-l.n+1]
	}
	n, err := l.r.Read(p)
	l.n += int64(n)
	if l.n > l.limit {
		return 0, errFeedTooLarge
	}
	return n, err
}

// utf8BOM may precede a feed's first '<'.
var utf8BOM = [3]byte{0xEF, 0xBB, 0xBF}

// xmlSniffer passes r through unchanged, failing with errNotXML when the
// first byte after an optional UTF-8 byte-order mark and white space is not
// '<', or when there is no such byte.
type xmlSniffer struct {
	r      io.Reader
	i      int // bytes examined
	bomLen int // leading bytes that matched the BOM
	done   bool
}

func (s *xmlSniffer) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	for k := 0; k < n && !s.done; k++ {
		if serr := s.step(p[k]); serr != nil {
			return 0, serr
		}
	}
	if !s.done && err == io.EOF {
		return 0, errNotXML
	}
	return n, err
}

func (s *xmlSniffer) step(c byte) error {
	if s.i < len(utf8BOM) && s.i == s.bomLen {
		if c == utf8BOM[s.i] {
			s.i++
			s.bomLen++
			return nil
		}
		if s.bomLen > 0 {
			return errNotXML
		}
	}
	s.i++
	switch c {
	case ' ', '\t', '\r', '\n':
		return nil
	case '<':
		s.done = true
		return nil
	}
	return errNotXML
}
