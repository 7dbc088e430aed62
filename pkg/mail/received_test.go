package mail_test

import (
	"bytes"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	netmail "net/mail"
	"slices"
	"strings"
	"testing"
)

// received is a composed message read back the way a mail client would.
type received struct {
	raw    []byte
	header netmail.Header
	parts  []part
}

// part is one body part, decoded.
type part struct {
	contentType string // media type and parameters as written
	body        string // quoted-printable decoded
}

// mustParse reads raw with net/mail and mime/multipart, checking the
// framing every message must have: CRLF line endings only, lines of at most
// 998 characters, each header field once, quoted-printable parts.
func mustParse(tb testing.TB, raw []byte) received {
	tb.Helper()
	checkLines(tb, raw)
	msg, err := netmail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		tb.Fatalf("net/mail cannot read the message: %v\n%s", err, raw)
	}
	for key, values := range msg.Header {
		if len(values) != 1 {
			tb.Errorf("header %s appears %d times: %q", key, len(values), values)
		}
	}
	r := received{raw: raw, header: msg.Header}
	mediaType, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil {
		tb.Fatalf("Content-Type %q: %v", msg.Header.Get("Content-Type"), err)
	}
	if !strings.HasPrefix(mediaType, "multipart/") {
		r.parts = []part{mustDecodePart(tb, msg.Header.Get("Content-Type"), msg.Header.Get("Content-Transfer-Encoding"), msg.Body)}
		return r
	}
	mr := multipart.NewReader(msg.Body, params["boundary"])
	for {
		p, err := mr.NextRawPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			tb.Fatalf("multipart: %v", err)
		}
		r.parts = append(r.parts, mustDecodePart(tb, p.Header.Get("Content-Type"), p.Header.Get("Content-Transfer-Encoding"), p))
	}
	return r
}

func mustDecodePart(tb testing.TB, contentType, encoding string, body io.Reader) part {
	tb.Helper()
	if encoding != "quoted-printable" {
		tb.Fatalf("part %s: Content-Transfer-Encoding %q, want quoted-printable", contentType, encoding)
	}
	raw, err := io.ReadAll(body)
	if err != nil {
		tb.Fatalf("part %s: %v", contentType, err)
	}
	for line := range strings.SplitSeq(string(raw), "\r\n") {
		if len(line) > 76 {
			tb.Errorf("part %s: quoted-printable line of %d characters: %q", contentType, len(line), line)
		}
	}
	decoded, err := io.ReadAll(quotedprintable.NewReader(bytes.NewReader(raw)))
	if err != nil {
		tb.Fatalf("part %s: quoted-printable: %v", contentType, err)
	}
	return part{contentType: contentType, body: string(decoded)}
}

// checkLines fails tb unless every line of raw ends in CRLF, no CR or LF
// stands alone, and no line is longer than 998 characters.
func checkLines(tb testing.TB, raw []byte) {
	tb.Helper()
	if !bytes.HasSuffix(raw, []byte("\r\n")) {
		tb.Errorf("message does not end with CRLF")
	}
	for i, line := range bytes.Split(raw, []byte("\r\n")) {
		if bytes.ContainsAny(line, "\r\n") {
			tb.Fatalf("line %d has a bare CR or LF: %q", i+1, line)
		}
		if len(line) > 998 {
			tb.Errorf("line %d is %d characters long", i+1, len(line))
		}
	}
}

// headerNames returns the message's header names, canonical and sorted.
func (r received) headerNames() []string {
	var names []string
	for key := range r.header {
		names = append(names, key)
	}
	slices.Sort(names)
	return names
}

// addressField is a header field that must hold one address.
type addressField struct {
	key  string
	want *netmail.Address
}

// mustAddress returns the one address in header field key.
func (r received) mustAddress(tb testing.TB, key string) *netmail.Address {
	tb.Helper()
	list, err := r.header.AddressList(key)
	if err != nil {
		tb.Fatalf("%s %q: %v", key, r.header.Get(key), err)
	}
	if len(list) != 1 {
		tb.Fatalf("%s %q: %d addresses, want 1", key, r.header.Get(key), len(list))
	}
	return list[0]
}

// mustSubject returns the decoded Subject.
func (r received) mustSubject(tb testing.TB) string {
	tb.Helper()
	s, err := new(mime.WordDecoder).DecodeHeader(r.header.Get("Subject"))
	if err != nil {
		tb.Fatalf("Subject %q: %v", r.header.Get("Subject"), err)
	}
	return s
}

// crlf is what quoted-printable decoding gives back for s: valid UTF-8,
// every line break (LF, CR or CRLF) as CRLF.
func crlf(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	return strings.ReplaceAll(s, "\n", "\r\n")
}
