package reaxmlgen

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
)

// A wordList is drawn from with Zipf weights: entry i (from 0) has weight
// 1/(i+1+zipfShift)^s, so the first entries are the common words and the
// last ones the rare tail.
type wordList struct {
	words []string
	cum   []uint32 // cumulative weights, strictly increasing
	base  int32    // the list's first word in the composer's stamps
}

// zipfShift flattens the head of every list a little (Zipf–Mandelbrot):
// with 0 the first word of a list would be drawn twice as often as the
// second, which makes the commonest words too common.
const zipfShift = 1.0

// zipfCum returns cumulative Zipf weights for n entries with exponent s,
// scaled so that the total fits a uint32 and no weight is 0.
func zipfCum(n int, s, shift float64) []uint32 {
	w := make([]float64, n)
	var sum float64
	for i := range w {
		w[i] = 1 / math.Pow(float64(i)+1+shift, s)
		sum += w[i]
	}
	cum := make([]uint32, n)
	var acc uint32
	for i, x := range w {
		acc += max(1, uint32(x/sum*(1<<30)))
		cum[i] = acc
	}
	return cum
}

func newWordList(words []string, s float64) *wordList {
	if len(words) == 0 {
		panic("reaxmlgen: empty word list")
	}
	return &wordList{words: words, cum: zipfCum(len(words), s, zipfShift)}
}

// pickIndex draws an index with the weights of cum.
func pickIndex(r *rand.Rand, cum []uint32) int {
	u := r.Uint32N(cum[len(cum)-1])
	lo, hi := 0, len(cum)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if cum[m] > u {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return lo
}

// A fact is a value of the listing being written that templates name:
// {suburb}, {beds}.
type fact uint8

const (
	factSuburb    fact = iota // the listing's suburb
	factSuburbs               // its possessive: "Bondi's", "St Ives'"
	factNear                  // a neighbouring suburb
	factNear2                 // another one
	factStreet                // the street, "Wattle Street"
	factNoun                  // what the listing is: "apartment", "café", "grazing property"
	factBeds                  // bedrooms in words: "three"
	factBedn                  // bedrooms in digits
	factBedrooms              // "three bedrooms", "one bedroom"
	factBathrooms             // "two bathrooms", "one bathroom"
	factAgent                 // the first listing agent's first name
	factLand                  // the land area: "650sqm"
	factHa                    // hectares, digits
	factArea                  // the floor area: "220sqm"
	factSleeps                // guests, digits
	factYears                 // years trading or on lease, digits
	factRates                 // council rates a quarter: "$620"
	factIncome                // net rent a year: "$84,000"
	factOutgoings             // outgoings a year
	factTakings               // takings a week
	factBizRent               // a business's rent a month
	factCouncil               // the council
	numFacts
)

var factNames = map[string]fact{
	"suburb": factSuburb, "suburb's": factSuburbs, "near": factNear, "near2": factNear2,
	"street": factStreet, "noun": factNoun, "beds": factBeds, "bedn": factBedn,
	"bedrooms": factBedrooms, "bathrooms": factBathrooms, "agent": factAgent, "land": factLand,
	"ha": factHa, "area": factArea, "sleeps": factSleeps, "years": factYears, "rates": factRates,
	"income": factIncome, "outgoings": factOutgoings, "takings": factTakings, "bizrent": factBizRent,
	"council": factCouncil,
}

// states are the Australian states and territories; a template's state
// word lists are indexed in this order.
var states = [...]string{"NSW", "VIC", "QLD", "WA", "SA", "TAS", "ACT", "NT"}

func stateIndex(s string) int {
	for i, st := range states {
		if st == s {
			return i
		}
	}
	panic("reaxmlgen: unknown state " + s)
}

type partKind uint8

const (
	partText    partKind = iota
	partList             // {name}: a word from a list
	partState            // {name}: a word from the listing's state's list
	partFact             // {name}: a fact
	partChoice           // [a|b|c]: one of the alternatives, the first most often
	partArticle          // {a}: "a" or "an", whichever the next word takes
)

// A part is kept small (the composer walks many of them): arg is the fact,
// or the index of the list, state lists or choice in the lexicon.
type part struct {
	kind partKind
	arg  uint32
	text string
}

type choice struct {
	alts []phrase
	cum  []uint32
}

// A phrase is a compiled template.
type phrase []part

// lexicon resolves the names in templates.
type lexicon struct {
	lists  map[string]*wordList
	states map[string]*[len(states)]*wordList
	// What parts refer to by index.
	listRefs  []*wordList
	stateRefs []*[len(states)]*wordList
	choices   []choice
	refs      map[any]uint32
}

// ref returns the index of a list or state lists in listRefs or
// stateRefs, adding it the first time.
func (lx *lexicon) ref(v any) uint32 {
	if i, ok := lx.refs[v]; ok {
		return i
	}
	var i uint32
	switch v := v.(type) {
	case *wordList:
		i = uint32(len(lx.listRefs))
		lx.listRefs = append(lx.listRefs, v)
	case *[len(states)]*wordList:
		i = uint32(len(lx.stateRefs))
		lx.stateRefs = append(lx.stateRefs, v)
	}
	if lx.refs == nil {
		lx.refs = map[any]uint32{}
	}
	lx.refs[v] = i
	return i
}

// choiceExponent is the Zipf exponent of inline alternatives and of a
// section's sentence templates: flatter than words, so that every
// phrasing turns up.
const choiceExponent = 0.7

// compile parses a template: literal text, {name} for a word list, a
// state's word list or a fact, {a} for an article, and [x|y] for
// alternatives (which nest and may be empty). It panics on a syntax error
// or an unknown name: templates are part of the program.
func (lx *lexicon) compile(src string) phrase {
	p, rest := lx.parseSeq(src, src, false)
	if rest != "" {
		panic(fmt.Sprintf("reaxmlgen: template %q: unexpected %q", src, rest))
	}
	return p
}

func (lx *lexicon) parseSeq(src, s string, inChoice bool) (phrase, string) {
	var p phrase
	for s != "" {
		switch s[0] {
		case '{':
			end := strings.IndexByte(s, '}')
			if end < 0 {
				panic(fmt.Sprintf("reaxmlgen: template %q: unclosed {", src))
			}
			p = append(p, lx.slot(src, s[1:end]))
			s = s[end+1:]
			if p[len(p)-1].kind == partArticle {
				s = strings.TrimPrefix(s, " ")
			}
		case '[':
			var alts []phrase
			s = s[1:]
			for {
				var alt phrase
				alt, s = lx.parseSeq(src, s, true)
				alts = append(alts, alt)
				if s == "" {
					panic(fmt.Sprintf("reaxmlgen: template %q: unclosed [", src))
				}
				c := s[0]
				s = s[1:]
				if c == ']' {
					break
				}
			}
			lx.choices = append(lx.choices, choice{alts: alts, cum: zipfCum(len(alts), choiceExponent, 0)})
			p = append(p, part{kind: partChoice, arg: uint32(len(lx.choices) - 1)})
		case '|', ']':
			if !inChoice {
				panic(fmt.Sprintf("reaxmlgen: template %q: stray %c", src, s[0]))
			}
			return p, s
		default:
			n := strings.IndexAny(s, "{[|]")
			if n < 0 {
				n = len(s)
			}
			p = append(p, part{kind: partText, text: s[:n]})
			s = s[n:]
		}
	}
	return p, s
}

func (lx *lexicon) slot(src, name string) part {
	if name == "a" {
		return part{kind: partArticle}
	}
	if f, ok := factNames[name]; ok {
		return part{kind: partFact, arg: uint32(f)}
	}
	if l, ok := lx.lists[name]; ok {
		return part{kind: partList, arg: lx.ref(l)}
	}
	if st, ok := lx.states[name]; ok {
		return part{kind: partState, arg: lx.ref(st)}
	}
	panic(fmt.Sprintf("reaxmlgen: template %q: unknown name {%s}", src, name))
}

// A pool is a set of sentence templates drawn with Zipf weights.
type pool struct {
	phrases []phrase
	cum     []uint32
}

func (lx *lexicon) pool(templates []string) *pool {
	p := &pool{cum: zipfCum(len(templates), choiceExponent, 0)}
	for _, t := range templates {
		p.phrases = append(p.phrases, lx.compile(t))
	}
	return p
}
