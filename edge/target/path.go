package target

import (
	"bytes"
	"errors"
	"unicode/utf8"
)

// ErrAmbiguousPath is AppendCanonicalPath's refusal of a path that another
// parser could read as other segments.
var ErrAmbiguousPath = errors.New("ambiguous request path")

// NeedsCanonicalPath reports whether raw is other than a plain path, whose
// canonical form is itself: '/' then segments of unreserved bytes, none
// empty or a dot segment. Most requests are plain and cost only this scan.
func NeedsCanonicalPath(raw []byte) bool {
	if len(raw) == 0 || raw[0] != '/' {
		return true
	}
	// Segment by segment: a tight loop over the table per byte, and the
	// dot-segment test only for segments of one or two bytes.
	raw = raw[1:]
	for {
		end := bytes.IndexByte(raw, '/')
		seg := raw
		if end >= 0 {
			seg = raw[:end]
		}
		for _, c := range seg {
			if !unreservedByte[c] {
				return true
			}
		}
		switch len(seg) {
		case 0:
			// Only the last segment may be empty (a trailing '/').
			if end >= 0 {
				return true
			}
		case 1:
			if seg[0] == '.' {
				return true
			}
		case 2:
			if seg[0] == '.' && seg[1] == '.' {
				return true
			}
		}
		if end < 0 {
			return false
		}
		raw = raw[end+1:]
	}
}

// unreservedByte is unreserved as a table, for the scan every request's
// path takes.
var unreservedByte = func() (t [256]bool) {
	for c := range t {
		t[c] = unreserved(byte(c))
	}
	return t
}()

// AppendCanonicalPath appends the canonical form of a raw origin-form path,
// or fails when the path is ambiguous: not starting with '/', a byte outside
// RFC 3986's pchar set, a '%' without two hex digits, a segment that
// decodes to contain '/' or '\', a control byte, or to "." or "..", or an
// empty segment other than a trailing one, or a segment that decodes to
// other than UTF-8. The canonical form re-encodes
// each decoded segment, keeping unreserved bytes, sub-delims, ':' and '@'
// and writing every other byte as %XX, so net/url at the origin decodes
// it to the same segments and AppendCanonicalPath returns it unchanged.
func AppendCanonicalPath(dst, raw []byte) ([]byte, error) {
	if len(raw) == 0 || raw[0] != '/' {
		return dst, ErrAmbiguousPath
	}
	const hexDigits = "0123456789ABCDEF"
	for len(raw) > 0 {
		raw = raw[1:] // the '/'
		dst = append(dst, '/')
		dots, n := 0, 0
		segStart := len(dst)
		escaped := false
		for len(raw) > 0 && raw[0] != '/' {
			c := raw[0]
			switch {
			case c == '%':
				if len(raw) < 3 || !isHex(raw[1]) || !isHex(raw[2]) {
					return dst, ErrAmbiguousPath
				}
				c = fromHex(raw[1])<<4 | fromHex(raw[2])
				raw = raw[3:]
				escaped = escaped || c >= 0x80
			case pchar(c):
				raw = raw[1:]
			default:
				return dst, ErrAmbiguousPath
			}
			if c == '/' || c == '\\' || c < 0x20 || c == 0x7f {
				return dst, ErrAmbiguousPath
			}
			if c == '.' {
				dots++
			}
			n++
			if pchar(c) {
				dst = append(dst, c)
			} else {
				dst = append(dst, '%', hexDigits[c>>4], hexDigits[c&15])
			}
		}
		if (n == 0 && len(raw) > 0) || (n > 0 && dots == n && n <= 2) {
			return dst, ErrAmbiguousPath
		}
		if escaped && !validUTF8Segment(dst[segStart:]) {
			return dst, ErrAmbiguousPath
		}
	}
	return dst, nil
}

// validUTF8Segment reports whether a canonical segment decodes to UTF-8
// (the origin's text columns refuse anything else). Only bytes of 0x80 and
// more are escaped beyond ASCII, so only those need decoding.
func validUTF8Segment(seg []byte) bool {
	var buf [256]byte
	dec := buf[:0]
	for i := 0; i < len(seg); i++ {
		if seg[i] == '%' && i+2 < len(seg) {
			dec = append(dec, fromHex(seg[i+1])<<4|fromHex(seg[i+2]))
			i += 2
			continue
		}
		dec = append(dec, seg[i])
	}
	return utf8.Valid(dec)
}

// unreserved is RFC 3986's unreserved set.
func unreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~'
}

// pchar is what RFC 3986 allows unencoded in a path segment: unreserved,
// sub-delims, ':' and '@'.
func pchar(c byte) bool {
	if unreserved(c) {
		return true
	}
	switch c {
	case '!', '$', '&', '\'', '(', ')', '*', '+', ',', ';', '=', ':', '@':
		return true
	}
	return false
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func fromHex(c byte) byte {
	switch {
	case '0' <= c && c <= '9':
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}
