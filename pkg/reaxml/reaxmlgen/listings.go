package reaxmlgen

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// body writes the elements of a current listing.
func (g *gen) body(kind string, i int) {
	sub := suburbs[g.rnd.IntN(len(suburbs))]
	beds := 1 + g.rnd.IntN(5)
	category := g.pick(residentialCategories)
	if category == "Studio" {
		beds = 1
	}
	uid := fmt.Sprintf("%s-%06d", g.o.AgencyID, i+1)
	auction := false
	switch kind {
	case "residential", "land", "rural":
		auction = kind != "land" && g.chance(0.25)
		authority := "exclusive"
		if auction {
			authority = "auction"
		}
		g.printf("    <authority value=\"%s\"/>\n", authority)
		g.printf("    <underOffer value=\"%s\"/>\n", g.yesNo(g.chance(0.1)))
	case "commercial", "commercialLand", "business":
		g.printf("    <exclusivity value=\"%s\"/>\n", g.pick([]string{"exclusive", "open"}))
		g.printf("    <commercialListingType value=\"%s\"/>\n", g.pick([]string{"sale", "lease", "both"}))
		g.printf("    <underOffer value=\"%s\"/>\n", g.yesNo(g.chance(0.1)))
	}
	if kind == "residential" && g.chance(0.15) {
		g.raw("    <newConstruction>yes</newConstruction>\n")
	}
	g.listingAgents()
	g.pricing(kind, sub, beds)
	g.address(kind, sub)
	g.elem("    ", "municipality", sub.council)
	g.categories(kind, category)
	g.elem("    ", "headline", g.headline(kind, category, sub))
	g.elem("    ", "description", g.description(kind, beds))
	switch kind {
	case "residential", "rental", "holidayRental", "rural":
		g.features(kind, category, beds)
	}
	if kind == "rental" {
		g.printf("    <allowances>\n      <petFriendly>%s</petFriendly>\n      <furnished>%s</furnished>\n      <smokers>no</smokers>\n    </allowances>\n",
			g.yesNo(g.chance(0.4)), g.yesNo(g.chance(0.15)))
	}
	if kind == "rural" {
		g.raw("    <ruralFeatures>\n      <fencing>Boundary and internal fencing in good condition</fencing>\n")
		g.printf("      <annualRainfall>%d mm per annum</annualRainfall>\n", 400+g.rnd.IntN(900))
		g.raw("      <services>Power, telephone, school bus</services>\n    </ruralFeatures>\n")
	}
	g.details(kind, beds)
	if kind == "commercial" {
		g.printf("    <carSpaces>%d</carSpaces>\n", g.rnd.IntN(30))
	}
	if kind == "residential" || kind == "rental" {
		g.inspections()
	}
	if auction {
		at := g.o.Now.AddDate(0, 0, 14+g.rnd.IntN(28))
		at = time.Date(at.Year(), at.Month(), at.Day(), 10+g.rnd.IntN(6), 30*g.rnd.IntN(2), 0, 0, g.o.Location)
		g.printf("    <auction date=\"%s\"/>\n", at.Format("2006-01-02T15:04:05"))
	}
	if g.chance(0.1) {
		g.printf("    <videoLink href=\"https://video.listgate.example/%s.mp4\"/>\n", uid)
	}
	g.media(kind, uid)
}

// compactBody writes a current listing with few elements (Options.Compact).
func (g *gen) compactBody(kind string, i int) {
	sub := suburbs[g.rnd.IntN(len(suburbs))]
	beds := 1 + g.rnd.IntN(5)
	a := g.agents[g.rnd.IntN(len(g.agents))]
	g.printf("    <listingAgent id=\"1\"><name>%s</name><email>%s</email></listingAgent>\n", esc(a.name), esc(a.email))
	if isRentalKind(kind) {
		g.printf("    <rent period=\"week\">%d</rent>\n", roundTo(weeklyRentBase[sub.tier]*(0.6+0.2*float64(beds)), 10))
	} else {
		g.printf("    <price display=\"yes\">%d</price>\n", g.salePrice(kind, sub, beds))
	}
	g.printf("    <address display=\"yes\"><streetNumber>%d</streetNumber><street>%s %s</street><suburb>%s</suburb><state>%s</state><postcode>%s</postcode></address>\n",
		1+g.rnd.IntN(250), g.pick(streetNames), g.pick(streetTypes), esc(sub.name), sub.state, sub.postcode)
	g.elem("    ", "headline", g.headline(kind, "House", sub))
	g.printf("    <features><bedrooms>%d</bedrooms><bathrooms>%d</bathrooms></features>\n", beds, 1+g.rnd.IntN(2))
	g.printf("    <images><img id=\"m\" url=\"https://media.listgate.example/%s/%s-%06d/m.jpg\"/></images>\n",
		esc(g.o.AgencyID), esc(g.o.AgencyID), i+1)
}

func (g *gen) listingAgents() {
	n := min(1+g.rnd.IntN(3), len(g.agents))
	first := g.rnd.IntN(len(g.agents))
	for k := range n {
		a := g.agents[(first+k)%len(g.agents)]
		g.printf("    <listingAgent id=\"%d\">\n", k+1)
		g.elem("      ", "name", a.name)
		g.printf("      <telephone type=\"mobile\">%s</telephone>\n", a.mobile)
		g.printf("      <telephone type=\"BH\">%s</telephone>\n", a.office)
		g.elem("      ", "email", a.email)
		g.raw("    </listingAgent>\n")
	}
}

var saleBase = [5]float64{0, 2_400_000, 1_300_000, 800_000, 520_000}
var weeklyRentBase = [5]float64{0, 1100, 750, 560, 430}

func roundTo(v float64, step int) int { return int(math.Round(v/float64(step))) * step }

func (g *gen) salePrice(kind string, sub suburb, beds int) int {
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
	return roundTo(v, 5000)
}

func (g *gen) pricing(kind string, sub suburb, beds int) {
	switch kind {
	case "rental":
		week := roundTo(weeklyRentBase[sub.tier]*(0.6+0.2*float64(beds))*(0.9+0.2*g.rnd.Float64()), 10)
		g.printf("    <dateAvailable>%s</dateAvailable>\n", g.o.Now.AddDate(0, 0, g.rnd.IntN(30)).Format("2006-01-02"))
		g.printf("    <rent period=\"week\" display=\"yes\">%d</rent>\n", week)
		if g.chance(0.3) {
			g.printf("    <rent period=\"month\" display=\"yes\">%d</rent>\n", roundTo(float64(week)*52/12, 1))
		}
		g.printf("    <bond>%d</bond>\n", week*4)
		return
	case "holidayRental":
		night := 120 + 120*(5-sub.tier) + 10*g.rnd.IntN(10)
		g.printf("    <rent period=\"night\">%d</rent>\n", night)
		g.printf("    <rent period=\"week\">\n      <range>\n        <min>%d</min>\n        <max>%d</max>\n      </range>\n    </rent>\n",
			night*6, night*9)
		return
	}
	price := g.salePrice(kind, sub, beds)
	display := !g.chance(0.1)
	g.printf("    <price display=\"%s\">%d</price>\n", g.yesNo(display), price)
	view := fmt.Sprintf("Offers over $%s", thousands(price))
	if !display {
		view = "Contact agent"
	}
	g.elem("    ", "priceView", view)
	switch kind {
	case "commercial", "commercialLand":
		g.printf("    <commercialRent period=\"annual\" plusOutgoings=\"%s\">%d</commercialRent>\n",
			g.yesNo(g.chance(0.5)), roundTo(float64(price)*0.06, 100))
		g.printf("    <outgoings period=\"annual\">%d</outgoings>\n", roundTo(float64(price)*0.01, 100))
	case "business":
		g.printf("    <takings>%d</takings>\n", roundTo(float64(price)*(1+g.rnd.Float64()), 1000))
		g.printf("    <return period=\"annual\" unit=\"percent\">%.1f</return>\n", 8+8*g.rnd.Float64())
		g.printf("    <businessLease period=\"month\">%d</businessLease>\n", roundTo(2000+6000*g.rnd.Float64(), 50))
	}
}

func thousands(n int) string {
	s := fmt.Sprint(n)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func (g *gen) address(kind string, sub suburb) {
	g.printf("    <address display=\"%s\">\n", g.yesNo(!g.chance(0.08)))
	if kind == "land" || kind == "commercialLand" {
		g.elem("      ", "lotNumber", fmt.Sprint(1+g.rnd.IntN(400)))
	} else if kind == "rental" && g.chance(0.4) {
		g.elem("      ", "subNumber", fmt.Sprint(1+g.rnd.IntN(40)))
	}
	g.elem("      ", "streetNumber", fmt.Sprint(1+g.rnd.IntN(250)))
	g.elem("      ", "street", g.pick(streetNames)+" "+g.pick(streetTypes))
	g.printf("      <suburb display=\"yes\">%s</suburb>\n", esc(sub.name))
	g.elem("      ", "state", sub.state)
	g.elem("      ", "postcode", sub.postcode)
	g.raw("      <country>AUS</country>\n    </address>\n")
}

func (g *gen) categories(kind, category string) {
	switch kind {
	case "residential", "rental":
		g.printf("    <category name=\"%s\"/>\n", category)
	case "commercial", "commercialLand":
		for k := range 1 + g.rnd.IntN(2) {
			g.printf("    <commercialCategory id=\"%d\" name=\"%s\"/>\n", k+1, esc(g.pick(commercialCategories)))
		}
	case "business":
		c := businessCategories[g.rnd.IntN(len(businessCategories))]
		g.printf("    <businessCategory id=\"1\">\n      <name>%s</name>\n      <businessSubCategory>\n        <name>%s</name>\n      </businessSubCategory>\n    </businessCategory>\n",
			esc(c[0]), esc(c[1]))
	case "rural":
		g.printf("    <ruralCategory name=\"%s\"/>\n", g.pick(ruralCategories))
	case "land":
		g.printf("    <landCategory name=\"%s\"/>\n", g.pick(landCategories))
	case "holidayRental":
		g.printf("    <holidayCategory name=\"%s\"/>\n", g.pick(holidayCategories))
	}
}

// homeNouns match a residential category.
var homeNouns = map[string][]string{
	"House":     {"family home", "Federation home", "Californian bungalow", "weatherboard cottage"},
	"Unit":      {"unit", "apartment"},
	"Apartment": {"apartment", "penthouse"},
	"Flat":      {"flat", "apartment"},
	"Townhouse": {"townhouse"},
	"Villa":     {"villa"},
	"Terrace":   {"terrace", "Victorian terrace"},
	"Studio":    {"studio apartment"},
}

func (g *gen) headline(kind, category string, sub suburb) string {
	group := "home"
	switch kind {
	case "land", "commercialLand":
		group = "land"
	case "rural":
		group = "rural"
	case "commercial":
		group = "commercial"
	case "business":
		group = "business"
	}
	nouns := headlineNouns[group]
	if kind == "residential" || kind == "rental" {
		nouns = homeNouns[category]
	}
	return fmt.Sprintf("%s %s %s, %s", g.pick(headlineOpeners), g.pick(nouns), g.pick(headlineHooks), sub.name)
}

func (g *gen) description(kind string, beds int) string {
	pool := descriptionSentences
	switch kind {
	case "commercial", "commercialLand", "business":
		pool = commercialSentences
	case "rural":
		pool = ruralSentences
	}
	n := 3 + g.rnd.IntN(4)
	parts := make([]string, 0, n+1)
	if pool[0] == descriptionSentences[0] {
		if beds == 1 {
			parts = append(parts, "A smart single-bedroom layout that makes every square metre count.")
		} else {
			parts = append(parts, fmt.Sprintf("Offering %d bedrooms across a thoughtful floorplan.", beds))
		}
	}
	start := g.rnd.IntN(len(pool))
	for k := range min(n, len(pool)) {
		parts = append(parts, pool[(start+k)%len(pool)])
	}
	return strings.Join(parts, " ")
}

func (g *gen) features(kind, category string, beds int) {
	g.raw("    <features>\n")
	if category == "Studio" && (kind == "residential" || kind == "rental") {
		g.raw("      <bedrooms>Studio</bedrooms>\n")
	} else {
		g.printf("      <bedrooms>%d</bedrooms>\n", beds)
	}
	baths := 1 + g.rnd.IntN(max(1, beds-1))
	g.printf("      <bathrooms>%d</bathrooms>\n", baths)
	g.printf("      <ensuite>%d</ensuite>\n", min(baths-1, 1))
	g.printf("      <toilets>%d</toilets>\n", baths+g.rnd.IntN(2))
	g.printf("      <garages>%d</garages>\n", g.rnd.IntN(3))
	g.printf("      <carports>%d</carports>\n", g.rnd.IntN(2))
	g.printf("      <livingAreas>%d</livingAreas>\n", 1+g.rnd.IntN(2))
	for _, f := range flagFeatures {
		if g.chance(0.4) {
			g.printf("      <%s>%s</%s>\n", f, g.pick([]string{"yes", "1", "true"}), f)
		}
	}
	g.raw("      <heating type=\"gas\"/>\n")
	k := g.rnd.IntN(len(otherFeatures))
	extras := []string{otherFeatures[k], otherFeatures[(k+1+g.rnd.IntN(len(otherFeatures)-1))%len(otherFeatures)]}
	g.elem("      ", "otherFeatures", strings.Join(extras, ", "))
	g.raw("    </features>\n")
}

func (g *gen) details(kind string, beds int) {
	switch kind {
	case "rural":
		g.printf("    <landDetails>\n      <area unit=\"hectare\">%d</area>\n    </landDetails>\n", 5+g.rnd.IntN(2000))
	case "land", "commercialLand", "residential":
		g.printf("    <landDetails>\n      <area unit=\"squareMeter\">%d</area>\n      <frontage unit=\"meter\">%d</frontage>\n      <depth unit=\"meter\" side=\"left\">%d</depth>\n    </landDetails>\n",
			250+g.rnd.IntN(900), 10+g.rnd.IntN(20), 25+g.rnd.IntN(30))
	}
	switch kind {
	case "residential", "rental", "commercial":
		g.printf("    <buildingDetails>\n      <area unit=\"squareMeter\">%d</area>\n      <energyRating>%.1f</energyRating>\n    </buildingDetails>\n",
			60+40*beds+g.rnd.IntN(80), 1+0.5*float64(g.rnd.IntN(15)))
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
		g.printf("      <inspection>%s %s to %s</inspection>\n",
			start.Format("02-Jan-2006"), start.Format("3:04pm"), end.Format("3:04pm"))
	}
	g.raw("    </inspectionTimes>\n")
}

// imageSlots is the REAXML slot order: m is the main image.
const imageSlots = "mabcdefghijklnopqrstuvwxyz"

func (g *gen) media(kind, uid string) {
	mod := feedTime(g.o.Now.Add(-time.Duration(g.rnd.IntN(60*24*30)) * time.Minute))
	n := 3 + g.rnd.IntN(10)
	g.raw("    <images>\n")
	for k := range n {
		slot := imageSlots[k : k+1]
		g.printf("      <img id=\"%s\" modTime=\"%s\" url=\"https://media.listgate.example/%s/%s/%s.jpg\" format=\"jpg\"/>\n",
			slot, mod, esc(g.o.AgencyID), esc(uid), slot)
	}
	if g.chance(0.05) {
		g.printf("      <img id=\"%s\"/>\n", imageSlots[n:n+1]) // the feed clears a slot
	}
	g.raw("    </images>\n")
	if (kind == "residential" || kind == "rental") && g.chance(0.6) {
		g.raw("    <objects>\n")
		for k := range 1 + g.rnd.IntN(2) {
			g.printf("      <floorplan id=\"%d\" modTime=\"%s\" url=\"https://media.listgate.example/%s/%s/floorplan%d.png\" format=\"png\"/>\n",
				k+1, mod, esc(g.o.AgencyID), esc(uid), k+1)
		}
		g.raw("    </objects>\n")
	}
}
