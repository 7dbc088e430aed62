package reaxml

import (
	"errors"
	"strings"
)

// listing maps one child element of propertyList.
func (d *Decoder) listing(n *node) (*Listing, error) {
	kind := Kind(n.name)
	l := &Listing{Kind: kind, Line: n.line, Status: StatusCurrent}
	for _, k := range n.kids {
		switch k.name {
		case "agentID":
			l.AgentID = k.fullText()
		case "uniqueID":
			l.UniqueID = k.fullText()
		}
	}
	lerr := &ListingError{Line: n.line, AgentID: l.AgentID, UniqueID: l.UniqueID}
	if !kind.Valid() {
		lerr.Err = ErrUnknownKind
		return nil, lerr
	}
	lerr.Kind = kind
	if n.tooLarge {
		lerr.Err = ErrTooLarge
		return nil, lerr
	}
	m := &mapper{loc: d.loc, l: l}
	m.root(n)
	for _, k := range n.kids {
		m.child(k)
	}
	m.finish()
	if l.AgentID == "" || l.UniqueID == "" {
		m.errs = append([]error{ErrMissingID}, m.errs...)
	}
	if len(m.errs) > 0 {
		lerr.Err = errors.Join(m.errs...)
		return nil, lerr
	}
	return l, nil
}

// root reads the listing element's attributes.
func (m *mapper) root(n *node) {
	if s, ok := n.attr("status"); ok && s != "" {
		st := Status(strings.ToLower(strings.ReplaceAll(s, " ", "")))
		switch st {
		case StatusCurrent, StatusSold, StatusLeased, StatusWithdrawn, StatusOffmarket, StatusDeleted:
			m.l.Status = st
		default:
			m.bad(n, "@status", s, "status (current, sold, leased, withdrawn, offmarket, deleted)", nil)
		}
	}
	if s, ok := n.attr("modTime"); ok {
		m.l.ModTime, _ = m.date(n, "@modTime", s)
	}
}

// child maps one child element of a listing.
func (m *mapper) child(n *node) {
	l := m.l
	switch n.name {
	case "agentID", "uniqueID":
		// read first, in listing
	case "authority", "commercialAuthority":
		l.Authority = valueStr(n)
	case "exclusivity":
		l.Exclusivity = valueStr(n)
	case "commercialListingType":
		l.CommercialListingType = valueStr(n)
	case "underOffer":
		l.UnderOffer = m.flag(n, n.name, value(n))
	case "isMultiple":
		l.IsMultiple = m.flag(n, n.name, value(n))
	case "isHomeLandPackage":
		l.IsHomeLandPackage = m.flag(n, n.name, value(n))
	case "newConstruction", "newlyBuilt":
		l.NewConstruction = m.flag(n, n.name, value(n))
	case "franchise":
		l.Franchise = m.flag(n, n.name, value(n))
	case "listingAgent":
		m.agent(n)
	case "headline":
		l.Headline = str(n)
	case "description":
		l.Description = str(n)
	case "priceView":
		l.PriceView = str(n)
	case "terms":
		l.Terms = str(n)
	case "furtherOptions":
		l.FurtherOptions = str(n)
	case "councilRates":
		l.CouncilRates = str(n)
	case "zone":
		l.Zone = str(n)
	case "parkingComments":
		l.ParkingComments = str(n)
	case "municipality":
		l.Municipality = str(n)
	case "highlight":
		appendText(&l.Highlights, n.fullText())
	case "dateAvailable":
		l.DateAvailable = m.datePtr(n, n.name)
	case "currentLeaseEndDate":
		l.CurrentLeaseEndDate = m.datePtr(n, n.name)
	case "vendorDetails":
		// The seller's private contact details: deliberately not kept.
	default:
		if !m.money(n) && !m.property(n) && !m.mediaChild(n) {
			m.extra(n, "")
		}
	}
}

// finish orders and de-duplicates what needs it once all children are read.
func (m *mapper) finish() {
	m.finishAgents()
}

// appendText appends s to *dst unless it is empty; *dst becomes non-nil
// either way (the element was present).
func appendText(dst *[]string, s string) {
	if *dst == nil {
		*dst = []string{}
	}
	if s != "" {
		*dst = append(*dst, s)
	}
}
