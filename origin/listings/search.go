package listings

import (
	"strconv"
	"strings"
	"unicode"
)

// searchTerms splits a home buyer's query into full-text words and the
// counts it names: "richmond 3 bed" is the word richmond and at least three
// bedrooms; "2 bath", "3br", "4 bedrooms" work the same way.
type searchTerms struct {
	words        []string
	minBedrooms  *int
	minBathrooms *int
}

// stopWords carry no meaning in a listing search.
var stopWords = map[string]bool{
	"a": true, "an": true, "and": true, "at": true, "for": true, "in": true, "near": true,
	"of": true, "on": true, "or": true, "the": true, "to": true, "with": true, "property": true,
}

// abbreviations pairs street-type abbreviations with their full words, so
// "Main Rd" finds "Main Road" and the other way round.
var abbreviations = map[string]string{
	"rd": "road", "st": "street", "ave": "avenue", "av": "avenue", "dr": "drive", "ct": "court",
	"cres": "crescent", "pl": "place", "hwy": "highway", "pde": "parade", "tce": "terrace",
	"bvd": "boulevard", "blvd": "boulevard", "cl": "close", "ln": "lane", "gr": "grove", "sq": "square",
	"cct": "circuit", "esp": "esplanade", "mt": "mount", "nth": "north", "sth": "south",
}

var fullWords = func() map[string]string {
	m := map[string]string{}
	for a, f := range abbreviations {
		if _, ok := m[f]; !ok {
			m[f] = a
		}
	}
	return m
}()

// maxSearchWords bounds the work one query can ask of the database.
const maxSearchWords = 8

func parseSearch(q string) searchTerms {
	var t searchTerms
	tokens := strings.FieldsFunc(strings.ToLower(q), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	for i := 0; i < len(tokens); i++ {
		tok := tokens[i]
		// "3 bed" / "3bed" / "3br".
		num, unit := splitCount(tok)
		if num >= 0 && unit == "" && i+1 < len(tokens) {
			if kind := countKind(tokens[i+1]); kind != "" {
				t.setCount(kind, num)
				i++
				continue
			}
		}
		if num >= 0 && unit != "" {
			if kind := countKind(unit); kind != "" {
				t.setCount(kind, num)
				continue
			}
		}
		if stopWords[tok] || len(t.words) == maxSearchWords {
			continue
		}
		t.words = append(t.words, tok)
	}
	return t
}

func (t *searchTerms) setCount(kind string, n int) {
	switch kind {
	case "bed":
		t.minBedrooms = &n
	case "bath":
		t.minBathrooms = &n
	}
}

// splitCount splits "3bed" into 3 and "bed"; num is -1 when tok does not
// start with a small number.
func splitCount(tok string) (num int, unit string) {
	i := 0
	for i < len(tok) && tok[i] >= '0' && tok[i] <= '9' {
		i++
	}
	if i == 0 || i > 2 {
		return -1, ""
	}
	n, _ := strconv.Atoi(tok[:i])
	return n, tok[i:]
}

func countKind(w string) string {
	switch w {
	case "bed", "beds", "bedroom", "bedrooms", "br", "bdr", "bedder":
		return "bed"
	case "bath", "baths", "bathroom", "bathrooms", "ba":
		return "bath"
	}
	return ""
}

// alternatives are the spellings a search word matches: itself, and a
// street type's abbreviation or full word.
func alternatives(w string) []string {
	if f, ok := abbreviations[w]; ok {
		return []string{w, f}
	}
	if a, ok := fullWords[w]; ok {
		return []string{w, a}
	}
	return []string{w}
}
