// Package reaxmlgen writes realistic, deterministic REAXML feeds for demo
// data, load tests and benchmarks.
//
// The text is realistic enough that a full-text search costs on it what it
// costs on real listings: headlines and descriptions are composed from
// sentence templates whose words are drawn with Zipf weights from a
// vocabulary of some thousands of real-estate and everyday words (rooms,
// materials, brands, styles, plants, schools, landmarks), so that common
// words appear in most listings and a long tail of rare words in few.
// Descriptions run from 80 to 250 words in 3 to 8 paragraphs. Listings are
// spread over some 2,700 real Australian suburbs (with their state,
// postcode and council) with Zipf weights: a few suburbs have many
// listings, most have few.
//
// The same Options always produce the same bytes. Output streams through a
// small buffer: memory does not grow with the number of listings. Every
// feed it writes parses without a listing error with package reaxml.
package reaxmlgen

import (
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
)

// Options configures Generate. The zero value writes an empty feed; set
// Listings.
type Options struct {
	// Seed makes the output deterministic; different seeds give different
	// feeds.
	Seed uint64
	// Listings is how many listing elements to write; 0 or less writes an
	// empty propertyList.
	Listings int
	// AgencyID is the agentID of every listing. Default "LGDEMO".
	AgencyID string
	// Agents is the size of the agency's agent pool, of which each listing
	// names 1–3. Default 8.
	Agents int
	// Now is the reference time: modTimes lie in the 30 days before it,
	// inspections in the two weeks after it. Zero means 2025-03-01 10:00 in
	// Location, so that output does not depend on the clock.
	Now time.Time
	// Location is the time zone local times are written in. Nil means
	// Australia/Sydney (UTC if the zone database is missing).
	Location *time.Location
	// Compact writes lean listings (one agent, one image, a headline, no
	// description, bedrooms and bathrooms only), about a sixth of the
	// usual size, for load and memory tests that need many listings fast.
	// Kinds and statuses keep the same mix.
	Compact bool
	// Username and Password, when set, are written as propertyList
	// attributes, as real feeds do; empty means the attributes are left out.
	Username, Password string
	// Revision and Changed make an update of the feed of the same Seed:
	// with Revision above 0, a Changed fraction of the listings (picked by
	// Seed and Revision, independently of the random draws) is written with
	// a modTime Revision hours later and its price or rent 3% lower per
	// revision; every other listing is written exactly as in revision 0.
	Revision int
	Changed  float64
}

func (o Options) withDefaults() Options {
	if o.AgencyID == "" {
		o.AgencyID = "LGDEMO"
	}
	if o.Agents <= 0 {
		o.Agents = 8
	}
	if o.Location == nil {
		o.Location = time.UTC
		if loc, err := time.LoadLocation("Australia/Sydney"); err == nil {
			o.Location = loc
		}
	}
	if o.Now.IsZero() {
		o.Now = time.Date(2025, time.March, 1, 10, 0, 0, 0, o.Location)
	}
	o.Now = o.Now.In(o.Location)
	return o
}

// Generate writes a REAXML feed to w. It returns the first write error.
// It is safe to call concurrently with different writers.
func Generate(w io.Writer, opts Options) error {
	opts = opts.withDefaults()
	g := &gen{
		o:   opts,
		rnd: rand.New(rand.NewPCG(opts.Seed, opts.Seed^0x9e3779b97f4a7c15)),
		w:   w,
		buf: make([]byte, 0, flushAt+16<<10),
		t:   loadTables(),
	}
	g.c.rnd = g.rnd
	g.c.lx = &g.t.lx
	g.c.stamps = make([]uint32, g.t.words)
	g.agents = g.makeAgents(opts.Agents)
	g.header()
	for i := range max(opts.Listings, 0) {
		g.listing(i)
		if len(g.buf) >= flushAt {
			g.flush()
		}
		if g.werr != nil {
			return g.werr
		}
	}
	g.raw("</propertyList>\n")
	g.flush()
	return g.werr
}

// flushAt is the size at which the output buffer is written out.
const flushAt = 64 << 10

type agent struct {
	first, name, email, mobile, office string
}

type gen struct {
	o      Options
	rnd    *rand.Rand
	w      io.Writer
	buf    []byte // output not yet written
	werr   error
	t      *tables
	agents []agent

	// Per listing, reused.
	c      composer
	sents  []sentence
	breaks []bool
	desc   []byte
	lead   int // index in agents of the first listing agent
	// changing is whether the listing being written is one Revision
	// changes.
	changing bool
}

func (g *gen) flush() {
	if g.werr == nil && len(g.buf) > 0 {
		_, g.werr = g.w.Write(g.buf)
	}
	g.buf = g.buf[:0]
}

func (g *gen) raw(s string) { g.buf = append(g.buf, s...) }

// raws writes the concatenation of parts.
func (g *gen) raws(parts ...string) {
	for _, s := range parts {
		g.buf = append(g.buf, s...)
	}
}

func (g *gen) int(n int) { g.buf = strconv.AppendInt(g.buf, int64(n), 10) }

func (g *gen) printf(format string, args ...any) { g.buf = fmt.Appendf(g.buf, format, args...) }

// escapes are the XML escapes of the bytes that need one.
var escapes = [256]string{'&': "&amp;", '<': "&lt;", '>': "&gt;", '"': "&quot;", '\'': "&apos;"}

// text writes s escaped for XML text or an attribute value.
func text[T string | []byte](g *gen, s T) {
	last := 0
	for i := 0; i < len(s); i++ {
		if rep := escapes[s[i]]; rep != "" {
			g.buf = append(g.buf, s[last:i]...)
			g.buf = append(g.buf, rep...)
			last = i + 1
		}
	}
	g.buf = append(g.buf, s[last:]...)
}

// elem writes <name>text</name> with text escaped, on a line of its own.
func (g *gen) elem(indent, name, s string) {
	g.raw(indent)
	g.open(name)
	text(g, s)
	g.close(name)
	g.raw("\n")
}

// elemInt writes <name>n</name> on a line of its own.
func (g *gen) elemInt(indent, name string, n int) {
	g.raw(indent)
	g.open(name)
	g.int(n)
	g.close(name)
	g.raw("\n")
}

func (g *gen) open(name string) {
	g.buf = append(g.buf, '<')
	g.buf = append(g.buf, name...)
	g.buf = append(g.buf, '>')
}

func (g *gen) close(name string) {
	g.buf = append(g.buf, "</"...)
	g.buf = append(g.buf, name...)
	g.buf = append(g.buf, '>')
}

func esc(s string) string {
	g := gen{}
	text(&g, s)
	return string(g.buf)
}

func (g *gen) header() {
	g.raw(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	g.raw(`<!DOCTYPE propertyList SYSTEM "http://reaxml.realestate.com.au/propertyList.dtd">` + "\n")
	g.printf(`<propertyList date="%s"`, feedTime(g.o.Now))
	if g.o.Username != "" {
		g.printf(` username="%s"`, esc(g.o.Username))
	}
	if g.o.Password != "" {
		g.printf(` password="%s"`, esc(g.o.Password))
	}
	g.raw(">\n")
}

func feedTime(t time.Time) string { return t.Format(feedTimeLayout) }

const feedTimeLayout = "2006-01-02-15:04:05"

// appendFeedTime appends t as feedTime does, faster.
func appendFeedTime(b []byte, t time.Time) []byte {
	y, mo, d := t.Date()
	h, mi, s := t.Clock()
	b = appendDigits(b, y, 4)
	b = append(b, '-')
	b = appendDigits(b, int(mo), 2)
	b = append(b, '-')
	b = appendDigits(b, d, 2)
	b = append(b, '-')
	b = appendDigits(b, h, 2)
	b = append(b, ':')
	b = appendDigits(b, mi, 2)
	b = append(b, ':')
	return appendDigits(b, s, 2)
}

// appendDigits appends n (0 <= n < 10^width) zero-padded to width digits.
func appendDigits(b []byte, n, width int) []byte {
	for d := 1; d < width; d++ {
		b = append(b, '0')
	}
	i := len(b)
	b = append(b, '0')
	for k := i; n > 0 && k >= i-width+1; k-- {
		b[k] = byte('0' + n%10)
		n /= 10
	}
	return b
}

func (g *gen) pick(list []string) string { return list[g.rnd.IntN(len(list))] }

func (g *gen) chance(p float64) bool { return g.rnd.Float64() < p }

func (g *gen) yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func (g *gen) makeAgents(n int) []agent {
	out := make([]agent, n)
	for i := range out {
		first, last := g.pick(firstNames), g.pick(lastNames)
		local := strings.ToLower(first + "." + strings.NewReplacer("'", "", " ", "").Replace(last))
		out[i] = agent{
			first:  first,
			name:   first + " " + last,
			email:  fmt.Sprintf("%s%d@agency.example", local, i+1),
			mobile: fmt.Sprintf("04%02d %03d %03d", g.rnd.IntN(100), g.rnd.IntN(1000), g.rnd.IntN(1000)),
			office: fmt.Sprintf("(0%d) %04d %04d", 2+g.rnd.IntN(7), g.rnd.IntN(10000), g.rnd.IntN(10000)),
		}
	}
	return out
}

// kindWeights is the mix of listing elements; every one appears in a feed
// of a few hundred listings.
var kindWeights = []struct {
	kind   string
	weight int
}{
	{"residential", 44}, {"rental", 24}, {"land", 7}, {"holidayRental", 5},
	{"rural", 5}, {"commercial", 7}, {"commercialLand", 3}, {"business", 5},
}

func (g *gen) kind() string {
	n := g.rnd.IntN(100)
	for _, kw := range kindWeights {
		if n < kw.weight {
			return kw.kind
		}
		n -= kw.weight
	}
	return "residential"
}

func isRentalKind(kind string) bool { return kind == "rental" || kind == "holidayRental" }

// status is mostly current; some sold or leased, withdrawn, offmarket and a
// few deleted.
func (g *gen) status(kind string) string {
	n := g.rnd.IntN(100)
	switch {
	case n < 78:
		return "current"
	case n < 88:
		if isRentalKind(kind) {
			return "leased"
		}
		return "sold"
	case n < 94:
		return "withdrawn"
	case n < 98:
		return "offmarket"
	}
	return "deleted"
}

func (g *gen) listing(i int) {
	kind := g.kind()
	status := g.status(kind)
	mod := g.o.Now.Add(-time.Duration(g.rnd.IntN(30*24*60)) * time.Minute)
	g.changing = g.o.Revision > 0 && changed(g.o.Seed, g.o.Revision, i, g.o.Changed)
	if g.changing {
		mod = mod.Add(time.Duration(g.o.Revision) * time.Hour)
	}
	g.raw("  <")
	g.raw(kind)
	g.raw(` modTime="`)
	g.buf = appendFeedTime(g.buf, mod)
	g.raw(`" status="`)
	g.raw(status)
	g.raw("\">\n")
	g.elem("    ", "agentID", g.o.AgencyID)
	g.uniqueID("    ", i)
	switch status {
	case "current":
		if g.o.Compact {
			g.compactBody(kind, i)
		} else {
			g.body(kind, i)
		}
	case "sold":
		g.soldDetails(kind, mod)
	}
	g.raw("  </")
	g.raw(kind)
	g.raw(">\n")
}

// changed reports whether listing i is among the fraction revision
// changes: a hash of the seed, the revision and i, so that the random
// draws of the listings stay those of revision 0.
func changed(seed uint64, revision, i int, fraction float64) bool {
	h := seed ^ uint64(revision)*0x9e3779b97f4a7c15 ^ uint64(i)*0xbf58476d1ce4e5b9
	h ^= h >> 31
	h *= 0x94d049bb133111eb
	h ^= h >> 29
	return float64(h>>11)/(1<<53) < fraction
}

// revised lowers a price for each revision of a changing listing.
func (g *gen) revised(v int, step int) int {
	if !g.changing {
		return v
	}
	for range g.o.Revision {
		v = roundTo(float64(v)*0.97, step)
	}
	return v
}

// uniqueID writes the uniqueID element of listing i: AGENCY-000001.
func (g *gen) uniqueID(indent string, i int) {
	g.raw(indent)
	g.raw("<uniqueID>")
	g.listingID(i)
	g.raw("</uniqueID>\n")
}

// listingID writes the escaped uniqueID of listing i.
func (g *gen) listingID(i int) {
	text(g, g.o.AgencyID)
	g.buf = append(g.buf, '-')
	n := i + 1
	for d := 100000; d > 1; d /= 10 {
		if n < d {
			g.buf = append(g.buf, '0')
		}
	}
	g.int(n)
}

func (g *gen) soldDetails(kind string, mod time.Time) {
	sub := g.suburb()
	price := g.salePrice(kind, sub, 3)
	g.raw("    <soldDetails>\n")
	g.raw(`      <price display="`)
	g.raw(g.yesNo(g.chance(0.7)))
	g.raw(`">`)
	g.int(price)
	g.raw("</price>\n      <date>")
	g.buf = mod.Add(-time.Duration(g.rnd.IntN(14*24))*time.Hour).AppendFormat(g.buf, "2006-01-02")
	g.raw("</date>\n    </soldDetails>\n")
}
