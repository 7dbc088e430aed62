package reaxml

// money maps the price, rent and charge elements. It reports false for an
// element it does not handle.
func (m *mapper) money(n *node) bool {
	l := m.l
	switch n.name {
	case "price":
		l.Price = m.price(n, "price")
	case "rent":
		r := Rent{Period: periodAttr(n), Display: m.attrFlag(n, "rent", "display")}
		r.Tax, _ = n.attr("tax")
		for _, k := range m.amount(n, "rent", &r.Amount) {
			m.extra(k, "rent")
		}
		l.Rents = append(l.Rents, r)
	case "bond", "takings", "outgoings", "return", "businessLease":
		c := m.charge(n)
		switch n.name {
		case "bond":
			l.Bond = c
		case "takings":
			l.Takings = c
		case "outgoings":
			l.Outgoings = c
		case "return":
			l.Return = c
		case "businessLease":
			l.BusinessLease = c
		}
	case "commercialRent":
		l.CommercialRent = m.commercialRent(n)
	case "soldDetails":
		l.Sold = m.sold(n)
	default:
		return false
	}
	return true
}

func periodAttr(n *node) Period {
	s, _ := n.attr("period")
	if s == "" {
		return ""
	}
	return normPeriod(s)
}

// amount reads a figure that is the element's text, a range
// (<range><min/><max/></range>, or bare <min/> and <max/>), or both. It
// returns the children it did not use.
func (m *mapper) amount(n *node, field string, a *Amount) (rest []*node) {
	a.Value = m.number(n, field, n.ownText())
	for _, k := range n.kids {
		switch k.name {
		case "range":
			for _, r := range k.kids {
				if !m.bound(r, field+"/range", a) {
					m.extra(r, field+"/range")
				}
			}
		case "min", "max":
			m.bound(k, field, a)
		default:
			rest = append(rest, k)
		}
	}
	return rest
}

func (m *mapper) bound(n *node, field string, a *Amount) bool {
	switch n.name {
	case "min":
		a.Min = m.number(n, field+"/min", n.fullText())
	case "max":
		a.Max = m.number(n, field+"/max", n.fullText())
	default:
		return false
	}
	return true
}

func (m *mapper) price(n *node, field string) *Price {
	p := &Price{
		Display: m.attrFlag(n, field, "display"),
		PlusSAV: m.attrFlag(n, field, "plusSAV"),
	}
	p.Tax, _ = n.attr("tax")
	for _, k := range m.amount(n, field, &p.Amount) {
		m.extra(k, field)
	}
	return p
}

func (m *mapper) charge(n *node) *Charge {
	c := &Charge{Period: periodAttr(n)}
	c.Unit, _ = n.attr("unit")
	c.Tax, _ = n.attr("tax")
	for _, k := range m.amount(n, n.name, &c.Amount) {
		m.extra(k, n.name)
	}
	return c
}

func (m *mapper) commercialRent(n *node) *CommercialRent {
	c := &CommercialRent{
		Period:        periodAttr(n),
		PlusOutgoings: m.attrFlag(n, n.name, "plusOutgoings"),
	}
	c.Tax, _ = n.attr("tax")
	for _, k := range m.amount(n, n.name, &c.Amount) {
		if k.name != "rentPerSquareMetre" && k.name != "rentPerSquareMeter" {
			m.extra(k, n.name)
			continue
		}
		c.PerSquareMetre = &Amount{}
		for _, r := range m.amount(k, n.name+"/"+k.name, c.PerSquareMetre) {
			m.extra(r, n.name+"/"+k.name)
		}
	}
	return c
}

// sold reads soldDetails, accepting the legacy soldPrice/soldDate names.
func (m *mapper) sold(n *node) *SoldDetails {
	s := &SoldDetails{}
	for _, k := range n.kids {
		switch k.name {
		case "price", "soldPrice":
			s.Price = m.price(k, "soldDetails/"+k.name)
		case "date", "soldDate":
			s.Date, _ = m.date(k, "soldDetails/"+k.name, k.fullText())
		default:
			m.extra(k, "soldDetails")
		}
	}
	return s
}
