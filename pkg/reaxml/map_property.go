package reaxml

import "strings"

// property maps address, categories, features, land and building details,
// inspections and auction. It reports false for an element it does not
// handle.
func (m *mapper) property(n *node) bool {
	l := m.l
	switch n.name {
	case "address":
		l.Address = m.address(n)
	case "estate":
		l.Estate = m.estate(n)
	case "category":
		appendText(&l.Categories, categoryName(n))
	case "commercialCategory":
		appendText(&l.CommercialCategories, categoryName(n))
	case "ruralCategory":
		appendText(&l.RuralCategories, categoryName(n))
	case "landCategory":
		appendText(&l.LandCategories, categoryName(n))
	case "holidayCategory":
		appendText(&l.HolidayCategories, categoryName(n))
	case "businessCategory":
		m.businessCategory(n)
	case "features":
		m.features(n)
	case "carSpaces":
		m.featureSet().CarSpaces = m.count(n, n.name)
	case "ruralFeatures":
		l.RuralFeatures = m.ruralFeatures(n)
	case "ecoFriendly":
		m.ecoFriendly(n)
	case "allowances":
		l.Allowances = m.allowances(n)
	case "landDetails":
		l.LandDetails = m.landDetails(n)
	case "buildingDetails":
		l.BuildingDetails = m.buildingDetails(n)
	case "inspectionTimes":
		m.inspections(n)
	case "auction":
		m.auction(n)
	default:
		return false
	}
	return true
}

// categoryName is the name attribute, or the text (<category>House</category>).
func categoryName(n *node) string {
	if s, ok := n.attr("name"); ok {
		return s
	}
	if k := childNamed(n, "name"); k != nil {
		return k.fullText()
	}
	return n.fullText()
}

func childNamed(n *node, name string) *node {
	for _, k := range n.kids {
		if k.name == name {
			return k
		}
	}
	return nil
}

func (m *mapper) address(n *node) *Address {
	a := &Address{Display: m.attrFlag(n, "address", "display")}
	for _, k := range n.kids {
		switch k.name {
		case "site":
			a.Site = str(k)
		case "subNumber":
			a.SubNumber = str(k)
		case "lotNumber":
			a.LotNumber = str(k)
		case "streetNumber":
			a.StreetNumber = str(k)
		case "street":
			a.Street = str(k)
		case "suburb":
			a.Suburb = str(k)
			a.SuburbDisplay = m.attrFlag(k, "address/suburb", "display")
		case "state":
			s := normState(k.fullText())
			a.State = &s
		case "postcode":
			a.Postcode = str(k)
		case "country":
			a.Country = str(k)
		default:
			m.extra(k, "address")
		}
	}
	return a
}

func (m *mapper) estate(n *node) *Estate {
	e := &Estate{}
	for _, k := range n.kids {
		switch k.name {
		case "name":
			e.Name = str(k)
		case "stage":
			e.Stage = str(k)
		default:
			m.extra(k, "estate")
		}
	}
	if e.Name == nil && e.Stage == nil && n.ownText() != "" {
		e.Name = str(n) // <estate>Panorama</estate>
	}
	return e
}

func (m *mapper) businessCategory(n *node) {
	l := m.l
	if l.BusinessCategories == nil {
		l.BusinessCategories = []BusinessCategory{}
	}
	c := BusinessCategory{}
	c.ID, _ = n.attr("id")
	for _, k := range n.kids {
		switch k.name {
		case "name":
			c.Name = k.fullText()
		case "businessSubCategory":
			appendText(&c.SubCategories, categoryName(k))
		default:
			m.extra(k, "businessCategory")
		}
	}
	if c.Name == "" {
		c.Name, _ = n.attr("name")
	}
	if c.Name != "" {
		l.BusinessCategories = append(l.BusinessCategories, c)
	}
}

func (m *mapper) featureSet() *Features {
	if m.l.Features == nil {
		m.l.Features = &Features{}
	}
	return m.l.Features
}

// knownFlags are the yes/no features of REAXML; an unreadable value of one
// of them is an error, while an unknown feature with a text value is kept
// in Extra.
var knownFlags = map[string]bool{
	"airConditioning": true, "alarmSystem": true, "vacuumSystem": true, "intercom": true,
	"pool": true, "poolInGround": true, "poolAboveGround": true, "spa": true,
	"insideSpa": true, "outsideSpa": true, "tennisCourt": true, "balcony": true,
	"deck": true, "courtyard": true, "outdoorEnt": true, "shed": true,
	"fullyFenced": true, "openFirePlace": true, "remoteGarage": true,
	"secureParking": true, "broadband": true, "builtInRobes": true,
	"dishwasher": true, "ductedCooling": true, "ductedHeating": true,
	"evaporativeCooling": true, "floorboards": true, "gasHeating": true,
	"gym": true, "hydronicHeating": true, "payTV": true, "reverseCycleAircon": true,
	"rumpusRoom": true, "splitSystemAircon": true, "splitSystemHeating": true,
	"study": true, "workshop": true, "heating": true, "hotWaterService": true,
}

func (m *mapper) features(n *node) {
	f := m.featureSet()
	for _, k := range n.kids {
		field := "features/" + k.name
		switch k.name {
		case "bedrooms":
			if strings.EqualFold(k.fullText(), "studio") {
				zero := 0
				f.Bedrooms, f.Studio = &zero, true
			} else {
				f.Bedrooms, f.Studio = m.count(k, field), false
			}
		case "bathrooms":
			f.Bathrooms = m.count(k, field)
		case "ensuite", "ensuites":
			f.Ensuites = m.count(k, field)
		case "toilets":
			f.Toilets = m.count(k, field)
		case "garages":
			f.Garages = m.count(k, field)
		case "carports":
			f.Carports = m.count(k, field)
		case "openSpaces":
			f.OpenSpaces = m.count(k, field)
		case "livingAreas":
			f.LivingAreas = m.count(k, field)
		case "carSpaces":
			f.CarSpaces = m.count(k, field)
		case "otherFeatures":
			f.OtherFeatures = splitList(k.fullText())
		default:
			m.featureFlag(f, k, field)
		}
	}
}

func (m *mapper) featureFlag(f *Features, k *node, field string) {
	if t, ok := k.attr("type"); ok && t != "" {
		if f.Types == nil {
			f.Types = map[string]string{}
		}
		f.Types[k.name] = t
	}
	s := value(k)
	if s == "" {
		if len(k.kids) > 0 {
			m.extra(k, "features")
		}
		return
	}
	v, ok := parseBool(s)
	if !ok {
		if knownFlags[k.name] {
			m.bad(k, field, s, "yes/no", nil)
		} else {
			m.extra(k, "features")
		}
		return
	}
	if f.Flags == nil {
		f.Flags = map[string]bool{}
	}
	f.Flags[k.name] = v
}

func (m *mapper) ruralFeatures(n *node) *RuralFeatures {
	r := &RuralFeatures{}
	for _, k := range n.kids {
		switch k.name {
		case "fencing":
			r.Fencing = str(k)
		case "annualRainfall":
			r.AnnualRainfall = str(k)
		case "soilTypes":
			r.SoilTypes = str(k)
		case "improvements":
			r.Improvements = str(k)
		case "councilRates":
			r.CouncilRates = str(k)
		case "irrigation":
			r.Irrigation = str(k)
		case "carryingCapacity":
			r.CarryingCapacity = str(k)
		case "services":
			r.Services = str(k)
		default:
			m.extra(k, "ruralFeatures")
		}
	}
	return r
}

var knownEco = map[string]bool{"solarPanels": true, "solarHotWater": true, "waterTank": true, "greyWaterSystem": true}

func (m *mapper) ecoFriendly(n *node) {
	if m.l.EcoFriendly == nil {
		m.l.EcoFriendly = map[string]bool{}
	}
	for _, k := range n.kids {
		s := value(k)
		v, ok := parseBool(s)
		switch {
		case ok:
			m.l.EcoFriendly[k.name] = v
		case s != "" && knownEco[k.name]:
			m.bad(k, "ecoFriendly/"+k.name, s, "yes/no", nil)
		case s != "" || len(k.kids) > 0 || len(k.attrs) > 0:
			m.extra(k, "ecoFriendly")
		}
	}
}

func (m *mapper) allowances(n *node) *Allowances {
	a := &Allowances{}
	for _, k := range n.kids {
		field := "allowances/" + k.name
		switch k.name {
		case "petFriendly", "pets":
			a.PetFriendly = m.flag(k, field, value(k))
		case "furnished":
			a.Furnished = m.flag(k, field, value(k))
		case "smokers", "smoker":
			a.Smokers = m.flag(k, field, value(k))
		default:
			m.extra(k, "allowances")
		}
	}
	return a
}
