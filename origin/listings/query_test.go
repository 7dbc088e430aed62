package listings

import (
	"net/url"
	"strings"
	"testing"
)

// TestMalformedQuery: a query url.ParseQuery refuses is a 422 on every read
// route, never a page built from the pairs that did parse (the edge keys its
// cache on the whole query).
func TestMalformedQuery(t *testing.T) {
	e := newEnv(t)
	e.mustImport(t, generated(t, 3))
	routes := []string{"/listings", "/listings/search", "/listings/featured", "/listings/1", "/fields",
		"/media", "/media/1", "/agents", "/agents/1", "/stats/summary"}
	queries := map[string]string{
		"semicolon in a pair":       "status=current;x=1",
		"bad escape in a name":      "%zz=1",
		"bad escape in a value":     "suburb=%zz",
		"semicolon pair after good": "page=1&;0=1",
		"lone semicolon":            ";",
		"truncated escape":          "page=1%",
		"not UTF-8":                 "suburb=%c3",
	}
	for name, raw := range queries {
		if _, err := url.ParseQuery(raw); err == nil && name != "not UTF-8" {
			t.Fatalf("%s: url.ParseQuery accepts %q", name, raw)
		}
		for _, route := range routes {
			t.Run(name+" "+route, func(t *testing.T) {
				status, eb := e.getError(t, req{path: "/v1/sites/{site}" + route + "?" + raw})
				if status != 422 || eb.Error.Code != "VALIDATION_ERROR" {
					t.Fatalf("%d %s", status, eb.Error.Code)
				}
				if len(eb.Error.Details) != 1 || eb.Error.Details["query"] != "malformed query string" {
					t.Errorf("details %v", eb.Error.Details)
				}
			})
		}
	}
}

// TestQueryParsedAsParseQuery: what url.ParseQuery accepts is read as it
// reads it: '+' and %20 are spaces, empty pairs are nothing, and the
// strictness on names still holds.
func TestQueryParsedAsParseQuery(t *testing.T) {
	e := newEnv(t)
	e.mustImport(t, generated(t, 3))
	for _, raw := range []string{"", "page=1&&per_page=5", "&", "suburb=St+Ives", "suburb=St%20Ives", "q=house&sort=%2Dprice"} {
		path := "/v1/sites/{site}/listings?" + raw
		if strings.HasPrefix(raw, "q=") {
			path = "/v1/sites/{site}/listings/search?" + raw
		}
		var p listingPage
		e.get(t, path, &p)
	}
	for name, tc := range map[string]struct{ raw, detail string }{
		"escaped unknown name": {"col%6Fur=red", "colour"},
		"escaped repeat":       {"page=1&p%61ge=2", "page"},
		"empty name":           {"=1", ""},
	} {
		t.Run(name, func(t *testing.T) {
			status, eb := e.getError(t, req{path: "/v1/sites/{site}/listings?" + tc.raw})
			if status != 422 || len(eb.Error.Details) != 1 || eb.Error.Details[tc.detail] == "" {
				t.Fatalf("%d %v, want a detail for %q", status, eb.Error.Details, tc.detail)
			}
		})
	}
}
