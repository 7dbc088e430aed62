// Package target is the edge's one parse of a request target: the path
// and the query each get one canonical form, which the router matches, the
// response cache keys on and the origin is sent, so that what is checked,
// what is cached and what is fetched are one request. Both forms are
// defined by how the origin (net/url) reads them; fuzz tests hold the two
// readings equal.
package target

import (
	"bytes"
	"errors"
	"sync"
	"unicode/utf8"
)

// MaxParams bounds the parameters of a cacheable query. No read route takes
// more than 16; a longer query is refused rather than keyed in part.
const MaxParams = 32

// Errors of AppendCanonicalQuery. The origin answers the first with the same
// 422 (it parses with net/url.ParseQuery, which fails on exactly these).
var (
	ErrMalformedQuery = errors.New("malformed query string")
	ErrTooManyParams  = errors.New("too many query parameters")
	// ErrRepeatedPage and ErrRepeatedPerPage are page or per_page given
	// more than once where one of them is the default: dropping it would
	// leave one, which the origin would read as given once.
	ErrRepeatedPage    = errors.New("page given more than once")
	ErrRepeatedPerPage = errors.New("per_page given more than once")
)

// span is one decoded parameter: [ks,ke) is its name and [vs,ve) its value
// in the scratch buffer.
type span struct{ ks, ke, vs, ve int }

type queryScratch struct {
	buf   []byte
	spans [MaxParams]span
}

var scratchPool = sync.Pool{New: func() any { return &queryScratch{buf: make([]byte, 0, 512)} }}

// AppendCanonicalQuery appends the canonical form of a raw query: the
// parameters decoded exactly as net/url.ParseQuery decodes them (split on
// '&', '+' is a space, %XX escapes), the collection defaults (page=1,
// per_page=20) dropped, sorted by name then value, and encoded again as
// url.QueryEscape encodes. Two queries that the origin reads as the same
// parameters give the same bytes, and the origin reads the canonical form as
// exactly those parameters, so the form is both the cache key and what is
// forwarded. A query ParseQuery would reject (a ';' in a pair, a bad escape),
// or one that decodes to other than UTF-8 or to a NUL character, is
// ErrMalformedQuery, as the origin refuses it (origin/api.ParseQuery); one of more than MaxParams parameters is
// ErrTooManyParams. It allocates nothing in the steady state.
func AppendCanonicalQuery(dst, raw []byte) ([]byte, error) {
	if plainQuery(raw) {
		return append(dst, raw...), nil
	}
	return appendCanonicalQuery(dst, raw)
}

// plainQuery reports whether raw is its own canonical form, as most
// clients' queries are ("page=2", "page=3&per_page=12"): name=value pairs
// of unreserved bytes, each with one '=', none empty or a default, in
// order, at most MaxParams. One scan, and the query is copied as it is.
func plainQuery(raw []byte) bool {
	var prevK, prevV []byte
	for n := 0; len(raw) > 0; n++ {
		if n == MaxParams {
			return false
		}
		eq, end := -1, len(raw)
		for i, c := range raw {
			if c == '&' {
				end = i
				break
			}
			if c == '=' {
				if eq >= 0 {
					return false
				}
				eq = i
			} else if !unreservedByte[c] {
				return false
			}
		}
		if eq < 0 {
			return false
		}
		k, v := raw[:eq], raw[eq+1:end]
		if isDefault(k, v) {
			return false
		}
		if n > 0 {
			if c := bytes.Compare(k, prevK); c < 0 || c == 0 && bytes.Compare(v, prevV) < 0 {
				return false
			}
		}
		prevK, prevV = k, v
		if end == len(raw) {
			return true
		}
		raw = raw[end+1:]
		if len(raw) == 0 {
			return false // a trailing '&'
		}
	}
	return true
}

// appendCanonicalQuery is AppendCanonicalQuery for any query.
func appendCanonicalQuery(dst, raw []byte) ([]byte, error) {
	s := scratchPool.Get().(*queryScratch)
	defer scratchPool.Put(s)
	buf := s.buf[:0]
	n := 0
	// The defaults dropped, per name: a name given more than once is
	// refused by the origin, so it must reach it (or be refused here) as
	// given, not as one value once a default is dropped.
	var droppedPage, droppedPerPage int
	for len(raw) > 0 {
		var p []byte
		if i := bytes.IndexByte(raw, '&'); i >= 0 {
			p, raw = raw[:i], raw[i+1:]
		} else {
			p, raw = raw, nil
		}
		if bytes.IndexByte(p, ';') >= 0 {
			s.buf = buf
			return dst, ErrMalformedQuery
		}
		if len(p) == 0 {
			continue
		}
		k, v, _ := bytes.Cut(p, []byte("="))
		var sp span
		var ok bool
		sp.ks = len(buf)
		buf, ok = appendUnescape(buf, k)
		sp.ke = len(buf)
		if ok {
			sp.vs = len(buf)
			buf, ok = appendUnescape(buf, v)
			sp.ve = len(buf)
		}
		// The name and value are consecutive in buf: [ks, ve) holds both.
		if !ok || !utf8.Valid(buf[sp.ks:sp.ke]) || !utf8.Valid(buf[sp.vs:sp.ve]) || bytes.IndexByte(buf[sp.ks:sp.ve], 0) >= 0 {
			s.buf = buf
			return dst, ErrMalformedQuery
		}
		if isDefault(buf[sp.ks:sp.ke], buf[sp.vs:sp.ve]) {
			if string(buf[sp.ks:sp.ke]) == "page" {
				droppedPage++
			} else {
				droppedPerPage++
			}
			buf = buf[:sp.ks]
			continue
		}
		if n == MaxParams {
			s.buf = buf
			return dst, ErrTooManyParams
		}
		s.spans[n] = sp
		n++
	}
	s.buf = buf
	spans := s.spans[:n]
	if droppedPage > 1 || droppedPage > 0 && hasName(buf, spans, "page") {
		return dst, ErrRepeatedPage
	}
	if droppedPerPage > 1 || droppedPerPage > 0 && hasName(buf, spans, "per_page") {
		return dst, ErrRepeatedPerPage
	}
	less := func(a, b span) bool {
		if c := bytes.Compare(buf[a.ks:a.ke], buf[b.ks:b.ke]); c != 0 {
			return c < 0
		}
		return bytes.Compare(buf[a.vs:a.ve], buf[b.vs:b.ve]) < 0
	}
	// Insertion sort: a handful of parameters, and no closure escapes.
	for i := 1; i < n; i++ {
		for j := i; j > 0 && less(spans[j], spans[j-1]); j-- {
			spans[j], spans[j-1] = spans[j-1], spans[j]
		}
	}
	for i, sp := range spans {
		if i > 0 {
			dst = append(dst, '&')
		}
		dst = appendQueryEscape(dst, buf[sp.ks:sp.ke])
		dst = append(dst, '=')
		dst = appendQueryEscape(dst, buf[sp.vs:sp.ve])
	}
	return dst, nil
}

// hasName reports whether a parameter of spans is named name.
func hasName(buf []byte, spans []span, name string) bool {
	for _, sp := range spans {
		if string(buf[sp.ks:sp.ke]) == name {
			return true
		}
	}
	return false
}

func isDefault(k, v []byte) bool {
	return (string(k) == "page" && string(v) == "1") || (string(k) == "per_page" && string(v) == "20")
}

// appendUnescape is url.QueryUnescape: '+' is a space, %XX a byte; a '%'
// without two hex digits after it is an error.
func appendUnescape(dst, s []byte) ([]byte, bool) {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '+':
			dst = append(dst, ' ')
		case '%':
			if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
				return dst, false
			}
			dst = append(dst, fromHex(s[i+1])<<4|fromHex(s[i+2]))
			i += 2
		default:
			dst = append(dst, c)
		}
	}
	return dst, true
}

// appendQueryEscape is url.QueryEscape: unreserved bytes as they are, a
// space as '+', every other byte as %XX.
func appendQueryEscape(dst, s []byte) []byte {
	const hex = "0123456789ABCDEF"
	for _, c := range s {
		switch {
		case 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.' || c == '~':
			dst = append(dst, c)
		case c == ' ':
			dst = append(dst, '+')
		default:
			dst = append(dst, '%', hex[c>>4], hex[c&15])
		}
	}
	return dst
}
