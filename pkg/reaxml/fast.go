package reaxml

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"unicode/utf8"
)

// The fast path. encoding/xml reads a feed a byte at a time through an
// interface and allocates every token; on generated feeds of realistic
// text it is three quarters of the decoder's time. Once the root element
// has been read, listings are tokenized here instead, straight from a
// buffer holding the whole listing element, into the same node tree.
//
// The fast tokenizer knows only a strict subset of what encoding/xml (in
// its non-strict mode) accepts: ASCII names without a namespace prefix,
// quoted attribute values, the five XML entities, character references
// and the HTML entities, comments and CDATA sections, end tags that match.
// At anything else — a processing instruction, a directive, a mismatched
// end tag, a listing over the tree limits or larger than maxFastListing,
// input that ends early — it gives up on the rest of the feed before the
// element it was reading, and encoding/xml reads it from there
// (Decoder.fallback), so every odd feed decodes exactly as it always did,
// errors and their line numbers included. FuzzFastMatchesXML holds the two
// paths to the same results.

// source is the sanitized feed, buffered so that the fast tokenizer can
// see a whole listing element at once. It is also the io.ByteReader
// encoding/xml reads through, so encoding/xml reads no further ahead than
// it needs and the fast path starts exactly where it stopped.
type source struct {
	r    io.Reader
	buf  []byte
	pos  int   // next byte to hand out
	base int64 // the feed's offset of buf[0]
	eof  bool  // r has ended
	err  error // what r ended with
	// last2 are the last two bytes ReadByte handed out: "/>" after a
	// root element that closes itself.
	last2   uint16
	refills int // calls of more, for tests
}

const (
	sourceChunk = 256 << 10
	// maxFastListing is the largest listing element the fast path holds
	// in memory at once; a larger one is read by encoding/xml.
	maxFastListing = 8 << 20
)

func (s *source) ReadByte() (byte, error) {
	if s.pos >= len(s.buf) && !s.more(s.pos) {
		return 0, s.err
	}
	c := s.buf[s.pos]
	s.pos++
	s.last2 = s.last2<<8 | uint16(c)
	return c, nil
}

func (s *source) Read(p []byte) (int, error) {
	if s.pos >= len(s.buf) && !s.more(s.pos) {
		return 0, s.err
	}
	n := copy(p, s.buf[s.pos:])
	s.pos += n
	return n, nil
}

// more drops the bytes before keep (offsets into buf shift down by keep),
// reads more and reports whether it read anything. It reads until what it
// keeps has doubled (at least sourceChunk more), so that a listing the fast
// path must scan again after each refill is scanned O(log n) times, not
// once per chunk.
func (s *source) more(keep int) bool {
	s.refills++
	n := copy(s.buf, s.buf[keep:])
	s.buf = s.buf[:n]
	s.pos -= keep
	s.base += int64(keep)
	if s.eof {
		return false
	}
	want := n + max(n, sourceChunk)
	if cap(s.buf) < want {
		grown := make([]byte, n, want)
		copy(grown, s.buf)
		s.buf = grown
	}
	for len(s.buf) < want {
		m, err := s.r.Read(s.buf[len(s.buf):want])
		s.buf = s.buf[:len(s.buf)+m]
		if err != nil {
			s.eof, s.err = true, err
			break
		}
	}
	return len(s.buf) > n
}

// errMore: the buffer ends inside what is being read. errBail: the input
// is outside the fast path's subset.
var (
	errMore = errors.New("reaxml: more input needed")
	errBail = errors.New("reaxml: not for the fast path")
)

// fastScanner tokenizes listing elements from a source.
type fastScanner struct {
	src   *source
	line  int // the line src.pos is on
	pool  *nodePool
	stack []*node
	names map[string]string // interned element and attribute names
}

// next returns the next listing element's tree, or io.EOF at the end of
// the root element. ok false means the fast path gave up: src.pos and line
// are where encoding/xml must take over.
func (f *fastScanner) next() (n *node, eof bool, ok bool) {
	for {
		n, err := f.scan()
		switch err {
		case nil:
			return n, false, true
		case io.EOF:
			return nil, true, true
		case errMore:
			if len(f.src.buf)-f.src.pos > maxFastListing || !f.src.more(f.src.pos) {
				return nil, false, false
			}
		default:
			return nil, false, false
		}
	}
}

// scan reads from src.pos: text and comments between listings (committed
// as they are read), then one listing element or the root's end tag.
func (f *fastScanner) scan() (*node, error) {
	b := f.src.buf
	for {
		i := f.src.pos
		k := bytes.IndexByte(b[i:], '<')
		text := b[i:]
		if k >= 0 {
			text = b[i : i+k]
		}
		// Text between listings is ignored, but encoding/xml would refuse
		// some of it: leave entities and "]]>" to it.
		if bytes.IndexByte(text, '&') >= 0 || bytes.Contains(text, []byte("]]>")) {
			return nil, errBail
		}
		if k < 0 {
			// Hold back what a refill may complete: the "]]" of a "]]>",
			// a character cut in two (encoding/xml must not start inside
			// one).
			cut := len(text) - min(len(text), 3)
			for cut > 0 && !utf8.RuneStart(text[cut]) {
				cut--
			}
			text = text[:cut]
		}
		f.src.pos += len(text)
		f.line += bytes.Count(text, nl)
		if k < 0 {
			return nil, errMore
		}
		i = f.src.pos
		if i+1 >= len(b) {
			return nil, errMore
		}
		switch b[i+1] {
		case '/':
			// The root element's end: the feed's listings are over.
			p, _, err := f.name(b, i+2)
			if err != nil {
				return nil, err
			}
			p, _ = skipSpace(b, p)
			if p >= len(b) {
				return nil, errMore
			}
			if b[p] != '>' {
				return nil, errBail
			}
			return nil, io.EOF
		case '!':
			p, lines, err := comment(b, i)
			if err != nil {
				return nil, err
			}
			f.src.pos, f.line = p, f.line+lines
		case '?':
			return nil, errBail
		default:
			n, p, lines, err := f.element(b, i)
			if err != nil {
				return nil, err
			}
			f.src.pos, f.line = p, f.line+lines
			return n, nil
		}
	}
}

var nl = []byte{'\n'}

// element reads the element whose start tag is at b[i], through its end
// tag, into a tree of nodes from the pool. It returns the tree, the offset
// after it and the lines it spans.
func (f *fastScanner) element(b []byte, i int) (*node, int, int, error) {
	f.pool.reset()
	line := f.line
	root, p, lines, empty, err := f.startTag(b, i, line)
	if err != nil {
		return nil, 0, 0, err
	}
	line += lines
	if empty {
		return root, p, line - f.line, nil
	}
	stack := append(f.stack[:0], root)
	defer func() { f.stack = stack[:0] }()
	nodes := 1
	for len(stack) > 0 {
		top := stack[len(stack)-1]
		k := bytes.IndexByte(b[p:], '<')
		if k < 0 {
			return nil, 0, 0, errMore
		}
		seg := b[p : p+k]
		line += bytes.Count(seg, nl)
		if top.text, err = appendCharData(top.text, seg); err != nil {
			return nil, 0, 0, err
		}
		p += k
		if p+1 >= len(b) {
			return nil, 0, 0, errMore
		}
		switch b[p+1] {
		case '/':
			q, name, err := f.name(b, p+2)
			if err != nil {
				return nil, 0, 0, err
			}
			q, lines := skipSpace(b, q)
			if q >= len(b) {
				return nil, 0, 0, errMore
			}
			if b[q] != '>' || name != top.name {
				return nil, 0, 0, errBail // encoding/xml auto-closes a mismatched tag
			}
			line += lines
			p = q + 1
			stack = stack[:len(stack)-1]
		case '!':
			if p+9 > len(b) {
				return nil, 0, 0, errMore
			}
			if string(b[p:p+9]) == "<![CDATA[" {
				end := bytes.Index(b[p+9:], []byte("]]>"))
				if end < 0 {
					return nil, 0, 0, errMore
				}
				data := b[p+9 : p+9+end]
				line += bytes.Count(data, nl)
				top.text = appendCRLF(top.text, data)
				p += 9 + end + 3
				continue
			}
			q, lines, err := comment(b, p)
			if err != nil {
				return nil, 0, 0, err
			}
			line += lines
			p = q
		case '?':
			return nil, 0, 0, errBail
		default:
			if len(stack) >= maxDepth || nodes >= maxNodes {
				return nil, 0, 0, errBail // encoding/xml's reader marks it too large
			}
			n, q, lines, empty, err := f.startTag(b, p, line)
			if err != nil {
				return nil, 0, 0, err
			}
			line += lines
			p = q
			n.at = len(top.text)
			top.kids = append(top.kids, n)
			nodes++
			if !empty {
				stack = append(stack, n)
			}
		}
	}
	return root, p, line - f.line, nil
}

// startTag reads the start tag at b[i] ('<') into a node on line. It
// returns the node, the offset after the tag, the lines the tag spans and
// whether it closes itself.
func (f *fastScanner) startTag(b []byte, i, line int) (*node, int, int, bool, error) {
	p, name, err := f.name(b, i+1)
	if err != nil {
		return nil, 0, 0, false, err
	}
	n := f.pool.get(name, line)
	lines := 0
	for {
		var sp int
		p, sp = skipSpace(b, p)
		lines += sp
		if p >= len(b) {
			return nil, 0, 0, false, errMore
		}
		switch b[p] {
		case '>':
			return n, p + 1, lines, false, nil
		case '/':
			if p+1 >= len(b) {
				return nil, 0, 0, false, errMore
			}
			if b[p+1] != '>' {
				return nil, 0, 0, false, errBail
			}
			return n, p + 2, lines, true, nil
		}
		var attr string
		if p, attr, err = f.name(b, p); err != nil {
			return nil, 0, 0, false, err
		}
		p, sp = skipSpace(b, p)
		lines += sp
		if p >= len(b) {
			return nil, 0, 0, false, errMore
		}
		if b[p] != '=' {
			return nil, 0, 0, false, errBail // a value-less attribute
		}
		p, sp = skipSpace(b, p+1)
		lines += sp
		if p >= len(b) {
			return nil, 0, 0, false, errMore
		}
		q := b[p]
		if q != '"' && q != '\'' {
			return nil, 0, 0, false, errBail // unquoted
		}
		end := bytes.IndexByte(b[p+1:], q)
		if end < 0 {
			return nil, 0, 0, false, errMore
		}
		raw := b[p+1 : p+1+end]
		if bytes.IndexByte(raw, '<') >= 0 {
			return nil, 0, 0, false, errBail
		}
		lines += bytes.Count(raw, nl)
		p += end + 2
		var value string
		if bytes.IndexByte(raw, '&') < 0 && bytes.IndexByte(raw, '\r') < 0 {
			value = string(raw)
		} else {
			v, err := appendDecoded(nil, raw)
			if err != nil {
				return nil, 0, 0, false, err
			}
			value = string(v)
		}
		if attr == "xmlns" {
			continue // a namespace declaration, dropped as nodePool.node drops it
		}
		n.attrs = append(n.attrs, xml.Attr{Name: xml.Name{Local: attr}, Value: value})
	}
}

// name reads a name at b[i]: an ASCII letter or '_', then letters,
// digits, '_', '.' or '-'. A prefixed or non-ASCII name is left to
// encoding/xml. It returns the offset after the name and the name,
// interned.
func (f *fastScanner) name(b []byte, i int) (int, string, error) {
	p := i
	for p < len(b) && nameByte(b[p]) {
		p++
	}
	if p >= len(b) {
		return 0, "", errMore
	}
	if p == i || b[p] == ':' || b[p] >= utf8.RuneSelf || !nameStart(b[i]) {
		return 0, "", errBail
	}
	s, ok := f.names[string(b[i:p])]
	if !ok {
		s = string(b[i:p])
		// Bounded, so that a feed of many long names is not kept whole.
		if len(f.names) < 4096 && len(s) <= 64 {
			f.names[s] = s
		}
	}
	return p, s, nil
}

func nameStart(c byte) bool { return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || c == '_' }

func nameByte(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_' || c == '.' || c == '-'
}

// skipSpace skips XML white space from b[i]; it returns the offset after
// it and the line breaks in it.
func skipSpace(b []byte, i int) (int, int) {
	lines := 0
	for i < len(b) {
		switch b[i] {
		case '\n':
			lines++
		case ' ', '\t', '\r':
		default:
			return i, lines
		}
		i++
	}
	return i, lines
}

// comment skips the comment at b[i] ("<!"): it returns the offset after
// it and the lines it spans. Anything else starting "<!" is left to
// encoding/xml, and so is a "--" inside a comment (an error there).
func comment(b []byte, i int) (int, int, error) {
	if i+4 > len(b) {
		return 0, 0, errMore
	}
	if string(b[i:i+4]) != "<!--" {
		return 0, 0, errBail
	}
	end := bytes.Index(b[i+4:], []byte("--"))
	if end < 0 || i+4+end+2 >= len(b) {
		return 0, 0, errMore
	}
	if b[i+4+end+2] != '>' {
		return 0, 0, errBail
	}
	return i + 4 + end + 3, bytes.Count(b[i+4:i+4+end], nl), nil
}

// appendCharData appends character data as encoding/xml gives it: entities
// replaced, line breaks normalised. An unescaped "]]>" is left to
// encoding/xml (an error there).
func appendCharData(dst, seg []byte) ([]byte, error) {
	if bytes.IndexByte(seg, '&') < 0 && bytes.IndexByte(seg, '\r') < 0 && bytes.IndexByte(seg, '>') < 0 {
		return append(dst, seg...), nil
	}
	if bytes.Contains(seg, []byte("]]>")) {
		return nil, errBail
	}
	return appendDecoded(dst, seg)
}

// appendCRLF appends CDATA: "\r\n" and a lone "\r" become "\n".
func appendCRLF(dst, seg []byte) []byte {
	for {
		k := bytes.IndexByte(seg, '\r')
		if k < 0 {
			return append(dst, seg...)
		}
		dst = append(dst, seg[:k]...)
		dst = append(dst, '\n')
		seg = seg[k+1:]
		if len(seg) > 0 && seg[0] == '\n' {
			seg = seg[1:]
		}
	}
}

// appendDecoded appends text or an attribute value with its entities
// replaced and line breaks normalised. An entity encoding/xml would keep
// as it is (unknown, malformed, a character XML forbids) is left to it.
func appendDecoded(dst, seg []byte) ([]byte, error) {
	for len(seg) > 0 {
		k := 0
		for k < len(seg) && seg[k] != '&' && seg[k] != '\r' {
			k++
		}
		dst = append(dst, seg[:k]...)
		seg = seg[k:]
		if len(seg) == 0 {
			break
		}
		if seg[0] == '\r' {
			dst = append(dst, '\n')
			seg = seg[1:]
			if len(seg) > 0 && seg[0] == '\n' {
				seg = seg[1:]
			}
			continue
		}
		end := bytes.IndexByte(seg, ';')
		if end < 2 || end > 32 {
			return nil, errBail
		}
		ref := seg[1:end]
		seg = seg[end+1:]
		if ref[0] == '#' {
			r, ok := charRefValue(ref[1:])
			if !ok {
				return nil, errBail
			}
			dst = utf8.AppendRune(dst, r)
			continue
		}
		if !nameStart(ref[0]) || ref[0] == '_' {
			return nil, errBail
		}
		for _, c := range ref {
			if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9') {
				return nil, errBail
			}
		}
		switch string(ref) {
		case "lt":
			dst = append(dst, '<')
		case "gt":
			dst = append(dst, '>')
		case "amp":
			dst = append(dst, '&')
		case "apos":
			dst = append(dst, '\'')
		case "quot":
			dst = append(dst, '"')
		default:
			s, ok := xml.HTMLEntity[string(ref)]
			if !ok {
				return nil, errBail
			}
			dst = append(dst, s...)
		}
	}
	return dst, nil
}

// charRefValue reads the digits of a character reference ("65", "x41";
// an upper-case X is not one to encoding/xml) and reports whether it is a
// character XML allows.
func charRefValue(digits []byte) (rune, bool) {
	base := rune(10)
	if len(digits) > 0 && digits[0] == 'x' {
		base, digits = 16, digits[1:]
	}
	if len(digits) == 0 || len(digits) > 8 {
		return 0, false
	}
	var v rune
	for _, c := range digits {
		var x rune
		switch {
		case '0' <= c && c <= '9':
			x = rune(c - '0')
		case base == 16 && 'a' <= c && c <= 'f':
			x = rune(c-'a') + 10
		case base == 16 && 'A' <= c && c <= 'F':
			x = rune(c-'A') + 10
		default:
			return 0, false
		}
		v = v*base + x
	}
	return v, xmlChar(v)
}
