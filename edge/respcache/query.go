package respcache

import (
	"bytes"
	"time"
)

// maxParams bounds the parameters a cacheable query may have; a longer
// query is kept as it came (still correct, just not shared with reorders).
const maxParams = 16

// AppendCanonicalQuery appends the canonical form of a raw query: its
// parameters sorted by name (then value), empty ones and the collection
// defaults (page=1, per_page=20) dropped. Two queries that ask for the
// same page give the same bytes. It allocates nothing.
func AppendCanonicalQuery(dst, raw []byte) []byte {
	var parts [maxParams][]byte
	n := 0
	for len(raw) > 0 {
		var p []byte
		if i := bytes.IndexByte(raw, '&'); i >= 0 {
			p, raw = raw[:i], raw[i+1:]
		} else {
			p, raw = raw, nil
		}
		if len(p) == 0 || isDefault(p) {
			continue
		}
		if n == maxParams {
			return append(dst, raw...)
		}
		parts[n] = p
		n++
	}
	// Insertion sort: a handful of parameters.
	for i := 1; i < n; i++ {
		for j := i; j > 0 && bytes.Compare(parts[j], parts[j-1]) < 0; j-- {
			parts[j], parts[j-1] = parts[j-1], parts[j]
		}
	}
	for i := 0; i < n; i++ {
		if i > 0 {
			dst = append(dst, '&')
		}
		dst = append(dst, parts[i]...)
	}
	return dst
}

func isDefault(p []byte) bool {
	return string(p) == "page=1" || string(p) == "per_page=20"
}

// CacheControl is what the cache reads of a Cache-Control header.
type CacheControl struct {
	MaxAge, SWR, SIE time.Duration
	NoStore          bool
}

// ParseCacheControl reads max-age, stale-while-revalidate, stale-if-error,
// no-store and no-cache (treated as no-store) from a header value.
func ParseCacheControl(h []byte) CacheControl {
	var cc CacheControl
	for len(h) > 0 {
		var d []byte
		if i := bytes.IndexByte(h, ','); i >= 0 {
			d, h = h[:i], h[i+1:]
		} else {
			d, h = h, nil
		}
		d = bytes.TrimSpace(d)
		name, val, _ := bytes.Cut(d, []byte("="))
		switch string(bytes.ToLower(name)) {
		case "max-age":
			cc.MaxAge = seconds(val)
		case "stale-while-revalidate":
			cc.SWR = seconds(val)
		case "stale-if-error":
			cc.SIE = seconds(val)
		case "no-store", "no-cache":
			cc.NoStore = true
		}
	}
	return cc
}

func seconds(b []byte) time.Duration {
	b = bytes.Trim(b, `"`)
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' || n > 1e8 {
			return 0
		}
		n = n*10 + int(c-'0')
	}
	return time.Duration(n) * time.Second
}
