package listings

import (
	"net/url"
	"strings"
	"testing"
	"unicode"
)

// Whatever a client sends as q, the search answers 200, or 422 for a query
// string that is not valid (VALIDATION_ERROR), never a server error: the
// words parseSearch keeps go into to_tsquery as parameters, and none makes
// Postgres fail. A search with words ranks each match by its rank query
// (rankWord) exactly as by the whole query.
func FuzzSearchQuery(f *testing.F) {
	for _, q := range []string{"huntly", "3 bed pool", "kitchen:*", "a & b | !c", "'quoted' \"double\"", "café Ⅻ ½ ٣ ²",
		"ǅemal ǈ", "st kilda rd", strings.Repeat("x", 200), "日本語 テスト", "a\x00b", "-- drop table", `\`, "foo<->bar",
		"über-straße", "bedr", "houses running", "2br 3 bath", "the and of", "ﬁne ﬂat", "İstanbul", "ΣΊΣΥΦΟΣ", "\xff\xfe"} {
		f.Add(q)
	}
	e := newEnv(f)
	e.mustImportGenerated(f, 31, 40)
	// And words of the site's own text, alone and in pairs, so that the
	// seeds match listings to rank.
	words := e.siteWords(f, 4, 40, 40)
	for i, w := range words {
		f.Add(w)
		f.Add(w + " " + words[(i+7)%len(words)])
	}
	f.Fuzz(func(t *testing.T, q string) {
		resp, body := e.forInput(t).do(t, req{path: "/v1/sites/" + e.site + "/listings/search?q=" + url.QueryEscape(q)})
		if resp.StatusCode != 200 && resp.StatusCode != 422 {
			t.Fatalf("q %q: %d %s", q, resp.StatusCode, body)
		}
		terms := parseSearch(q)
		if len(terms.words) > maxSearchWords {
			t.Fatalf("q %q: %d words", q, len(terms.words))
		}
		for _, w := range terms.words {
			if w == "" || strings.IndexFunc(w, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) >= 0 {
				t.Fatalf("q %q: word %q", q, w)
			}
		}
		if resp.StatusCode != 200 {
			return
		}
		fl, err := parseListingFilter(&url.URL{RawQuery: "q=" + url.QueryEscape(q)}, searchParams, true)
		if err != nil {
			t.Fatalf("q %q answered 200, but its filter: %v", q, err)
		}
		b, tsq, rankq := listingWhere(e.site, fl)
		if tsq == "" {
			return
		}
		_, differ, _, _, err := e.ranksApart(b, tsq, rankq)
		if err != nil {
			t.Fatalf("q %q: %v", q, err)
		}
		if differ != 0 {
			t.Fatalf("q %q: %d listings rank otherwise by the rank query", q, differ)
		}
	})
}

// Whatever query string a client sends to the listing routes, they answer
// 200, or 422 for one they refuse (VALIDATION_ERROR), never a server
// error: every value is checked before it reaches a query, and what does
// reach one goes as a parameter.
func FuzzListingQuery(f *testing.F) {
	for _, raw := range []string{"", "page=200", "page=0", "page=99999999999999999999", "per_page=100&page=3",
		"status=current,sold,leased,withdrawn,offmarket,deleted", "status=CURRENT", "type=residential,rental&sort=price",
		"min_price=1e12&max_price=1e12", "min_price=1e13", "min_price=NaN", "min_price=-0", "max_price=0x10",
		"min_bedrooms=100&min_bathrooms=0&min_car_spaces=3", "agent_id=2147483647", "agent_id=-1",
		"modified_since=0001-01-01T00:00:00Z", "modified_since=9999-12-31T23:59:59+14:00", "modified_since=2024-02-30T00:00:00Z",
		"sort=suburb&suburb=Huntly&state=vic&postcode=3551", "sort=-price&category=House", "sort=created&page=2",
		"sort=relevance", "q=pool&sort=price&page=2", "q=3%20bed&min_bedrooms=1", "suburb=%00", "suburb=a%00b", "category=%ff", "q=pool&category=%00",
		"state=ﬀﬀ", "postcode=٣٥٥١", "page=2&page=3", "unknown=1", "q=", "q=%20", "a=%zz", ";", "&&&", "=x"} {
		f.Add(raw, false)
		f.Add(raw, true)
	}
	e := newEnv(f)
	e.mustImportGenerated(f, 37, 30)
	f.Fuzz(func(t *testing.T, raw string, search bool) {
		if strings.IndexFunc(raw, func(r rune) bool { return r <= ' ' || r >= 0x7f || r == '#' }) >= 0 {
			return // not on a request line: a client escapes it, and HTTP refuses it as it is
		}
		route := "/listings"
		if search {
			route = "/listings/search"
		}
		// The server alone: the fuzzer's queries differ from the document's
		// enums in case and spaces, which the server takes (bare).
		resp, body := e.bare().do(t, req{path: "/v1/sites/" + e.site + route + "?" + raw})
		if resp.StatusCode != 200 && resp.StatusCode != 422 {
			t.Fatalf("%s?%s: %d %s", route, raw, resp.StatusCode, body)
		}
	})
}

// Whatever a client puts where a listing's id goes, the listing routes
// never answer with a server error (200 for a listing, 404 for none, a
// redirect for a path the router cleans): an id a text column could not
// hold (a NUL, bytes that are not UTF-8) is not looked up.
func FuzzListingKey(f *testing.F) {
	for _, k := range []string{"1", "0", "-1", "99999999999999999999", "DEMO-000001", "DEMO:DEMO-000001", ":", "a:b:c",
		"\x00", "a\x00b", "DEMO:\x00", "\xff", "\xc3", "日本", strings.Repeat("9", 200), strings.Repeat("x", 201)} {
		f.Add(k)
	}
	e := newEnv(f)
	e.mustImportGenerated(f, 41, 5)
	f.Fuzz(func(t *testing.T, key string) {
		if key == "" {
			return // another route: the collection
		}
		for _, route := range []string{"/listings/", "/stats/listings/"} {
			path := "/v1/sites/" + e.site + route + url.PathEscape(key)
			// The server alone: a key such as ".." is a path the router
			// cleans and redirects, which the document does not list.
			resp, body := e.bare().do(t, req{path: path})
			if resp.StatusCode >= 500 {
				t.Fatalf("%s: %d %s", path, resp.StatusCode, body)
			}
		}
	})
}
