package listings

import (
	"context"
	"net/url"
	"testing"
)

// A search ranks by a query without the stems its prefixes already match
// (rankWord), and every listing it matches ranks exactly as by the whole
// query: for every word of a generated site's text, as a whole word and as
// a four-letter prefix, and for searches of several words and abbreviations.
func TestRankQueryRanksAlike(t *testing.T) {
	e := newEnv(t)
	e.mustImportGenerated(t, 29, 150)
	words := e.siteWords(t, 3, 300, 400)
	queries := []string{"modern kitchen pool", "renovated family home", "st kilda rd", "3 bed quiet street", "open plan living"}
	for _, w := range words {
		queries = append(queries, w)
		if r := []rune(w); len(r) > 4 {
			queries = append(queries, string(r[:4]))
		}
	}
	smaller, alike := 0, 0
	for _, q := range queries {
		f, err := parseListingFilter(&url.URL{RawQuery: "q=" + url.QueryEscape(q)}, searchParams, true)
		if err != nil {
			t.Fatalf("%q: %v", q, err)
		}
		b, tsq, rankq := listingWhere(e.site, f)
		if tsq == "" {
			continue
		}
		n, differ, whole, ranked, err := e.ranksApart(b, tsq, rankq)
		if err != nil {
			t.Fatalf("%q: %v", q, err)
		}
		if n == 0 { // an English stop word: not in the vectors
			continue
		}
		if differ != 0 {
			t.Errorf("%q: %d of %d listings rank otherwise by the smaller query", q, differ, n)
		}
		switch {
		case ranked < whole:
			smaller++
		case ranked == whole:
			alike++
		default:
			t.Errorf("%q: rank query of %d items, the whole of %d", q, ranked, whole)
		}
	}
	// Both kinds of word are among the site's: a stem the prefix matches
	// (kitchen) and one it does not (houses: hous).
	if smaller < 100 || alike < 20 {
		t.Errorf("rank queries smaller for %d searches, the same for %d of %d", smaller, alike, len(queries))
	}
	t.Logf("rank queries smaller for %d searches, the same for %d", smaller, alike)
}

// The rank query of a word leaves its stem out exactly when the prefix
// matches the stem.
func TestRankWord(t *testing.T) {
	e := newEnv(t)
	for word, want := range map[string]string{
		"kitchen": "'kitchen':*",
		"bedr":    "'bedr':*",
		"huntly":  "'huntly':* | 'hunt'",
		"houses":  "'houses':* | 'hous'",
		"running": "'running':* | 'run'",
		"3":       "'3':*",
		"über":    "'über':*",
	} {
		var got, whole string
		if err := e.db.Pool.QueryRow(context.Background(), `SELECT (`+rankWord("$1")+`)::text, (`+prefixQuery("$1")+` || `+stemQuery("$1")+`)::text`, word).Scan(&got, &whole); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("%q: rank query %s (whole %s), want %s", word, got, whole, want)
		}
	}
}
