package listings

import (
	"fmt"
	json "github.com/goccy/go-json"
	"math"
	"strings"
	"time"

	"github.com/listgate/listgate/pkg/model"
	"github.com/listgate/listgate/pkg/reaxml"
)

// row is a listing row as the queries read it.
type row struct {
	ref                int64
	agencyID, uniqueID string
	typ, status        string
	category           *string
	underOffer         bool
	featured           bool
	doc                []byte
	createdAt          time.Time
	modifiedAt         time.Time
}

const rowColumns = `l.ref, l.agency_id, l.unique_id, l.type, l.status, l.category, l.under_offer, l.featured, l.doc, l.created_at, l.modified_at`

func (r *row) dest() []any {
	return []any{&r.ref, &r.agencyID, &r.uniqueID, &r.typ, &r.status, &r.category, &r.underOffer, &r.featured,
		&r.doc, &r.createdAt, &r.modifiedAt}
}

// render turns a row and its parts into the API's listing, applying the
// feed's privacy rules. Times are in the site's time zone.
func render(r *row, loc *time.Location, agents []model.ListingAgent, media []model.Media, insp []model.Inspection) (model.Listing, error) {
	var d reaxml.Listing
	if err := json.Unmarshal(r.doc, &d); err != nil {
		return model.Listing{}, fmt.Errorf("listing %d: decode doc: %w", r.ref, err)
	}
	out := model.Listing{
		ListingRef: r.ref, ListingID: r.uniqueID, AgencyID: r.agencyID, Type: r.typ, Status: r.status,
		UnderOffer: r.underOffer, Featured: r.featured, Category: r.category,
		Headline: nonEmpty(d.Headline), Description: nonEmpty(d.Description),
		Authority: nonEmpty(d.Authority),
		CreatedAt: r.createdAt.In(loc), ModifiedAt: r.modifiedAt.In(loc),
		Agents: agents, Media: media, Inspections: insp,
	}
	if out.Authority == nil {
		out.Authority = nonEmpty(d.Exclusivity)
	}
	if out.Agents == nil {
		out.Agents = []model.ListingAgent{}
	}
	if out.Media == nil {
		out.Media = []model.Media{}
	}
	if out.Inspections == nil {
		out.Inspections = []model.Inspection{}
	}
	out.Price = renderPrice(d.Price, d.PriceView)
	out.Rent = renderRent(&d)
	out.Sold = renderSold(d.Sold, loc)
	out.Address = renderAddress(d.Address)
	out.Features = renderFeatures(d.Features)
	out.Land, out.Building = renderLand(d.LandDetails), renderBuilding(d.BuildingDetails)
	if d.Auction != nil && !d.Auction.Date.IsZero() {
		t := d.Auction.Date.In(loc)
		out.Auction = &model.Auction{Date: &t}
	}
	if d.DateAvailable != nil && !d.DateAvailable.IsZero() {
		s := d.DateAvailable.In(loc).Format(time.DateOnly)
		out.DateAvailable = &s
	}
	return out, nil
}

// renderPrice applies price display="no": the amount is hidden and the text
// is the feed's price view or "Contact agent".
func renderPrice(p *reaxml.Price, view *string) *model.Price {
	if p == nil && view == nil {
		return nil
	}
	out := &model.Price{ShowAmount: p == nil || p.Display == nil || *p.Display}
	if p != nil && out.ShowAmount {
		out.Amount = p.Amount.Figure()
	}
	out.DisplayText = nonEmpty(view)
	if out.DisplayText == nil {
		if out.Amount != nil {
			s := money(*out.Amount)
			out.DisplayText = &s
		} else {
			s := "Contact agent"
			out.DisplayText = &s
		}
	}
	if out.Amount == nil {
		out.ShowAmount = false
	}
	return out
}

// renderRent gives the weekly rent when the feed has several, else the
// first; a commercial lease's rent when there is no residential rent.
func renderRent(d *reaxml.Listing) *model.Rent {
	var pick *reaxml.Rent
	for i := range d.Rents {
		if d.Rents[i].Period == reaxml.PeriodWeek {
			pick = &d.Rents[i]
			break
		}
		if pick == nil {
			pick = &d.Rents[i]
		}
	}
	var out *model.Rent
	switch {
	case pick != nil:
		out = &model.Rent{}
		if pick.Display == nil || *pick.Display {
			out.Amount = pick.Amount.Figure()
		}
		if pick.Period != "" {
			p := string(pick.Period)
			out.Period = &p
		}
	case d.CommercialRent != nil:
		out = &model.Rent{Amount: d.CommercialRent.Amount.Figure()}
		if d.CommercialRent.Period != "" {
			p := string(d.CommercialRent.Period)
			out.Period = &p
		}
	default:
		return nil
	}
	if d.Price == nil {
		out.DisplayText = nonEmpty(d.PriceView)
	}
	if d.Bond != nil {
		out.Bond = d.Bond.Amount.Figure()
	}
	return out
}

// renderSold is present only when the feed lets the sold price be shown.
func renderSold(s *reaxml.SoldDetails, loc *time.Location) *model.Sold {
	if s == nil || s.Price == nil || s.Price.Display == nil || !*s.Price.Display {
		return nil
	}
	out := &model.Sold{Amount: s.Price.Amount.Figure()}
	if !s.Date.IsZero() {
		d := s.Date.In(loc).Format(time.DateOnly)
		out.Date = &d
	}
	return out
}

// renderAddress applies address display="no" (street-level parts hidden,
// formatted is the suburb) and the suburb's own display flag.
func renderAddress(a *reaxml.Address) model.Address {
	out := model.Address{Display: true}
	if a == nil {
		return out
	}
	out.Display = a.Display == nil || *a.Display
	suburbShown := a.SuburbDisplay == nil || *a.SuburbDisplay
	out.State, out.Country = nonEmpty(a.State), nonEmpty(a.Country)
	if suburbShown {
		out.Suburb, out.Postcode = nonEmpty(a.Suburb), nonEmpty(a.Postcode)
	}
	if !out.Display {
		out.Formatted = out.Suburb
		return out
	}
	number := nonEmpty(a.StreetNumber)
	if sub := nonEmpty(a.SubNumber); sub != nil {
		n := *sub
		if number != nil {
			n += "/" + *number
		}
		number = &n
	}
	out.StreetNumber, out.Street = number, nonEmpty(a.Street)
	var line []string
	if out.StreetNumber != nil {
		line = append(line, *out.StreetNumber)
	}
	if out.Street != nil {
		line = append(line, *out.Street)
	}
	var place []string
	for _, p := range []*string{out.Suburb, out.State, out.Postcode} {
		if p != nil {
			place = append(place, *p)
		}
	}
	parts := []string{}
	if len(line) > 0 {
		parts = append(parts, strings.Join(line, " "))
	}
	if len(place) > 0 {
		parts = append(parts, strings.Join(place, " "))
	}
	if len(parts) > 0 {
		f := strings.Join(parts, ", ")
		out.Formatted = &f
	}
	return out
}

func renderFeatures(f *reaxml.Features) model.Features {
	var out model.Features
	if f == nil {
		return out
	}
	out.Bedrooms, out.Bathrooms, out.Ensuites, out.Toilets = f.Bedrooms, f.Bathrooms, f.Ensuites, f.Toilets
	out.Garages, out.Carports, out.OpenSpaces, out.LivingAreas = f.Garages, f.Carports, f.OpenSpaces, f.LivingAreas
	out.CarSpaces = f.CarSpaces
	if out.CarSpaces == nil && (f.Garages != nil || f.Carports != nil || f.OpenSpaces != nil) {
		n := deref(f.Garages) + deref(f.Carports) + deref(f.OpenSpaces)
		out.CarSpaces = &n
	}
	if v, ok := f.Flags["airConditioning"]; ok {
		out.AirConditioning = &v
	}
	if v, ok := f.Flags["pool"]; ok {
		out.Pool = &v
	}
	if f.OtherFeatures != nil {
		out.Other = f.OtherFeatures
	}
	return out
}

func renderLand(l *reaxml.LandDetails) *model.Land {
	if l == nil || (l.Area == nil && l.Frontage == nil) {
		return nil
	}
	out := &model.Land{}
	if l.Area != nil {
		out.Area, out.Unit = l.Area.Amount.Figure(), nonEmpty(&l.Area.Unit)
	}
	if l.Frontage != nil {
		out.Frontage = l.Frontage.Value
	}
	return out
}

func renderBuilding(b *reaxml.BuildingDetails) *model.Building {
	if b == nil || (b.Area == nil && b.EnergyRating == nil) {
		return nil
	}
	out := &model.Building{EnergyRating: b.EnergyRating}
	if b.Area != nil {
		out.Area, out.Unit = b.Area.Amount.Figure(), nonEmpty(&b.Area.Unit)
	}
	return out
}

// money formats a whole-dollar amount as "$750,000".
func money(v float64) string {
	n := int64(math.Round(v))
	s := fmt.Sprint(n)
	var b strings.Builder
	b.WriteString("$")
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func nonEmpty(s *string) *string {
	if s == nil || strings.TrimSpace(*s) == "" {
		return nil
	}
	return s
}

func deref(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}
