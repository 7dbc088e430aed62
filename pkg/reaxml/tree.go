package reaxml

import (
	"encoding/xml"
	"slices"
	"strings"
)

// Limits on one listing element, so a hostile feed cannot make the decoder
// hold an unbounded tree. A listing over a limit is skipped with ErrTooLarge.
const (
	maxDepth = 64
	maxNodes = 100_000
)

// node is one element of the listing being read. The decoder builds the
// tree of a single listing element at a time and drops it after mapping.
type node struct {
	name  string
	attrs []xml.Attr
	text  []byte // the element's own character data
	kids  []*node
	at    int // offset in the parent's text where this element starts
	line  int

	tooLarge bool // set on a listing root whose tree was cut at the limits
}

// attr returns the trimmed value of the attribute with the given local name.
func (n *node) attr(name string) (string, bool) {
	for _, a := range n.attrs {
		if a.Name.Local == name {
			return strings.TrimSpace(a.Value), true
		}
	}
	return "", false
}

// attrFold is attr with a case-insensitive name.
func (n *node) attrFold(name string) (string, bool) {
	for _, a := range n.attrs {
		if strings.EqualFold(a.Name.Local, name) {
			return strings.TrimSpace(a.Value), true
		}
	}
	return "", false
}

// ownText is the element's own character data, trimmed.
func (n *node) ownText() string { return strings.TrimSpace(string(n.text)) }

// fullText is all character data inside the element in document order,
// trimmed; a <br> inside mixed content becomes a line break.
func (n *node) fullText() string {
	if len(n.kids) == 0 {
		return n.ownText()
	}
	var b strings.Builder
	n.writeText(&b)
	return strings.TrimSpace(b.String())
}

func (n *node) writeText(b *strings.Builder) {
	pos := 0
	for _, k := range n.kids {
		if k.at >= pos && k.at <= len(n.text) {
			b.Write(n.text[pos:k.at])
			pos = k.at
		}
		if strings.EqualFold(k.name, "br") {
			b.WriteByte('\n')
		}
		k.writeText(b)
	}
	b.Write(n.text[pos:])
}

// element converts n to an exported Element named name.
func (n *node) element(name string) Element {
	e := Element{Name: name, Text: n.ownText()}
	if len(n.attrs) > 0 {
		e.Attrs = make(map[string]string, len(n.attrs))
		for _, a := range n.attrs {
			e.Attrs[a.Name.Local] = a.Value
		}
	}
	for _, k := range n.kids {
		e.Children = append(e.Children, k.element(k.name))
	}
	return e
}

// treeBuilder reads the rest of one element from the token stream.
type treeBuilder struct {
	pool     *nodePool
	stack    []*node
	nodes    int
	skipping int // open elements beyond the limits
	tooLarge bool
}

// nodePool hands out nodes for one listing at a time. Nodes live in
// fixed-size chunks so pointers stay valid; reset makes them reusable for
// the next listing, keeping their kids and text capacity. Nothing built
// from a node (strings, Elements) shares its memory.
type nodePool struct {
	chunks [][]node
	used   int
}

const (
	poolChunk     = 256
	maxPoolChunks = 64 // keep at most 16,384 nodes between listings
)

func (p *nodePool) reset() {
	p.used = 0
	if len(p.chunks) > maxPoolChunks {
		clear(p.chunks[maxPoolChunks:])
		p.chunks = p.chunks[:maxPoolChunks]
	}
}

// node returns a cleared node for start.
func (p *nodePool) node(t xml.StartElement, line int) *node {
	ci, i := p.used/poolChunk, p.used%poolChunk
	if ci == len(p.chunks) {
		p.chunks = append(p.chunks, make([]node, poolChunk))
	}
	p.used++
	n := &p.chunks[ci][i]
	*n = node{name: t.Name.Local, line: line, kids: n.kids[:0], text: n.text[:0], attrs: t.Attr}
	// The tokenizer allocates a fresh Attr slice per start element, so it
	// can be kept; namespace declarations are dropped in place.
	if slices.ContainsFunc(n.attrs, isXMLNS) {
		n.attrs = slices.DeleteFunc(slices.Clone(n.attrs), isXMLNS)
	}
	return n
}

// get returns a cleared node named name, for the fast path.
func (p *nodePool) get(name string, line int) *node {
	ci, i := p.used/poolChunk, p.used%poolChunk
	if ci == len(p.chunks) {
		p.chunks = append(p.chunks, make([]node, poolChunk))
	}
	p.used++
	n := &p.chunks[ci][i]
	*n = node{name: name, line: line, kids: n.kids[:0], text: n.text[:0], attrs: n.attrs[:0]}
	return n
}

func isXMLNS(a xml.Attr) bool { return a.Name.Space == "xmlns" || a.Name.Local == "xmlns" }

// add applies one token. It reports false once the root element has ended.
func (tb *treeBuilder) add(tok xml.Token, line int) bool {
	top := tb.stack[len(tb.stack)-1]
	switch t := tok.(type) {
	case xml.StartElement:
		if tb.skipping > 0 || len(tb.stack) >= maxDepth || tb.nodes >= maxNodes {
			tb.skipping++
			tb.tooLarge = true
			return true
		}
		n := tb.pool.node(t, line)
		n.at = len(top.text)
		top.kids = append(top.kids, n)
		tb.stack = append(tb.stack, n)
		tb.nodes++
	case xml.EndElement:
		if tb.skipping > 0 {
			tb.skipping--
			return true
		}
		tb.stack = tb.stack[:len(tb.stack)-1]
	case xml.CharData:
		if tb.skipping == 0 {
			top.text = append(top.text, t...)
		}
	}
	return len(tb.stack) > 0
}
