package reaxmlgen

import (
	"strings"
	"testing"
	"time"
)

// TestTables checks the built-in data: no word twice in a list, no suburb
// twice in a state, postcodes that belong to their state, and templates
// that compile (buildTables panics on one that does not).
func TestTables(t *testing.T) {
	tb := loadTables()
	for _, m := range []map[string][]string{homeWords, placeWords, tradeWords, homeNouns} {
		for name, words := range m {
			seen := map[string]bool{}
			for _, w := range words {
				if seen[w] {
					t.Errorf("list %s has %q twice", name, w)
				}
				seen[w] = true
			}
		}
	}
	for name, byState := range stateWords {
		for st, words := range byState {
			seen := map[string]bool{}
			for _, w := range words {
				if seen[w] {
					t.Errorf("list %s of %s has %q twice", name, st, w)
				}
				seen[w] = true
			}
		}
	}
	first := map[string]string{"NSW": "2", "ACT": "2", "VIC": "3", "QLD": "4", "SA": "5", "WA": "6", "TAS": "7", "NT": "0"}
	seen := map[string]bool{}
	for _, s := range tb.suburbs {
		key := s.name + "|" + s.state
		if seen[key] {
			t.Errorf("suburb %s twice", key)
		}
		seen[key] = true
		if len(s.postcode) != 4 || !strings.HasPrefix(s.postcode, first[s.state]) {
			t.Errorf("%s: postcode %q", key, s.postcode)
		}
		if s.tier < 1 || s.tier > 4 {
			t.Errorf("%s: tier %d", key, s.tier)
		}
	}
	if len(tb.suburbs) < 1000 {
		t.Errorf("%d suburbs", len(tb.suburbs))
	}
	for key, r := range tb.recipes {
		if len(r.steps) > maxSteps {
			t.Errorf("recipe %s has %d steps, more than %d", key, len(r.steps), maxSteps)
		}
	}
}

func TestAppendFeedTime(t *testing.T) {
	syd, err := time.LoadLocation("Australia/Sydney")
	if err != nil {
		syd = time.UTC
	}
	for _, tm := range []time.Time{
		time.Date(2025, time.March, 1, 10, 0, 0, 0, syd),
		time.Date(2025, time.April, 6, 2, 30, 59, 0, syd),
		time.Date(999, time.December, 31, 23, 59, 9, 0, time.UTC),
	} {
		if got, want := string(appendFeedTime(nil, tm)), feedTime(tm); got != want {
			t.Errorf("appendFeedTime(%v) = %s, want %s", tm, got, want)
		}
	}
}

func TestComposerRepeatedWord(t *testing.T) {
	for _, tc := range []struct {
		parts []string
		want  string
	}{
		{[]string{"with crazy paving", " paving."}, "with crazy paving."},
		{[]string{"Regents Park", " ", "Park", " is close."}, "Regents Park is close."},
		{[]string{"a rooftop", " ", "rooftop terrace"}, "a rooftop terrace"},
		{[]string{"Kurri Kurri", " is near."}, "Kurri Kurri is near."},
		{[]string{"the pav", "ing"}, "the paving"},
		{[]string{"walk to", " town"}, "walk to town"},
		{[]string{"to Royston Park", " ", "Park", ", this"}, "to Royston Park, this"},
		{[]string{"to Royston Park", " ", "Park", " Reserve"}, "to Royston Park Reserve"},
	} {
		c := composer{}
		for _, p := range tc.parts {
			emit(&c, p)
		}
		if string(c.out) != tc.want {
			t.Errorf("%q: got %q, want %q", tc.parts, c.out, tc.want)
		}
	}
}
