package api

import (
	"net/url"
	"unicode/utf8"

	"github.com/listgate/listgate/pkg/apierror"
)

// ParseQuery parses a request's raw query exactly as url.ParseQuery does:
// pairs split on '&', a ';' inside a pair is an error, names and values are
// QueryUnescape'd. Unlike url.URL.Query, which drops the pairs it cannot
// parse, it refuses the whole query: a 422 VALIDATION_ERROR with the detail
// {"query": "malformed query string"}; so is a name or value that is not
// UTF-8 (text columns refuse it). The edge keys its cache on the query
// parsed the same way, so no pair can count at one and be ignored at the
// other.
func ParseQuery(rawQuery string) (url.Values, error) {
	v, err := url.ParseQuery(rawQuery)
	if err != nil || !validUTF8(v) {
		return nil, apierror.InvalidField("query", "malformed query string")
	}
	return v, nil
}

func validUTF8(v url.Values) bool {
	for k, vs := range v {
		if !utf8.ValidString(k) {
			return false
		}
		for _, s := range vs {
			if !utf8.ValidString(s) {
				return false
			}
		}
	}
	return true
}
