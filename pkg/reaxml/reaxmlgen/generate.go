// Package reaxmlgen writes realistic, deterministic REAXML feeds for demo
// data, load tests and benchmarks.
//
// The same Options always produce the same bytes. Output streams through a
// small buffer: memory does not grow with the number of listings. Every
// feed it writes parses without a listing error with package reaxml.
package reaxmlgen

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
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
		w:   bufio.NewWriterSize(w, 64<<10),
	}
	g.agents = g.makeAgents(opts.Agents)
	g.header()
	for i := range max(opts.Listings, 0) {
		g.listing(i)
		if g.err() != nil {
			return g.err()
		}
	}
	g.raw("</propertyList>\n")
	return g.w.Flush()
}

type agent struct {
	name, email, mobile, office string
}

type gen struct {
	o      Options
	rnd    *rand.Rand
	w      *bufio.Writer
	agents []agent
	werr   error
}

func (g *gen) err() error {
	if g.werr != nil {
		return g.werr
	}
	// bufio.Writer keeps its first error; a zero-length write reports it.
	_, g.werr = g.w.Write(nil)
	return g.werr
}

func (g *gen) raw(s string) { g.w.WriteString(s) }

func (g *gen) printf(format string, args ...any) { fmt.Fprintf(g.w, format, args...) }

// elem writes <name>text</name> with text escaped.
func (g *gen) elem(indent, name, text string) {
	g.printf("%s<%s>%s</%s>\n", indent, name, esc(text), name)
}

var escaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&apos;")

func esc(s string) string { return escaper.Replace(s) }

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

func feedTime(t time.Time) string { return t.Format("2006-01-02-15:04:05") }

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
	g.printf("  <%s modTime=\"%s\" status=\"%s\">\n", kind, feedTime(mod), status)
	g.elem("    ", "agentID", g.o.AgencyID)
	g.elem("    ", "uniqueID", fmt.Sprintf("%s-%06d", g.o.AgencyID, i+1))
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
	g.printf("  </%s>\n", kind)
}

func (g *gen) soldDetails(kind string, mod time.Time) {
	sub := suburbs[g.rnd.IntN(len(suburbs))]
	price := g.salePrice(kind, sub, 3)
	g.raw("    <soldDetails>\n")
	g.printf("      <price display=\"%s\">%d</price>\n", g.yesNo(g.chance(0.7)), price)
	g.elem("      ", "date", mod.Add(-time.Duration(g.rnd.IntN(14*24))*time.Hour).Format("2006-01-02"))
	g.raw("    </soldDetails>\n")
}
