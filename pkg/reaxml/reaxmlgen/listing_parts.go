package reaxmlgen

import (
	"strings"
	"time"
)

func (g *gen) pricing(h *home) {
	sub := h.sub
	switch h.kind {
	case "rental":
		week := g.revised(roundTo(weeklyRentBase[sub.tier]*(0.6+0.2*float64(h.beds))*(0.9+0.2*g.rnd.Float64()), 10), 10)
		g.raw("    <dateAvailable>")
		g.buf = g.o.Now.AddDate(0, 0, g.rnd.IntN(30)).AppendFormat(g.buf, "2006-01-02")
		g.raw("</dateAvailable>\n")
		g.raw(`    <rent period="week" display="yes">`)
		g.int(week)
		g.raw("</rent>\n")
		if g.chance(0.3) {
			g.raw(`    <rent period="month" display="yes">`)
			g.int(roundTo(float64(week)*52/12, 1))
			g.raw("</rent>\n")
		}
		g.elemInt("    ", "bond", week*4)
		return
	case "holidayRental":
		night := 120 + 120*(5-sub.tier) + 10*g.rnd.IntN(10)
		g.raw(`    <rent period="night">`)
		g.int(night)
		g.raw("</rent>\n")
		g.raw("    <rent period=\"week\">\n      <range>\n        <min>")
		g.int(night * 6)
		g.raw("</min>\n        <max>")
		g.int(night * 9)
		g.raw("</max>\n      </range>\n    </rent>\n")
		return
	}
	price := g.salePrice(h.kind, sub, h.beds)
	display := !g.chance(0.1)
	g.raws(`    <price display="`, g.yesNo(display), `">`)
	g.int(price)
	g.raw("</price>\n")
	view := "Contact agent"
	if display {
		view = "Offers over $" + thousands(price)
	}
	g.elem("    ", "priceView", view)
	switch h.kind {
	case "commercial", "commercialLand":
		rent, outgoings := roundTo(float64(price)*0.06, 100), roundTo(float64(price)*0.01, 100)
		g.raws(`    <commercialRent period="annual" plusOutgoings="`, g.yesNo(g.chance(0.5)), `">`)
		g.int(rent)
		g.raw("</commercialRent>\n")
		g.raw(`    <outgoings period="annual">`)
		g.int(outgoings)
		g.raw("</outgoings>\n")
		g.moneyFact(factIncome, rent)
		g.moneyFact(factOutgoings, outgoings)
	case "business":
		takings := roundTo(float64(price)*(1+g.rnd.Float64()), 1000)
		lease := roundTo(2000+6000*g.rnd.Float64(), 50)
		g.elemInt("    ", "takings", takings)
		g.printf("    <return period=\"annual\" unit=\"percent\">%.1f</return>\n", 8+8*g.rnd.Float64())
		g.raw(`    <businessLease period="month">`)
		g.int(lease)
		g.raw("</businessLease>\n")
		g.moneyFact(factTakings, roundTo(float64(takings)/52, 50))
		g.moneyFact(factBizRent, lease)
	}
}

func (g *gen) address(h *home) {
	g.raws(`    <address display="`, g.yesNo(!g.chance(0.08)), "\">\n")
	if h.kind == "land" || h.kind == "commercialLand" {
		g.elemInt("      ", "lotNumber", 1+g.rnd.IntN(400))
	} else if h.kind == "rental" && g.chance(0.4) {
		g.elemInt("      ", "subNumber", 1+g.rnd.IntN(40))
	}
	g.elemInt("      ", "streetNumber", 1+g.rnd.IntN(250))
	g.elem("      ", "street", h.street)
	g.raw(`      <suburb display="yes">`)
	text(g, h.sub.name)
	g.raw("</suburb>\n")
	g.elem("      ", "state", h.sub.state)
	g.elem("      ", "postcode", h.sub.postcode)
	g.raw("      <country>AUS</country>\n    </address>\n")
}

func (g *gen) categories(kind, category string) {
	switch kind {
	case "residential", "rental":
		g.raws(`    <category name="`, category, "\"/>\n")
	case "commercial", "commercialLand":
		for k := range 1 + g.rnd.IntN(2) {
			g.raw(`    <commercialCategory id="`)
			g.int(k + 1)
			g.raw(`" name="`)
			text(g, g.pick(commercialCategories))
			g.raw("\"/>\n")
		}
	case "business":
		c := businessCategories[g.rnd.IntN(len(businessCategories))]
		g.raw("    <businessCategory id=\"1\">\n      <name>")
		text(g, c[0])
		g.raw("</name>\n      <businessSubCategory>\n        <name>")
		text(g, c[1])
		g.raw("</name>\n      </businessSubCategory>\n    </businessCategory>\n")
	case "rural":
		g.raws(`    <ruralCategory name="`, g.pick(ruralCategories), "\"/>\n")
	case "land":
		g.raws(`    <landCategory name="`, g.pick(landCategories), "\"/>\n")
	case "holidayRental":
		g.raws(`    <holidayCategory name="`, category, "\"/>\n")
	}
}

// headline writes the headline element: a template in title case, now and
// then in capitals or with an exclamation mark.
func (g *gen) headline(h *home) {
	c := &g.c
	c.out = c.out[:0]
	c.newText()
	var used uint64
	c.sentence(g.t.headlines[headlineGroup(h.kind)], &used)
	titleCase(c.out)
	switch n := g.rnd.IntN(100); {
	case n < 7:
		shout(c.out)
	case n < 12:
		c.out = append(c.out, '!')
	}
	g.raw("    <headline>")
	text(g, c.out)
	g.raw("</headline>\n")
}

// smallWords stay in lower case inside a title.
var smallWords = []string{"a", "an", "and", "the", "of", "in", "on", "to", "with", "for", "at", "by", "from", "or", "near"}

// titleCase capitalises the words of b (ASCII letters), except small words
// after the first.
func titleCase(b []byte) {
	for i := 0; i < len(b); i++ {
		if i > 0 && b[i-1] != ' ' && b[i-1] != '-' && b[i-1] != '(' {
			continue
		}
		if i > 0 && b[i-1] == ' ' {
			end := i
			for end < len(b) && b[end] >= 'a' && b[end] <= 'z' {
				end++
			}
			if (end == len(b) || b[end] == ' ') && isSmallWord(b[i:end]) {
				continue
			}
		}
		b[i] = upper(b[i])
	}
}

func isSmallWord(w []byte) bool {
	for _, s := range smallWords {
		if string(w) == s {
			return true
		}
	}
	return false
}

// shout writes b in capitals (ASCII, and é).
func shout(b []byte) {
	for i := 0; i < len(b); i++ {
		b[i] = upper(b[i])
		if b[i] == 0xC3 && i+1 < len(b) && b[i+1] == 0xA9 { // é → É
			b[i+1] = 0x89
		}
	}
}

func (g *gen) features(h *home) {
	g.raw("    <features>\n")
	if h.category == "Studio" && (h.kind == "residential" || h.kind == "rental") {
		g.raw("      <bedrooms>Studio</bedrooms>\n")
	} else {
		g.elemInt("      ", "bedrooms", h.beds)
	}
	g.elemInt("      ", "bathrooms", h.baths)
	g.elemInt("      ", "ensuite", min(h.baths-1, 1))
	g.elemInt("      ", "toilets", h.baths+g.rnd.IntN(2))
	g.elemInt("      ", "garages", g.rnd.IntN(3))
	g.elemInt("      ", "carports", g.rnd.IntN(2))
	g.elemInt("      ", "livingAreas", 1+g.rnd.IntN(2))
	for _, f := range flagFeatures {
		if g.chance(0.4) {
			g.raws("      <", f, ">", g.pick(yesValues), "</", f, ">\n")
		}
	}
	g.raw("      <heating type=\"gas\"/>\n")
	k := g.rnd.IntN(len(otherFeatures))
	extras := []string{otherFeatures[k], otherFeatures[(k+1+g.rnd.IntN(len(otherFeatures)-1))%len(otherFeatures)]}
	g.elem("      ", "otherFeatures", strings.Join(extras, ", "))
	g.raw("    </features>\n")
}

var yesValues = []string{"yes", "1", "true"}

func (g *gen) details(h *home) {
	switch h.kind {
	case "rural":
		g.raw("    <landDetails>\n      <area unit=\"hectare\">")
		g.int(h.land)
		g.raw("</area>\n    </landDetails>\n")
	case "land", "commercialLand", "residential":
		g.raw("    <landDetails>\n      <area unit=\"squareMeter\">")
		g.int(h.land)
		g.raw("</area>\n      <frontage unit=\"meter\">")
		g.int(10 + g.rnd.IntN(20))
		g.raw("</frontage>\n      <depth unit=\"meter\" side=\"left\">")
		g.int(25 + g.rnd.IntN(30))
		g.raw("</depth>\n    </landDetails>\n")
	}
	switch h.kind {
	case "residential", "rental", "commercial":
		g.raw("    <buildingDetails>\n      <area unit=\"squareMeter\">")
		g.int(h.floor)
		g.printf("</area>\n      <energyRating>%.1f</energyRating>\n    </buildingDetails>\n", 1+0.5*float64(g.rnd.IntN(15)))
	}
}

func (g *gen) inspections() {
	n := g.rnd.IntN(4)
	if n == 0 {
		return
	}
	g.raw("    <inspectionTimes>\n")
	for range n {
		day := g.o.Now.AddDate(0, 0, 1+g.rnd.IntN(14))
		start := time.Date(day.Year(), day.Month(), day.Day(), 9+g.rnd.IntN(8), 15*g.rnd.IntN(4), 0, 0, g.o.Location)
		end := start.Add(time.Duration(15*(1+g.rnd.IntN(3))) * time.Minute)
		g.raw("      <inspection>")
		g.buf = start.AppendFormat(g.buf, "02-Jan-2006 3:04pm")
		g.raw(" to ")
		g.buf = end.AppendFormat(g.buf, "3:04pm")
		g.raw("</inspection>\n")
	}
	g.raw("    </inspectionTimes>\n")
}

// imageSlots is the REAXML slot order: m is the main image.
const imageSlots = "mabcdefghijklnopqrstuvwxyz"

func (g *gen) media(kind string, i int) {
	mod := g.o.Now.Add(-time.Duration(g.rnd.IntN(60*24*30)) * time.Minute)
	n := 3 + g.rnd.IntN(10)
	g.raw("    <images>\n")
	for k := range n {
		g.raws(`      <img id="`, imageSlots[k:k+1], `" modTime="`)
		g.buf = appendFeedTime(g.buf, mod)
		g.raw(`" url="https://media.listgate.example/`)
		text(g, g.o.AgencyID)
		g.buf = append(g.buf, '/')
		g.listingID(i)
		g.raws("/", imageSlots[k:k+1], ".jpg\" format=\"jpg\"/>\n")
	}
	if g.chance(0.05) {
		g.raws(`      <img id="`, imageSlots[n:n+1], "\"/>\n") // the feed clears a slot
	}
	g.raw("    </images>\n")
	if (kind == "residential" || kind == "rental") && g.chance(0.6) {
		g.raw("    <objects>\n")
		for k := range 1 + g.rnd.IntN(2) {
			g.raw(`      <floorplan id="`)
			g.int(k + 1)
			g.raw(`" modTime="`)
			g.buf = appendFeedTime(g.buf, mod)
			g.raw(`" url="https://media.listgate.example/`)
			text(g, g.o.AgencyID)
			g.buf = append(g.buf, '/')
			g.listingID(i)
			g.raw("/floorplan")
			g.int(k + 1)
			g.raw(".png\" format=\"png\"/>\n")
		}
		g.raw("    </objects>\n")
	}
}
