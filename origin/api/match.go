package api

import "strings"

// IsUUID reports whether s is a UUID in its canonical text form
// (8-4-4-4-12 hexadecimal digits, either case): the only form of a site,
// key or other id that the API looks up. Anything else names nothing.
func IsUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
				return false
			}
		}
	}
	return true
}

// ETagMatch reports whether an If-None-Match header value names etag (a
// quoted entity tag, "…"), by the weak comparison of RFC 9110 §13.1.2: W/
// prefixes are ignored, and "*" matches any. A handler that finds a match
// answers 304 Not Modified.
func ETagMatch(ifNoneMatch, etag string) bool {
	for _, t := range strings.Split(ifNoneMatch, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == "*" || t == etag {
			return true
		}
	}
	return false
}
