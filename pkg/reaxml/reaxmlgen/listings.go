package reaxmlgen

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// home is what body decides about a listing before writing it: the facts
// its headline and description speak of are the ones its elements carry.
type home struct {
	kind, category string
	sub            *suburb
	street         string
	beds, baths    int
	land           int // square metres; hectares for rural
	floor          int // building area in square metres
}

// suburb draws a suburb by popularity.
func (g *gen) suburb() *suburb {
	return &g.t.suburbs[g.t.byRank[pickIndex(g.rnd, g.t.suburbCum)]]
}

// near draws another suburb of sub's council, or of its state when the
// council has no other.
func (g *gen) near(sub *suburb) *suburb {
	r := sub.row
	if r[1]-r[0] < 2 {
		r = sub.stateRows
	}
	n := r[1] - r[0]
	i := r[0] + g.rnd.Int32N(n)
	if i == sub.idx {
		i = r[0] + (i-r[0]+1)%n
	}
	return &g.t.suburbs[i]
}

func (g *gen) street() string {
	return g.c.draw(g.t.street[0]) + " " + g.c.draw(g.t.street[1])
}

var numberWords = [...]string{"no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"}

func numberWord(n int) string {
	if n >= 0 && n < len(numberWords) {
		return numberWords[n]
	}
	return strconv.Itoa(n)
}

// newHome decides a listing's suburb, street, rooms and areas.
func (g *gen) newHome(kind string) home {
	g.c.newText()
	h := home{kind: kind, sub: g.suburb(), street: g.street(), beds: 1 + g.rnd.IntN(5)}
	if kind == "rural" { // farms are in the country
		h.sub = &g.t.suburbs[g.t.country[g.rnd.IntN(len(g.t.country))]]
	}
	h.category = g.pick(residentialCategories)
	if kind == "holidayRental" {
		h.category = g.pick(holidayCategories)
	}
	if h.category == "Studio" {
		h.beds = 1
	}
	if kind == "rural" {
		h.beds = max(h.beds, 2)
	}
	h.baths = 1 + g.rnd.IntN(max(1, h.beds-1))
	switch kind {
	case "rural":
		h.land = 5 + g.rnd.IntN(2000)
	default:
		h.land = 250 + g.rnd.IntN(900)
	}
	h.floor = 60 + 40*h.beds + g.rnd.IntN(80)
	switch kind {
	case "commercial", "business":
		h.floor = 80 + 20*g.rnd.IntN(60)
	case "commercialLand":
		h.floor = h.land // the site is what there is
	}
	return h
}

// setFacts tells the composer what the listing's text may mention.
func (g *gen) setFacts(h *home) {
	c := &g.c
	c.resetFacts()
	c.state = h.sub.state8
	c.setFact(factSuburb, h.sub.name)
	if strings.HasSuffix(h.sub.name, "s") {
		c.setFact(factSuburbs, h.sub.name, "'")
	} else {
		c.setFact(factSuburbs, h.sub.name, "'s")
	}
	near := g.near(h.sub)
	c.setFact(factNear, near.name)
	near2 := g.near(h.sub)
	if near2 == near {
		near2 = g.near(near)
	}
	c.setFact(factNear2, near2.name)
	c.setFact(factStreet, h.street)
	c.setFact(factCouncil, h.sub.council)
	c.setFact(factNoun, c.draw(g.nouns(h)))
	c.setFact(factBeds, numberWord(h.beds))
	c.setFact(factBedn, strconv.Itoa(h.beds))
	c.setFact(factBedrooms, numberWord(h.beds), plural(h.beds, " bedroom", " bedrooms"))
	c.setFact(factBathrooms, numberWord(h.baths), plural(h.baths, " bathroom", " bathrooms"))
	c.setFact(factAgent, g.agents[g.lead].first)
	c.setFact(factSleeps, strconv.Itoa(2*h.beds))
	c.setFact(factHa, strconv.Itoa(h.land))
	c.setFact(factLand, strconv.Itoa(h.land), g.pick(areaUnits))
	c.setFact(factArea, strconv.Itoa(h.floor), g.pick(areaUnits))
	c.setFact(factYears, strconv.Itoa(2+g.rnd.IntN(30)))
	c.setFact(factRates, "$", strconv.Itoa(roundTo(350+float64(g.rnd.IntN(700)), 10)))
}

// nouns is the list the listing's noun comes from: what a home of its
// category is called, or the kinds of farm, commercial property or
// business.
func (g *gen) nouns(h *home) *wordList {
	switch h.kind {
	case "rural":
		return g.t.lx.lists["ruralnoun"]
	case "commercial":
		return g.t.lx.lists["comnoun"]
	case "business":
		return g.t.lx.lists["biztype"]
	case "land", "commercialLand":
		return g.t.lx.lists["landnoun"]
	}
	if l := g.t.homeNouns[h.category]; l != nil {
		return l
	}
	return g.t.homeNouns["House"]
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// areaUnits are the ways agents write square metres.
var areaUnits = []string{"sqm", "m²", "m2", "sqm", " sq m"}

// moneyFact sets a dollar fact: "$84,000".
func (g *gen) moneyFact(f fact, n int) { g.c.setFact(f, "$", thousands(n)) }

// recipeKey is the recipe of a kind of listing.
func recipeKey(h *home) string {
	apt := ""
	switch h.category {
	case "Unit", "Apartment", "Flat", "Studio":
		apt = "Apt"
	}
	switch h.kind {
	case "residential":
		return "sale" + apt
	case "rental":
		return "rent" + apt
	case "holidayRental":
		return "holiday" + apt
	}
	return h.kind
}

// headlineGroup is the headline templates of a kind of listing.
func headlineGroup(kind string) string {
	switch kind {
	case "residential":
		return "home"
	case "rental":
		return "rent"
	case "holidayRental":
		return "holiday"
	case "land", "commercialLand":
		return "land"
	}
	return kind
}

// body writes the elements of a current listing.
func (g *gen) body(kind string, i int) {
	h := g.newHome(kind)
	auction := false
	switch kind {
	case "residential", "land", "rural":
		auction = kind != "land" && g.chance(0.25)
		authority := "exclusive"
		if auction {
			authority = "auction"
		}
		g.raws(`    <authority value="`, authority, "\"/>\n")
		g.raws(`    <underOffer value="`, g.yesNo(g.chance(0.1)), "\"/>\n")
	case "commercial", "commercialLand", "business":
		g.raws(`    <exclusivity value="`, g.pick([]string{"exclusive", "open"}), "\"/>\n")
		g.raws(`    <commercialListingType value="`, g.pick([]string{"sale", "lease", "both"}), "\"/>\n")
		g.raws(`    <underOffer value="`, g.yesNo(g.chance(0.1)), "\"/>\n")
	}
	if kind == "residential" && g.chance(0.15) {
		g.raw("    <newConstruction>yes</newConstruction>\n")
	}
	g.listingAgents()
	g.setFacts(&h)
	g.pricing(&h)
	g.address(&h)
	g.elem("    ", "municipality", h.sub.council)
	g.categories(kind, h.category)
	g.headline(&h)
	g.raw("    <description>")
	text(g, g.describe(g.t.recipes[recipeKey(&h)]))
	g.raw("</description>\n")
	switch kind {
	case "residential", "rental", "holidayRental", "rural":
		g.features(&h)
	}
	if kind == "rental" {
		g.raws("    <allowances>\n      <petFriendly>", g.yesNo(g.chance(0.4)), "</petFriendly>\n      <furnished>",
			g.yesNo(g.chance(0.15)), "</furnished>\n      <smokers>no</smokers>\n    </allowances>\n")
	}
	if kind == "rural" {
		g.raw("    <ruralFeatures>\n      <fencing>Boundary and internal fencing in good condition</fencing>\n")
		g.raw("      <annualRainfall>")
		g.int(400 + g.rnd.IntN(900))
		g.raw(" mm per annum</annualRainfall>\n")
		g.raw("      <services>Power, telephone, school bus</services>\n    </ruralFeatures>\n")
	}
	g.details(&h)
	if kind == "commercial" {
		g.elemInt("    ", "carSpaces", g.rnd.IntN(30))
	}
	if kind == "residential" || kind == "rental" {
		g.inspections()
	}
	if auction {
		at := g.o.Now.AddDate(0, 0, 14+g.rnd.IntN(28))
		at = time.Date(at.Year(), at.Month(), at.Day(), 10+g.rnd.IntN(6), 30*g.rnd.IntN(2), 0, 0, g.o.Location)
		g.raw(`    <auction date="`)
		g.buf = at.AppendFormat(g.buf, "2006-01-02T15:04:05")
		g.raw("\"/>\n")
	}
	if g.chance(0.1) {
		g.raw(`    <videoLink href="https://video.listgate.example/`)
		g.listingID(i)
		g.raw(".mp4\"/>\n")
	}
	g.media(kind, i)
}

// compactBody writes a current listing with few elements (Options.Compact).
func (g *gen) compactBody(kind string, i int) {
	h := g.newHome(kind)
	g.lead = g.rnd.IntN(len(g.agents))
	a := g.agents[g.lead]
	g.raw(`    <listingAgent id="1"><name>`)
	text(g, a.name)
	g.raw("</name><email>")
	text(g, a.email)
	g.raw("</email></listingAgent>\n")
	if isRentalKind(kind) {
		g.raw(`    <rent period="week">`)
		g.int(g.revised(roundTo(weeklyRentBase[h.sub.tier]*(0.6+0.2*float64(h.beds)), 10), 10))
		g.raw("</rent>\n")
	} else {
		g.raw(`    <price display="yes">`)
		g.int(g.salePrice(kind, h.sub, h.beds))
		g.raw("</price>\n")
	}
	g.raw(`    <address display="yes"><streetNumber>`)
	g.int(1 + g.rnd.IntN(250))
	g.raw("</streetNumber><street>")
	text(g, h.street)
	g.raw("</street><suburb>")
	text(g, h.sub.name)
	g.raws("</suburb><state>", h.sub.state, "</state><postcode>", h.sub.postcode, "</postcode></address>\n")
	g.setFacts(&h)
	g.headline(&h)
	g.raw("    <features><bedrooms>")
	g.int(h.beds)
	g.raw("</bedrooms><bathrooms>")
	g.int(1 + g.rnd.IntN(2))
	g.raw("</bathrooms></features>\n")
	g.raw(`    <images><img id="m" url="https://media.listgate.example/`)
	text(g, g.o.AgencyID)
	g.buf = append(g.buf, '/')
	g.listingID(i)
	g.raw("/m.jpg\"/></images>\n")
}

func (g *gen) listingAgents() {
	n := min(1+g.rnd.IntN(3), len(g.agents))
	first := g.rnd.IntN(len(g.agents))
	g.lead = first
	for k := range n {
		a := g.agents[(first+k)%len(g.agents)]
		g.raw(`    <listingAgent id="`)
		g.int(k + 1)
		g.raw("\">\n")
		g.elem("      ", "name", a.name)
		g.raws(`      <telephone type="mobile">`, a.mobile, "</telephone>\n")
		g.raws(`      <telephone type="BH">`, a.office, "</telephone>\n")
		g.elem("      ", "email", a.email)
		g.raw("    </listingAgent>\n")
	}
}

var saleBase = [5]float64{0, 2_400_000, 1_300_000, 800_000, 520_000}
var weeklyRentBase = [5]float64{0, 1100, 750, 560, 430}

func roundTo(v float64, step int) int { return int(math.Round(v/float64(step))) * step }

func (g *gen) salePrice(kind string, sub *suburb, beds int) int {
	v := saleBase[sub.tier] * (0.8 + 0.4*g.rnd.Float64())
	switch kind {
	case "land", "commercialLand":
		v *= 0.45
	case "rural":
		v *= 1.4
	case "commercial":
		v *= 1.1
	case "business":
		v = 80_000 + 820_000*g.rnd.Float64()
	default:
		v *= 0.55 + 0.18*float64(beds)
	}
	return g.revised(roundTo(v, 5000), 5000)
}

func thousands(n int) string {
	s := strconv.Itoa(n)
	if len(s) <= 3 {
		return s
	}
	b := make([]byte, 0, len(s)+len(s)/3)
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			b = append(b, ',')
		}
		b = append(b, s[i])
	}
	return string(b)
}
