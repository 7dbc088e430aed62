package api

import (
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/listgate/listgate/pkg/apierror"
)

// ParseQuery parses a request's raw query exactly as url.ParseQuery does:
// pairs split on '&', a ';' inside a pair is an error, names and values are
// QueryUnescape'd. Unlike url.URL.Query, which drops the pairs it cannot
// parse, it refuses the whole query: a 422 VALIDATION_ERROR with the detail
// {"query": "malformed query string"}; so is a name or value that is not
// UTF-8 or holds a NUL character (text columns refuse both: a value that
// reached a query would fail it). The edge keys its cache on the query
// parsed the same way, so no pair can count at one and be ignored at the
// other.
func ParseQuery(rawQuery string) (url.Values, error) {
	v, err := url.ParseQuery(rawQuery)
	if err != nil || !StorableValues(v) {
		return nil, apierror.InvalidField("query", "malformed query string")
	}
	return v, nil
}

// StorableValues reports whether every name and value of v is Storable.
func StorableValues(v url.Values) bool {
	for k, vs := range v {
		if !Storable(k) {
			return false
		}
		for _, s := range vs {
			if !Storable(s) {
				return false
			}
		}
	}
	return true
}

// Storable reports whether s can be a value of a text column: UTF-8 with
// no NUL character. PostgreSQL refuses anything else with an error, so a
// client's string that is not goes no further than the request.
func Storable(s string) bool {
	return utf8.ValidString(s) && strings.IndexByte(s, 0) < 0
}
