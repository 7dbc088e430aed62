package ingest

import (
	"strings"

	"github.com/listgate/listgate/pkg/reaxml"
)

// listingType maps a REAXML element to the API's listing type.
func listingType(k reaxml.Kind) string {
	switch k {
	case reaxml.KindHolidayRental:
		return "holiday_rental"
	case reaxml.KindCommercialLand:
		return "commercial_land"
	default:
		return string(k)
	}
}

// columns are the copies of a merged listing that filters and sorts use.
type columns struct {
	typ, category, headline, description *string
	suburb, state, postcode              *string
	searchAddress                        *string
	underOffer, priceShown               bool
	price                                *float64
	bedrooms, bathrooms, carSpaces       *int
}

func columnsOf(l *reaxml.Listing) columns {
	t := listingType(l.Kind)
	c := columns{typ: &t, headline: l.Headline, description: l.Description, price: priceOf(l)}
	if l.UnderOffer != nil {
		c.underOffer = *l.UnderOffer
	}
	c.category = firstCategory(l)
	c.priceShown = priceShown(l)
	if a := l.Address; a != nil {
		c.state = a.State
		// The feed's privacy flags apply to filters and search too: a hidden
		// suburb is neither filterable nor searchable, a hidden street
		// address is not searchable.
		if a.SuburbDisplay == nil || *a.SuburbDisplay {
			c.suburb, c.postcode = a.Suburb, a.Postcode
		}
		var parts []string
		if a.Display == nil || *a.Display {
			parts = appendNonEmpty(parts, a.SubNumber, a.StreetNumber, a.Street)
		}
		parts = appendNonEmpty(parts, c.suburb, a.State, c.postcode)
		if len(parts) > 0 {
			s := strings.Join(parts, " ")
			c.searchAddress = &s
		}
	}
	if f := l.Features; f != nil {
		c.bedrooms, c.bathrooms = f.Bedrooms, f.Bathrooms
		c.carSpaces = f.CarSpaces
		if c.carSpaces == nil && (f.Garages != nil || f.Carports != nil || f.OpenSpaces != nil) {
			n := deref(f.Garages) + deref(f.Carports) + deref(f.OpenSpaces)
			c.carSpaces = &n
		}
	}
	return c
}

func appendNonEmpty(parts []string, vals ...*string) []string {
	for _, v := range vals {
		if v != nil && strings.TrimSpace(*v) != "" {
			parts = append(parts, strings.TrimSpace(*v))
		}
	}
	return parts
}

// priceShown reports whether the feed lets the figure priceOf returns be
// published.
func priceShown(l *reaxml.Listing) bool {
	if l.Price != nil && l.Price.Amount.Figure() != nil {
		return l.Price.Display == nil || *l.Price.Display
	}
	for _, r := range l.Rents {
		if r.Amount.Figure() != nil {
			return r.Display == nil || *r.Display
		}
	}
	return true
}

func firstCategory(l *reaxml.Listing) *string {
	for _, list := range [][]string{l.Categories, l.CommercialCategories, l.RuralCategories, l.LandCategories, l.HolidayCategories} {
		for _, c := range list {
			if c != "" {
				return &c
			}
		}
	}
	for _, b := range l.BusinessCategories {
		if b.Name != "" {
			return &b.Name
		}
	}
	return nil
}

// priceOf is the figure min_price and max_price filter on: the sale price
// for sale listings, the weekly rent for rentals, the rent for commercial
// leases. Nil when the feed gives none.
func priceOf(l *reaxml.Listing) *float64 {
	if v := priceAmount(l.Price).Figure(); v != nil {
		return v
	}
	if v := weeklyRent(l.Rents); v != nil {
		return v
	}
	if l.CommercialRent != nil {
		return l.CommercialRent.Amount.Figure()
	}
	return nil
}

func priceAmount(p *reaxml.Price) *reaxml.Amount {
	if p == nil {
		return nil
	}
	return &p.Amount
}

// weeklyRent is the weekly figure of a feed's rents, or a monthly one
// converted (× 12 / 52).
func weeklyRent(rents []reaxml.Rent) *float64 {
	var monthly *float64
	for i := range rents {
		v := rents[i].Amount.Figure()
		if v == nil {
			continue
		}
		switch rents[i].Period {
		case reaxml.PeriodWeek, "":
			return v
		case reaxml.PeriodMonth:
			if monthly == nil {
				w := *v * 12 / 52
				monthly = &w
			}
		}
	}
	return monthly
}

func deref(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}
