package reaxmlgen

// Description lengths, in words. Real REAXML descriptions run from about
// 80 to 250 words in 3 to 8 paragraphs.
const (
	minWords      = 80
	maxWords      = 250
	minParagraphs = 3
	maxParagraphs = 8
	maxSteps      = 10 // the most steps a recipe has
)

// sentence is one sentence of a description being written, in the
// composer's buffer.
type sentence struct {
	start, end int32
	step       uint8
	words      uint16
}

// bulletStep marks the feature list, which is a paragraph of its own.
const bulletStep = 255

// describe writes a description by recipe r into g.desc: sentences drawn
// topic by topic until the listing's target length, grouped into
// paragraphs.
func (g *gen) describe(r *recipe) []byte {
	c := &g.c
	c.out = c.out[:0]
	c.newText()
	g.sents = g.sents[:0]
	// A triangular spread of lengths, most near the middle.
	target := minWords + g.rnd.IntN((maxWords-minWords)/2) + g.rnd.IntN((maxWords-minWords)/2)
	var counts [maxSteps]int
	var used [maxSteps]uint64
	words := 0
	add := func(si int) {
		start := len(c.out)
		n := c.sentence(r.steps[si].pool, &used[si])
		g.sents = append(g.sents, sentence{start: int32(start), end: int32(len(c.out)), step: uint8(si), words: uint16(n)})
		counts[si]++
		words += n
	}
	for si, st := range r.steps {
		for counts[si] < st.min {
			add(si)
		}
	}
	if r.bullets != nil && g.chance(0.3) {
		words += g.bulletList(r.bullets)
	}
	last := len(r.steps) - 1
	for words < target {
		// A random topic with room for another sentence; the closing
		// takes more only when the others are full.
		var open [maxSteps]int
		n := 0
		for si, st := range r.steps[:last] {
			if counts[si] < st.max {
				open[n] = si
				n++
			}
		}
		si := last
		if n > 0 {
			si = open[g.rnd.IntN(n)]
		} else if counts[last] >= r.steps[last].max {
			break
		}
		mark, sentsMark := len(c.out), len(g.sents)
		add(si)
		if words > maxWords {
			words -= int(g.sents[sentsMark].words)
			counts[si]--
			c.out, g.sents = c.out[:mark], g.sents[:sentsMark]
			break
		}
	}
	// Long required sentences can overshoot: drop the latest sentences a
	// topic can do without. (Their bytes stay in c.out, unreferenced.)
	for j := len(g.sents) - 1; words > maxWords && j >= 0; j-- {
		si := g.sents[j].step
		if si != bulletStep && counts[si] <= r.steps[si].min {
			continue
		}
		if si != bulletStep {
			counts[si]--
		}
		words -= int(g.sents[j].words)
		g.sents = append(g.sents[:j], g.sents[j+1:]...)
	}
	g.paragraphs(words)
	return g.desc
}

// bulletList writes a feature list ("Features include:" and 3 to 7 items
// on lines of their own) as one sentence record and returns its words.
func (g *gen) bulletList(items *pool) int {
	c := &g.c
	start := len(c.out)
	var used, headUsed uint64
	words := c.sentence(g.t.bulletHead, &headUsed)
	for range 3 + g.rnd.IntN(5) {
		c.out = append(c.out, "\n- "...)
		words += c.sentence(items, &used)
	}
	g.sents = append(g.sents, sentence{start: int32(start), end: int32(len(c.out)), step: bulletStep, words: uint16(words)})
	return words
}

// paragraphs writes the sentences to g.desc in topic order, a paragraph a
// topic, then merges or splits paragraphs to a count that suits the
// length.
func (g *gen) paragraphs(words int) {
	// Sentences in topic order (a stable insertion sort: few and short).
	s := g.sents
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j-1].step > s[j].step; j-- {
			s[j-1], s[j] = s[j], s[j-1]
		}
	}
	// The feature list goes before the closing topic.
	if n := len(s); n > 1 && s[n-1].step == bulletStep {
		b := s[n-1]
		k := n - 1
		for k > 0 && s[k-1].step == s[n-2].step {
			k--
		}
		copy(s[k+1:], s[k:n-1])
		s[k] = b
	}
	// Paragraph boundaries: breaks[i] is true when sentence i starts one.
	g.breaks = g.breaks[:0]
	paras := 0
	for i := range s {
		b := i == 0 || s[i].step != s[i-1].step || s[i].step == bulletStep
		g.breaks = append(g.breaks, b)
		if b {
			paras++
		}
	}
	want := min(maxParagraphs, max(minParagraphs, (words+20)/32+g.rnd.IntN(3)-1))
	for paras > want && g.mergeParagraph() {
		paras--
	}
	for paras < want && g.splitParagraph() {
		paras++
	}
	out := g.desc[:0]
	for i, st := range s {
		if i > 0 {
			if g.breaks[i] || st.step == bulletStep || s[i-1].step == bulletStep {
				out = append(out, "\n\n"...)
			} else {
				out = append(out, ' ')
			}
		}
		out = append(out, g.c.out[st.start:st.end]...)
	}
	g.desc = out
}

// mergeParagraph joins the shortest pair of neighbouring prose paragraphs
// and reports whether there was one.
func (g *gen) mergeParagraph() bool {
	best, bestLen := -1, 1<<30
	for i := 1; i < len(g.sents); i++ {
		if !g.breaks[i] || g.sents[i].step == bulletStep || g.sents[i-1].step == bulletStep {
			continue
		}
		// Sentences in the paragraph before i and the one at i.
		n := 1
		for j := i - 1; j > 0 && !g.breaks[j]; j-- {
			n++
		}
		for j := i + 1; j < len(g.sents) && !g.breaks[j]; j++ {
			n++
		}
		if n < bestLen {
			best, bestLen = i, n
		}
	}
	if best < 0 {
		return false
	}
	g.breaks[best] = false
	return true
}

// splitParagraph breaks the longest prose paragraph of two or more
// sentences in the middle and reports whether there was one.
func (g *gen) splitParagraph() bool {
	best, bestLen := -1, 1
	for i := 0; i < len(g.sents); {
		j := i + 1
		for j < len(g.sents) && !g.breaks[j] {
			j++
		}
		if n := j - i; n > bestLen && g.sents[i].step != bulletStep {
			best, bestLen = i, n
		}
		i = j
	}
	if best < 0 {
		return false
	}
	g.breaks[best+bestLen/2] = true
	return true
}
