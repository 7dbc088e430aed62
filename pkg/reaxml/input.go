package reaxml

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// sanitizer is the io.Reader between the raw feed and the XML tokenizer. It
// makes the byte stream acceptable to encoding/xml without changing its
// line structure:
//   - a leading UTF-8 byte-order mark is dropped;
//   - C0 control characters other than tab, CR and LF are dropped, and so
//     are character references to characters XML forbids (&#22;, &#x0;);
//   - in a feed that declares no encoding or UTF-8, a byte that does not
//     start a valid UTF-8 sequence is read as windows-1252 and re-encoded,
//     and U+FFFE/U+FFFF are dropped.
//
// A feed that declares another encoding (ISO-8859-1, windows-1252) keeps its
// high bytes; charsetReader converts them after the declaration.
type sanitizer struct {
	r       io.Reader
	sniffed bool
	utf8    bool   // repair invalid UTF-8 (feed is UTF-8)
	in      []byte // bytes read but not yet processed
	out     []byte // processed bytes not yet returned
	outBuf  []byte // backing array of out
	eof     bool
	err     error
}

const sanitizerChunk = 32 << 10

func newSanitizer(r io.Reader) *sanitizer { return &sanitizer{r: r} }

func (s *sanitizer) Read(p []byte) (int, error) {
	for len(s.out) == 0 {
		if s.eof && len(s.in) == 0 {
			return 0, s.err
		}
		s.fill()
		if !s.sniffed && (s.eof || len(s.in) >= 1024 || bytes.Contains(s.in, []byte("?>"))) {
			s.sniff()
		}
		if s.sniffed {
			s.process()
		}
	}
	n := copy(p, s.out)
	s.out = s.out[n:]
	return n, nil
}

// fill reads one chunk into s.in, recording EOF or the read error.
func (s *sanitizer) fill() {
	if s.eof {
		return
	}
	if cap(s.in)-len(s.in) < sanitizerChunk {
		grown := make([]byte, len(s.in), len(s.in)+2*sanitizerChunk)
		copy(grown, s.in)
		s.in = grown
	}
	n, err := s.r.Read(s.in[len(s.in):cap(s.in)])
	s.in = s.in[:len(s.in)+n]
	if err != nil {
		s.eof = true
		s.err = err
	}
}

// sniff drops a BOM and decides from the XML declaration whether the feed
// is UTF-8.
func (s *sanitizer) sniff() {
	s.sniffed = true
	s.in = bytes.TrimPrefix(s.in, []byte("\xef\xbb\xbf"))
	s.utf8 = true
	if !bytes.HasPrefix(s.in, []byte("<?xml")) {
		return
	}
	decl := s.in
	if i := bytes.Index(decl, []byte("?>")); i >= 0 {
		decl = decl[:i]
	}
	enc := declaredEncoding(string(decl))
	if enc != "" && !strings.EqualFold(enc, "utf-8") && !strings.EqualFold(enc, "utf8") {
		s.utf8 = false
	}
}

// declaredEncoding returns the encoding pseudo-attribute of an XML
// declaration, or "".
func declaredEncoding(decl string) string {
	i := strings.Index(decl, "encoding")
	if i < 0 {
		return ""
	}
	rest := strings.TrimLeft(decl[i+len("encoding"):], " \t\r\n")
	if !strings.HasPrefix(rest, "=") {
		return ""
	}
	rest = strings.TrimLeft(rest[1:], " \t\r\n")
	if rest == "" || (rest[0] != '"' && rest[0] != '\'') {
		return ""
	}
	q := rest[0]
	end := strings.IndexByte(rest[1:], q)
	if end < 0 {
		return ""
	}
	return rest[1 : 1+end]
}

// process moves what it can from s.in to s.out, keeping an incomplete
// UTF-8 sequence or character reference at the end of s.in for the next
// chunk unless the input has ended.
func (s *sanitizer) process() {
	in := s.in
	out := s.outBuf[:0]
	i := 0
	for i < len(in) {
		// Fast path: copy the run of bytes that need no attention.
		j := i
		for j < len(in) && in[j] >= 0x20 && in[j] != '&' && in[j] < utf8.RuneSelf {
			j++
		}
		out = append(out, in[i:j]...)
		if i = j; i >= len(in) {
			break
		}
		c := in[i]
		switch {
		case c < 0x20 && c != '\t' && c != '\n' && c != '\r':
			i++
		case c == '&':
			n, keep, complete := charRef(in[i:], s.eof)
			if !complete {
				goto carry
			}
			if keep {
				out = append(out, in[i:i+n]...)
			}
			i += n
		case c < utf8.RuneSelf || !s.utf8:
			out = append(out, c)
			i++
		default:
			r, size := utf8.DecodeRune(in[i:])
			if r == utf8.RuneError && size == 1 {
				if !s.eof && !utf8.FullRune(in[i:]) {
					goto carry
				}
				out = utf8.AppendRune(out, cp1252[c-0x80])
				i++
				continue
			}
			if r != 0xFFFE && r != 0xFFFF {
				out = append(out, in[i:i+size]...)
			}
			i += size
		}
	}
carry:
	s.outBuf = out
	s.out = out
	s.in = append(s.in[:0], in[i:]...)
}

// charRef looks at b, which starts with '&'. It returns how many bytes to
// consume, whether to keep them, and false if b may be an incomplete
// character reference that needs more input.
func charRef(b []byte, eof bool) (n int, keep, complete bool) {
	const maxRef = 12 // &#x10FFFF; plus leading zeros
	if len(b) < 2 {
		return 1, true, eof
	}
	if b[1] != '#' {
		return 1, true, true
	}
	end := bytes.IndexByte(b[:min(len(b), maxRef)], ';')
	if end < 0 {
		if len(b) < maxRef && !eof {
			return 0, false, false
		}
		return 1, true, true
	}
	digits, base := string(b[2:end]), 10
	if strings.HasPrefix(digits, "x") || strings.HasPrefix(digits, "X") {
		digits, base = digits[1:], 16
	}
	var v rune
	for _, d := range digits {
		var x rune
		switch {
		case d >= '0' && d <= '9':
			x = d - '0'
		case base == 16 && d >= 'a' && d <= 'f':
			x = d - 'a' + 10
		case base == 16 && d >= 'A' && d <= 'F':
			x = d - 'A' + 10
		default:
			return 1, true, true // not a reference: let the tokenizer judge
		}
		v = v*rune(base) + x
	}
	if digits == "" {
		return 1, true, true
	}
	return end + 1, xmlChar(v), true
}

// xmlChar reports whether r is a character XML 1.0 allows.
func xmlChar(r rune) bool {
	return r == 0x09 || r == 0x0A || r == 0x0D ||
		r >= 0x20 && r <= 0xD7FF ||
		r >= 0xE000 && r <= 0xFFFD ||
		r >= 0x10000 && r <= 0x10FFFF
}

// cp1252 maps bytes 0x80–0xFF of windows-1252 to runes. The five bytes
// windows-1252 leaves undefined map to the C1 controls, as in ISO-8859-1.
var cp1252 = func() [128]rune {
	var t [128]rune
	for i := range t {
		t[i] = rune(0x80 + i)
	}
	for i, r := range []rune{
		0x20AC, 0x81, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021,
		0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0x8D, 0x017D, 0x8F,
		0x90, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014,
		0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x9D, 0x017E, 0x0178,
	} {
		t[i] = r
	}
	return t
}()

// charsetReader is the xml.Decoder CharsetReader. It reads ISO-8859-1 as
// windows-1252 (as browsers do: real "ISO-8859-1" feeds carry curly quotes
// in 0x80–0x9F) and US-ASCII as UTF-8.
func charsetReader(label string, r io.Reader) (io.Reader, error) {
	switch strings.ToLower(strings.TrimSpace(label)) {
	case "utf-8", "utf8", "us-ascii", "ascii":
		return r, nil
	case "iso-8859-1", "iso8859-1", "iso_8859-1", "latin1", "latin-1", "l1",
		"windows-1252", "cp1252", "x-cp1252":
		return &latin1Reader{r: r}, nil
	}
	return nil, fmt.Errorf("reaxml: unsupported encoding %q (want UTF-8 or ISO-8859-1)", label)
}

// latin1Reader converts windows-1252 bytes to UTF-8.
type latin1Reader struct {
	r   io.Reader
	buf [4096]byte
	out []byte
}

func (l *latin1Reader) Read(p []byte) (int, error) {
	if len(l.out) == 0 {
		n, err := l.r.Read(l.buf[:])
		out := l.out[:0]
		for _, c := range l.buf[:n] {
			if c < utf8.RuneSelf {
				out = append(out, c)
			} else {
				out = utf8.AppendRune(out, cp1252[c-0x80])
			}
		}
		l.out = out
		if n == 0 {
			return 0, err
		}
	}
	n := copy(p, l.out)
	l.out = l.out[n:]
	return n, nil
}
