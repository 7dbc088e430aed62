package reaxml

// landDetails reads landDetails: area, frontage, depths per side, crossOver.
func (m *mapper) landDetails(n *node) *LandDetails {
	d := &LandDetails{}
	for _, k := range n.kids {
		field := "landDetails/" + k.name
		switch k.name {
		case "area":
			d.Area = m.area(k, field)
		case "frontage":
			d.Frontage = m.measure(k, field)
		case "depth":
			dp := Depth{Measure: *m.measure(k, field)}
			dp.Side, _ = k.attr("side")
			d.Depths = append(d.Depths, dp)
		case "crossOver":
			d.CrossOver = valueStr(k)
		default:
			m.extra(k, "landDetails")
		}
	}
	return d
}

// buildingDetails reads buildingDetails; the legacy newlyBuilt sets
// Listing.NewConstruction.
func (m *mapper) buildingDetails(n *node) *BuildingDetails {
	d := &BuildingDetails{}
	for _, k := range n.kids {
		field := "buildingDetails/" + k.name
		switch k.name {
		case "area":
			d.Area = m.area(k, field)
		case "energyRating":
			d.EnergyRating = m.number(k, field, k.fullText())
		case "newlyBuilt", "newConstruction":
			m.l.NewConstruction = m.flag(k, field, value(k))
		default:
			m.extra(k, "buildingDetails")
		}
	}
	return d
}

func (m *mapper) area(n *node, field string) *Area {
	a := &Area{}
	if u, _ := n.attr("unit"); u != "" {
		a.Unit = normAreaUnit(u)
	}
	a.Of, _ = n.attr("of")
	for _, k := range m.amount(n, field, &a.Amount) {
		m.extra(k, field)
	}
	return a
}

func (m *mapper) measure(n *node, field string) *Measure {
	ms := &Measure{Value: m.number(n, field, n.fullText())}
	ms.Unit, _ = n.attr("unit")
	return ms
}

// inspections reads inspectionTimes. An empty element gives a non-nil empty
// slice: the listing has no inspections any more.
func (m *mapper) inspections(n *node) {
	l := m.l
	if l.Inspections == nil {
		l.Inspections = []Inspection{}
	}
	for _, k := range n.kids {
		if k.name != "inspection" {
			m.extra(k, "inspectionTimes")
			continue
		}
		s := k.fullText()
		if s == "" {
			continue
		}
		start, end, err := ParseInspection(s, m.loc)
		if err != nil {
			m.bad(k, "inspectionTimes/inspection", s, "inspection time", nil)
			continue
		}
		l.Inspections = append(l.Inspections, Inspection{StartsAt: start, EndsAt: end})
	}
}

// auction reads <auction date="…"/> or <auction>date</auction>. An empty
// element gives an Auction with a zero Date.
func (m *mapper) auction(n *node) {
	a := &Auction{}
	field := "auction@date"
	s, ok := n.attr("date")
	if !ok {
		s, field = n.ownText(), "auction"
	}
	a.Date, _ = m.date(n, field, s)
	for _, k := range n.kids {
		m.extra(k, "auction")
	}
	m.l.Auction = a
}
