package reaxmlgen

import (
	"bytes"
	"math/rand/v2"
)

// A composer runs phrases into text. It is reused from listing to listing:
// its buffers grow to the size of the longest description and no further.
type composer struct {
	rnd   *rand.Rand
	lx    *lexicon
	out   []byte
	state int // index in states of the listing's state
	facts [numFacts][]byte
	arena []byte // backs the facts

	capNext bool // capitalise the next letter written
	article bool // write "a" or "an" before the next word
	// stamps[list.base+i] is epoch when word i of list has been drawn
	// since newText: a list drawn twice in a text gives two different
	// words when it can.
	stamps []uint32
	epoch  uint32
}

// newText starts a text (a headline, a description) with no words drawn.
func (c *composer) newText() {
	c.epoch++
	if c.epoch == 0 { // wrapped: forget every stamp
		clear(c.stamps)
		c.epoch = 1
	}
}

// setFact sets a fact to the concatenation of parts.
func (c *composer) setFact(f fact, parts ...string) {
	start := len(c.arena)
	for _, p := range parts {
		c.arena = append(c.arena, p...)
	}
	c.facts[f] = c.arena[start:len(c.arena):len(c.arena)]
}

// resetFacts forgets the facts of the previous listing.
func (c *composer) resetFacts() {
	c.arena = c.arena[:0]
	for i := range c.facts {
		c.facts[i] = nil
	}
}

func isVowel(b byte) bool {
	switch b | 0x20 {
	case 'a', 'e', 'i', 'o', 'u':
		return true
	}
	return false
}

// takesAn reports whether a word takes "an": by its first letter, with the
// few exceptions the lists contain.
func takesAn[T string | []byte](w T) bool {
	if len(w) == 0 {
		return false
	}
	if len(w) >= 3 && (string(w[:3]) == "uni" || string(w[:3]) == "use" || string(w[:3]) == "one") {
		return false
	}
	if len(w) >= 4 && string(w[:4]) == "hour" {
		return true
	}
	if w[0] >= '0' && w[0] <= '9' {
		return w[0] == '8' || (len(w) >= 2 && w[0] == '1' && (w[1] == '8' || w[1] == '1') && (len(w) == 2 || w[2] < '0' || w[2] > '9'))
	}
	return isVowel(w[0]) || string(w) == "NBN" || (len(w) >= 2 && w[0] == 'E' && w[1] == 'V')
}

func upper(b byte) byte {
	if b >= 'a' && b <= 'z' {
		return b - 0x20
	}
	return b
}

// emit writes text, resolving a pending article and capitalisation.
func emit[T string | []byte](c *composer, s T) {
	if len(s) == 0 {
		return
	}
	if !c.article && !c.capNext {
		if k := repeatedWord(c.out, s); k > 0 {
			s = s[k:]
			if c.out[len(c.out)-1] == ' ' {
				c.out = c.out[:len(c.out)-1] // what follows brings its own space
			}
		}
	}
	if len(s) > 0 && s[0] == ' ' && (len(c.out) == 0 || c.out[len(c.out)-1] == ' ' || c.capNext) {
		s = s[1:] // an empty alternative left two spaces
	}
	if len(s) == 0 {
		return
	}
	if c.article {
		c.article = false
		a := "a "
		if takesAn(s) {
			a = "an "
		}
		if c.capNext {
			a = "A" + a[1:]
			c.capNext = false
		}
		c.out = append(c.out, a...)
	}
	if c.capNext {
		c.capNext = false
		c.out = append(c.out, upper(s[0]))
		s = s[1:]
	}
	c.out = append(c.out, s...)
}

// repeatedWord returns how many bytes of s to leave out so that the word
// out ends with is not written twice: "crazy paving" then " paving", a
// suburb named "Regents Park" then " Park".
func repeatedWord[T string | []byte](out []byte, s T) int {
	end := len(out)
	if end > 0 && out[end-1] == ' ' {
		end--
	}
	start := end
	for start > 0 && out[start-1] != ' ' {
		start--
	}
	last := out[start:end]
	skip := 0
	if len(s) > 0 && s[0] == ' ' {
		skip = 1
	} else if end == len(out) {
		return 0 // the word goes on: "paving" then "s"
	}
	n := skip
	for n < len(s) && s[n] != ' ' && s[n] != ',' && s[n] != '.' {
		n++
	}
	if n-skip != len(last) || len(last) < 2 {
		return 0
	}
	for i := range last {
		if last[i]|0x20 != s[skip+i]|0x20 {
			return 0
		}
	}
	return n
}

// run writes a phrase.
func (c *composer) run(p phrase) {
	for i := range p {
		pt := &p[i]
		switch pt.kind {
		case partText:
			emit(c, pt.text)
		case partList:
			emit(c, c.draw(c.lx.listRefs[pt.arg]))
		case partState:
			emit(c, c.draw(c.lx.stateRefs[pt.arg][c.state]))
		case partFact:
			emit(c, c.facts[pt.arg])
		case partChoice:
			ch := &c.lx.choices[pt.arg]
			c.run(ch.alts[pickIndex(c.rnd, ch.cum)])
		case partArticle:
			c.article = true
		}
	}
}

// draw picks a word from l, avoiding (a few times) one already drawn
// from l in the text.
func (c *composer) draw(l *wordList) string {
	i := pickIndex(c.rnd, l.cum)
	for try := 0; try < 3 && c.stamps[int(l.base)+i] == c.epoch; try++ {
		i = pickIndex(c.rnd, l.cum)
	}
	for n := 0; n < len(l.words) && c.stamps[int(l.base)+i] == c.epoch; n++ {
		i = (i + 1) % len(l.words) // the next one not yet drawn
	}
	c.stamps[int(l.base)+i] = c.epoch
	return l.words[i]
}

// sentence writes one sentence from the pool, starting with a capital,
// and returns its words. It avoids the templates in used (a bit set of
// the pool's first 64) and adds the one it took.
func (c *composer) sentence(p *pool, used *uint64) int {
	k := pickIndex(c.rnd, p.cum)
	for try := 0; try < 4 && k < 64 && *used&(1<<k) != 0; try++ {
		k = pickIndex(c.rnd, p.cum)
	}
	for k < 64 && *used&(1<<k) != 0 && *used != 1<<min(len(p.phrases), 64)-1 {
		k = (k + 1) % min(len(p.phrases), 64) // the next one not yet used
	}
	if k < 64 {
		*used |= 1 << k
	}
	start := len(c.out)
	c.capNext, c.article = true, false
	c.run(p.phrases[k])
	return countWords(c.out[start:])
}

// countWords counts the words of a sentence: the runs of non-space bytes
// with a letter or digit in them. Templates write single spaces, and the
// only token without a letter or digit they write is the "&" of brand
// names.
func countWords(text []byte) int {
	if len(text) == 0 {
		return 0
	}
	return bytes.Count(text, space) + 1 - bytes.Count(text, ampersand)
}

var space, ampersand = []byte(" "), []byte("&")
