package listings

import (
	"bytes"
	"context"
	"net/url"
	"strings"
	"testing"
	"unicode"

	"github.com/jackc/pgx/v5"

	"github.com/listgate/listgate/pkg/reaxml/reaxmlgen"
)

// Whatever a client sends as q, the search answers 200, or 422 for a query
// string that is not valid (VALIDATION_ERROR), never a server error: the words parseSearch keeps go into to_tsquery as
// parameters, and none makes Postgres fail. A search with words ranks
// each match by its rank query (rankWord) exactly as by the whole query.
func FuzzSearchQuery(f *testing.F) {
	for _, q := range []string{"huntly", "3 bed pool", "kitchen:*", "a & b | !c", "'quoted' \"double\"", "café Ⅻ ½ ٣ ²",
		"ǅemal ǈ", "st kilda rd", strings.Repeat("x", 200), "日本語 テスト", "a\x00b", "-- drop table", `\`, "foo<->bar",
		"über-straße", "bedr", "houses running", "2br 3 bath", "the and of", "ﬁne ﬂat", "İstanbul", "ΣΊΣΥΦΟΣ", "\xff\xfe"} {
		f.Add(q)
	}
	e := newEnv(f)
	var feed bytes.Buffer
	if err := reaxmlgen.Generate(&feed, reaxmlgen.Options{Seed: 31, Listings: 40}); err != nil {
		f.Fatal(err)
	}
	e.mustImport(f, feed.String())
	// And words of the site's own text, alone and in pairs, so that the
	// seeds match listings to rank.
	rows, _ := e.db.Pool.Query(context.Background(), `SELECT word FROM ts_stat(format('SELECT to_tsvector(''simple'',
		coalesce(headline, '''') || '' '' || coalesce(description, '''') || '' '' || coalesce(search_address, ''''))
		FROM listings WHERE site_id = %L', $1::text)) WHERE length(word) >= 4 ORDER BY ndoc DESC, word LIMIT 40`, e.site)
	words, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil || len(words) < 40 {
		f.Fatalf("words: %d, %v", len(words), err)
	}
	for i, w := range words {
		f.Add(w)
		f.Add(w + " " + words[(i+7)%len(words)])
	}
	f.Fuzz(func(t *testing.T, q string) {
		resp, body := e.do(t, req{path: "/v1/sites/" + e.site + "/listings/search?q=" + url.QueryEscape(q)})
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
		var differ int
		if err := e.db.Pool.QueryRow(context.Background(), `SELECT count(*) FILTER (WHERE ts_rank_cd(l.search, `+tsq+`) <> ts_rank_cd(l.search, `+rankq+`))
				FROM listings l WHERE `+b.where(), b.args...).Scan(&differ); err != nil {
			t.Fatalf("q %q: %v", q, err)
		}
		if differ != 0 {
			t.Fatalf("q %q: %d listings rank otherwise by the rank query", q, differ)
		}
	})
}
