package reaxmlgen

import (
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
	"sync"
)

// councilRow is one row of the suburb tables: the state, the council (the
// municipality element), the price tier (1 the most expensive, 4 the
// least; prices and rents follow it) and the council's suburbs as
// "Name postcode" separated by commas.
type councilRow struct {
	state, council string
	tier           int
	suburbs        string
}

// suburb is one suburb of the tables.
type suburb struct {
	name, state, postcode, council string
	tier                           int
	state8                         int   // index in states
	idx                            int32 // index in tables.suburbs
	// row and stateRows are the index ranges [lo, hi) of the suburb's
	// council row and of its state in tables.suburbs, for neighbours.
	row, stateRows [2]int32
}

// wordExponent is the Zipf exponent of word lists.
const wordExponent = 1.0

// Suburbs are drawn by popularity rank with Zipf–Mandelbrot weights
// 1/(rank+suburbShift)^suburbExponent: the first few suburbs have a couple
// of percent of the listings each, most have a few in ten thousand.
const (
	suburbExponent = 1.0
	suburbShift    = 8
)

// A recipe is how a kind of listing's description is put together: its
// topics in order, each with a least and most number of sentences. The
// last step is the closing.
type recipe struct {
	steps   []step
	bullets *pool // items of a feature list, nil for none
}

type step struct {
	pool     *pool
	min, max int
}

// tables are the compiled word lists, templates and suburbs.
type tables struct {
	lx         lexicon
	suburbs    []suburb
	suburbCum  []uint32 // by popularity rank
	byRank     []int32  // suburbs index by rank
	country    []int32  // suburbs of country towns, for farms
	street     [2]*wordList
	homeNouns  map[string]*wordList
	headlines  map[string]*pool
	bulletHead *pool
	recipes    map[string]*recipe
	words      int // words in all lists
}

var loadTables = sync.OnceValue(buildTables)

func buildTables() *tables {
	t := &tables{
		lx:        lexicon{lists: map[string]*wordList{}, states: map[string]*[len(states)]*wordList{}},
		homeNouns: map[string]*wordList{},
		headlines: map[string]*pool{},
		recipes:   map[string]*recipe{},
	}
	for _, m := range []map[string][]string{homeWords, placeWords, tradeWords} {
		for name, words := range m {
			if _, dup := t.lx.lists[name]; dup {
				panic("reaxmlgen: word list " + name + " defined twice")
			}
			t.lx.lists[name] = newWordList(words, wordExponent)
		}
	}
	for name, byState := range stateWords {
		var ls [len(states)]*wordList
		for i, st := range states {
			ls[i] = newWordList(byState[st], wordExponent)
		}
		t.lx.states[name] = &ls
	}
	t.street = [2]*wordList{t.lx.lists["streetname"], t.lx.lists["streettype"]}
	for cat, nouns := range homeNouns {
		t.homeNouns[cat] = newWordList(nouns, wordExponent)
	}
	for group, tpls := range headlineTemplates {
		t.headlines[group] = t.lx.pool(tpls)
	}
	t.bulletHead = t.lx.pool(homeSections["bulletHead"])
	// Number the words of every list for the composer's stamps.
	number := func(l *wordList) {
		l.base = int32(t.words)
		t.words += len(l.words)
	}
	for _, l := range t.lx.lists {
		number(l)
	}
	for _, ls := range t.lx.states {
		for _, l := range ls {
			number(l)
		}
	}
	for _, l := range t.homeNouns {
		number(l)
	}
	t.buildRecipes()
	t.buildSuburbs()
	return t
}

// sectionPool compiles the templates of a section. Templates that begin
// with "H:" only suit a house (they speak of land, a facade or a
// backyard): with house false they are left out.
func (t *tables) sectionPool(name string, house bool) *pool {
	src, ok := homeSections[name]
	if !ok {
		src, ok = tradeSections[name]
	}
	if !ok {
		panic("reaxmlgen: no section " + name)
	}
	var keep []string
	for _, s := range src {
		if rest, houseOnly := strings.CutPrefix(s, "H:"); houseOnly {
			if house {
				keep = append(keep, rest)
			}
			continue
		}
		keep = append(keep, s)
	}
	return t.lx.pool(keep)
}

func (t *tables) buildRecipes() {
	type s struct {
		name     string
		min, max int
	}
	add := func(key string, house bool, bullets string, steps ...s) {
		r := &recipe{}
		for _, st := range steps {
			r.steps = append(r.steps, step{pool: t.sectionPool(st.name, house), min: st.min, max: st.max})
		}
		if bullets != "" {
			r.bullets = t.sectionPool(bullets, house)
		}
		t.recipes[key] = r
	}
	for _, house := range []bool{true, false} {
		suffix, outdoor := "", "outdoor"
		if !house {
			suffix, outdoor = "Apt", "outdoorApt"
		}
		add("sale"+suffix, house, "bullets",
			s{"intro", 1, 2}, s{"living", 0, 3}, s{"kitchen", 1, 3}, s{"bedrooms", 1, 2}, s{"bathrooms", 0, 2},
			s{outdoor, 0, 3}, s{"extras", 0, 2}, s{"location", 1, 3}, s{"closingSale", 1, 3})
		add("rent"+suffix, house, "bullets",
			s{"introRent", 1, 2}, s{"living", 0, 2}, s{"kitchen", 1, 2}, s{"bedrooms", 1, 2}, s{"bathrooms", 0, 2},
			s{outdoor, 0, 2}, s{"extras", 0, 2}, s{"location", 1, 3}, s{"closingRent", 1, 4})
		add("holiday"+suffix, house, "",
			s{"introHoliday", 1, 2}, s{"living", 0, 2}, s{"kitchen", 0, 2}, s{"bedrooms", 1, 2}, s{outdoor, 0, 2},
			s{"holidayInclusions", 1, 2}, s{"location", 1, 3}, s{"closingHoliday", 1, 4})
	}
	add("land", true, "bulletsLand",
		s{"introLand", 1, 2}, s{"landBlock", 1, 4}, s{"landServices", 1, 3}, s{"location", 1, 4}, s{"closingLand", 1, 3})
	add("rural", true, "bulletsRural",
		s{"introRural", 1, 2}, s{"ruralCountry", 1, 4}, s{"ruralWater", 1, 2}, s{"ruralImprove", 1, 3},
		s{"ruralHome", 0, 3}, s{"locationRural", 1, 3}, s{"closingLand", 1, 2})
	add("commercial", true, "bulletsCom",
		s{"introCom", 1, 2}, s{"comSpace", 1, 4}, s{"comZone", 0, 2}, s{"comLease", 0, 3}, s{"comLocation", 1, 3},
		s{"closingCom", 1, 3})
	add("commercialLand", true, "bulletsCom",
		s{"introCom", 1, 2}, s{"comLandBlock", 1, 4}, s{"comZone", 1, 3}, s{"landServices", 0, 2}, s{"comLocation", 1, 3},
		s{"closingCom", 1, 3})
	add("business", true, "bulletsBiz",
		s{"introBiz", 1, 2}, s{"bizTrade", 1, 4}, s{"bizPremises", 1, 3}, s{"bizLocation", 0, 3}, s{"closingBiz", 1, 3})
}

func (t *tables) buildSuburbs() {
	for _, rows := range [][]councilRow{nswSuburbs, vicSuburbs, qldSuburbs, waSuburbs, saSuburbs, tasActNtSuburbs} {
		for _, r := range rows {
			st := stateIndex(r.state)
			lo := int32(len(t.suburbs))
			for entry := range strings.SplitSeq(r.suburbs, ", ") {
				sp := strings.LastIndexByte(entry, ' ')
				if sp < 0 {
					panic(fmt.Sprintf("reaxmlgen: suburb %q has no postcode", entry))
				}
				t.suburbs = append(t.suburbs, suburb{name: entry[:sp], postcode: entry[sp+1:], state: r.state,
					council: r.council, tier: r.tier, state8: st, idx: int32(len(t.suburbs))})
			}
			for i := lo; i < int32(len(t.suburbs)); i++ {
				t.suburbs[i].row = [2]int32{lo, int32(len(t.suburbs))}
			}
		}
	}
	// A state's suburbs are contiguous: the tables list them state by state.
	for lo := 0; lo < len(t.suburbs); {
		hi := lo
		for hi < len(t.suburbs) && t.suburbs[hi].state == t.suburbs[lo].state {
			hi++
		}
		for i := lo; i < hi; i++ {
			t.suburbs[i].stateRows = [2]int32{int32(lo), int32(hi)}
		}
		lo = hi
	}
	// Popularity follows a hash of the name: stable, and mixed across
	// states and tiers.
	key := func(i int32) uint64 {
		h := fnv.New64a()
		h.Write([]byte(t.suburbs[i].name + "," + t.suburbs[i].state))
		return h.Sum64()
	}
	t.byRank = make([]int32, len(t.suburbs))
	keys := make([]uint64, len(t.suburbs))
	for i := range t.byRank {
		t.byRank[i] = int32(i)
		keys[i] = key(int32(i))
	}
	slices.SortFunc(t.byRank, func(a, b int32) int {
		if keys[a] < keys[b] {
			return -1
		}
		if keys[a] > keys[b] {
			return 1
		}
		return 0
	})
	t.suburbCum = zipfCum(len(t.suburbs), suburbExponent, suburbShift)
	// Country towns: councils of a few suburbs outside the dearest tier.
	for i, s := range t.suburbs {
		if s.row[1]-s.row[0] <= 8 && s.tier >= 2 {
			t.country = append(t.country, int32(i))
		}
	}
}
