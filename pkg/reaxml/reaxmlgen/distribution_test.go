package reaxmlgen_test

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/listgate/listgate/pkg/reaxml"
	"github.com/listgate/listgate/pkg/reaxml/reaxmlgen"
)

// corpus is what the distribution test measures of a generated feed.
type corpus struct {
	descriptions int
	tf, df       map[string]int // term and document frequency of description words
	lengths      []int          // words per description
	paragraphs   map[int]int    // descriptions by paragraph count
	suburbs      map[string]int // current listings by "suburb|state"
	postcodes    map[string]map[string]bool
	streets      map[string]bool
	headlines    map[string]bool
	current      int
	malformed    []string // descriptions or headlines a template left broken
}

// brokenText are signs of a template gone wrong: an empty fact or
// alternative, syntax left in, a doubled word.
var brokenText = []string{"  ", " .", " ,", ",,", "..", "{", "}", "[", "]", "|", " a a ", " the the ", " and and ", " a an ", " an a "}

func (c *corpus) check(s string) {
	for _, line := range strings.Split(s, "\n") {
		if line == "" {
			continue // between paragraphs
		}
		for _, b := range brokenText {
			if strings.Contains(" "+line+" ", b) && len(c.malformed) < 10 {
				c.malformed = append(c.malformed, fmt.Sprintf("%q in %q", b, line))
			}
		}
	}
}

// mustCorpus streams a generated feed through the decoder and counts.
func mustCorpus(tb testing.TB, opts reaxmlgen.Options) *corpus {
	tb.Helper()
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(reaxmlgen.Generate(pw, opts)) }()
	defer pr.Close()
	c := &corpus{tf: map[string]int{}, df: map[string]int{}, paragraphs: map[int]int{}, suburbs: map[string]int{},
		postcodes: map[string]map[string]bool{}, streets: map[string]bool{}, headlines: map[string]bool{}}
	d := reaxml.NewDecoder(pr, reaxml.Options{})
	seen := map[string]bool{}
	for {
		l, err := d.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			tb.Fatalf("decode: %v", err)
		}
		if l.Status != reaxml.StatusCurrent {
			continue
		}
		c.current++
		if l.Headline != nil {
			c.headlines[*l.Headline] = true
			c.check(*l.Headline)
		}
		if a := l.Address; a != nil && a.Suburb != nil && a.State != nil && a.Postcode != nil {
			key := *a.Suburb + "|" + *a.State
			c.suburbs[key]++
			if c.postcodes[key] == nil {
				c.postcodes[key] = map[string]bool{}
			}
			c.postcodes[key][*a.Postcode] = true
			if a.Street != nil {
				c.streets[*a.Street] = true
			}
		}
		if l.Description == nil {
			continue
		}
		desc := *l.Description
		c.check(desc)
		c.descriptions++
		c.lengths = append(c.lengths, countWords(desc))
		c.paragraphs[len(strings.Split(desc, "\n\n"))]++
		clear(seen)
		for _, w := range words(desc) {
			c.tf[w]++
			if !seen[w] {
				seen[w] = true
				c.df[w]++
			}
		}
	}
	return c
}

// countWords counts the fields of s with a letter or digit in them.
func countWords(s string) int {
	n := 0
	for _, f := range strings.Fields(s) {
		if strings.IndexFunc(f, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) >= 0 {
			n++
		}
	}
	return n
}

// words are the lower-case words of s, as a text search would index them
// (runs of letters, with apostrophes inside words).
func words(s string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && r != '\'' }) {
		if f = strings.Trim(f, "'"); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// stopWords are common English words a text search does not index: the
// "common words in most listings" must include words beyond them.
var stopWords = map[string]bool{
	"a": true, "an": true, "and": true, "the": true, "of": true, "in": true, "on": true, "to": true, "with": true,
	"for": true, "at": true, "by": true, "from": true, "or": true, "is": true, "are": true, "be": true, "this": true,
	"that": true, "its": true, "it": true, "as": true, "has": true, "have": true, "all": true, "each": true,
	"your": true, "you": true, "our": true, "into": true, "just": true, "while": true, "there": true, "their": true,
	"will": true, "can": true, "been": true, "who": true, "so": true, "up": true, "out": true, "we": true,
}

func percentile(sorted []int, p float64) int { return sorted[int(p*float64(len(sorted)-1))] }

// TestTextDistribution checks that generated text costs a text search what
// real listings would: common words in most descriptions, a Zipf-like
// rank-frequency curve with a long tail of rare words, realistic lengths,
// and many suburbs with a skewed share of the listings.
func TestTextDistribution(t *testing.T) {
	n := 20_000
	if testing.Short() {
		n = 4_000
	}
	c := mustCorpus(t, reaxmlgen.Options{Seed: 17, Listings: n})
	if c.descriptions < n/2 {
		t.Fatalf("%d descriptions in %d listings", c.descriptions, n)
	}
	for _, m := range c.malformed {
		t.Errorf("broken text: %s", m)
	}

	t.Run("lengths", func(t *testing.T) {
		s := slices.Sorted(slices.Values(c.lengths))
		p10, p50, p90 := percentile(s, 0.1), percentile(s, 0.5), percentile(s, 0.9)
		t.Logf("words per description: min %d, p10 %d, median %d, p90 %d, max %d", s[0], p10, p50, p90, s[len(s)-1])
		if s[0] < 80 || s[len(s)-1] > 250 {
			t.Errorf("descriptions of %d to %d words, want 80 to 250", s[0], s[len(s)-1])
		}
		if p10 > 125 || p90 < 190 || p50 < 130 || p50 > 200 {
			t.Errorf("lengths not spread between the bounds: p10 %d, median %d, p90 %d", p10, p50, p90)
		}
		t.Logf("descriptions by paragraphs: %v", c.paragraphs)
		for p := range c.paragraphs {
			if p < 3 || p > 8 {
				t.Errorf("%d descriptions of %d paragraphs, want 3 to 8", c.paragraphs[p], p)
			}
		}
		if len(c.paragraphs) < 4 {
			t.Errorf("paragraph counts %v: want a spread", c.paragraphs)
		}
	})

	t.Run("zipf", func(t *testing.T) {
		ranked := slices.SortedFunc(func(yield func(string) bool) {
			for w := range c.tf {
				if !yield(w) {
					return
				}
			}
		}, func(a, b string) int {
			if c.tf[a] != c.tf[b] {
				return c.tf[b] - c.tf[a]
			}
			return strings.Compare(a, b)
		})
		minVocab := 3000
		if testing.Short() {
			minVocab = 2000
		}
		if len(ranked) < minVocab {
			t.Fatalf("%d distinct description words, want at least %d", len(ranked), minVocab)
		}
		f := func(rank int) int { return c.tf[ranked[rank-1]] }
		t.Logf("%d distinct words; frequency by rank: 1 %q %d, 10 %q %d, 100 %q %d, 1000 %q %d, 3000 %q %d",
			len(ranked), ranked[0], f(1), ranked[9], f(10), ranked[99], f(100), ranked[999], f(1000), ranked[minVocab-1], f(minVocab))
		// Zipf's law with exponent 1 gives 10 for both ratios; real text
		// lies near it.
		for _, r := range [][2]int{{10, 100}, {100, 1000}} {
			ratio := float64(f(r[0])) / float64(f(r[1]))
			t.Logf("f(%d)/f(%d) = %.1f", r[0], r[1], ratio)
			if ratio < 4 || ratio > 25 {
				t.Errorf("f(%d)/f(%d) = %.1f, want 4 to 25 (Zipf-like)", r[0], r[1], ratio)
			}
		}
		// The commonest words are in most descriptions, and so are some
		// that a text search indexes (not stop words).
		for _, w := range ranked[:10] {
			if share := float64(c.df[w]) / float64(c.descriptions); share < 0.5 {
				t.Errorf("top-10 word %q in %.0f%% of descriptions, want most", w, 100*share)
			}
		}
		var content []string
		for _, w := range ranked {
			if !stopWords[w] {
				content = append(content, w)
			}
			if len(content) == 5 {
				break
			}
		}
		for _, w := range content {
			share := float64(c.df[w]) / float64(c.descriptions)
			t.Logf("content word %q in %.0f%% of descriptions", w, 100*share)
			if share < 0.3 {
				t.Errorf("common content word %q in %.0f%% of descriptions, want at least 30%%", w, 100*share)
			}
		}
		// A long tail: many words in fewer than 1 in 1,000 descriptions.
		rare := 0
		for _, w := range ranked {
			if c.df[w]*1000 < c.descriptions {
				rare++
			}
		}
		t.Logf("%d words in fewer than 0.1%% of descriptions", rare)
		if rare < 500 {
			t.Errorf("%d rare words, want a long tail of at least 500", rare)
		}
	})

	t.Run("suburbs", func(t *testing.T) {
		counts := slices.Sorted(func(yield func(int) bool) {
			for _, n := range c.suburbs {
				if !yield(n) {
					return
				}
			}
		})
		slices.Reverse(counts)
		minSuburbs := 500
		if testing.Short() {
			minSuburbs = 300
		}
		top, median := counts[0], counts[len(counts)/2]
		t.Logf("%d suburbs in %d current listings; most %d, median %d", len(counts), c.current, top, median)
		if len(counts) < minSuburbs {
			t.Errorf("%d distinct suburbs, want at least %d", len(counts), minSuburbs)
		}
		if share := float64(top) / float64(c.current); share < 0.005 || share > 0.05 {
			t.Errorf("the commonest suburb has %.1f%% of the listings, want 0.5%% to 5%%", 100*share)
		}
		if top < 10*median {
			t.Errorf("suburbs not skewed: most %d, median %d", top, median)
		}
		first := map[string]string{"NSW": "2", "ACT": "2", "VIC": "3", "QLD": "4", "SA": "5", "WA": "6", "TAS": "7", "NT": "0"}
		for key, pcs := range c.postcodes {
			if len(pcs) != 1 {
				t.Errorf("%s has postcodes %v", key, pcs)
			}
			state := key[strings.LastIndexByte(key, '|')+1:]
			for pc := range pcs {
				if len(pc) != 4 || !strings.HasPrefix(pc, first[state]) {
					t.Errorf("%s: postcode %s", key, pc)
				}
			}
		}
		if len(c.streets) < 500 {
			t.Errorf("%d distinct streets, want at least 500", len(c.streets))
		}
		if len(c.headlines)*10 < c.current*6 {
			t.Errorf("%d distinct headlines in %d current listings, want mostly different", len(c.headlines), c.current)
		}
	})
}
