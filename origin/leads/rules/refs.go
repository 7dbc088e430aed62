package rules

import (
	"fmt"
	"sort"
	"strings"
)

// ListingKey identifies a listing of a site: its ref and its REAXML ids.
type ListingKey struct {
	Ref      int64
	AgencyID string
	UniqueID string
}

// RefFacts is what the store found for a lead's listing_ref, listing_id and
// agent_email, in the key's site (store.DB.LeadRefFacts fills it in).
// Deleted listings are never among them.
type RefFacts struct {
	// SiteExists is false when the key's site is gone.
	SiteExists bool
	// ByRef is the ref of the listing whose ref is Lead.ListingRef, 0 when
	// there is none.
	ByRef int64
	// ByID holds the listings whose uniqueID is Lead.ListingID, and the one
	// whose AGENCYID:UNIQUEID is, if any.
	ByID []ListingKey
	// AgentID and AgentEmail are the agent whose e-mail is Lead.AgentEmail
	// (compared case-insensitively), AgentID 0 when there is none.
	AgentID    int64
	AgentEmail string
}

// Refs is what a lead's references resolved to.
type Refs struct {
	// ListingRef is the listing the lead concerns, 0 for none.
	ListingRef int64
	// AgentID and AgentEmail are the agent agent_email named, 0 and "" when
	// none was given.
	AgentID    int64
	AgentEmail string
}

// ResolveRefs decides what the lead's references name, given the facts:
// listing_ref must name a listing of the site that is not deleted;
// listing_id likewise, AGENCYID:UNIQUEID always being accepted and a bare
// uniqueID that two agencies of the site share being refused as ambiguous;
// both given must name the same listing; agent_email must be an agent of
// the site. Problems lists each that fails, keyed by the field.
func ResolveRefs(l *Lead, f RefFacts) (Refs, Problems) {
	var r Refs
	p := Problems{}
	if l.ListingRef != 0 {
		if f.ByRef == 0 {
			p.Add("listing_ref", "no listing of this site has this ref")
		}
		r.ListingRef = f.ByRef
	}
	if l.ListingID != "" {
		ref, msg := resolveListingID(l, f.ByID)
		switch {
		case msg != "":
			p.Add("listing_id", msg)
		case r.ListingRef != 0 && ref != r.ListingRef:
			p.Add("listing_id", "names a different listing than listing_ref")
		default:
			r.ListingRef = ref
		}
	}
	if l.AgentEmail != "" {
		if f.AgentID == 0 {
			p.Add("agent_email", "is not an agent of this site")
		}
		r.AgentID, r.AgentEmail = f.AgentID, f.AgentEmail
	}
	if len(p) > 0 {
		return Refs{}, p
	}
	return r, nil
}

// resolveListingID picks the listing that l.ListingID names among the
// candidates: the qualified match first, then the only bare match.
func resolveListingID(l *Lead, candidates []ListingKey) (int64, string) {
	if agency, unique, ok := l.ListingIDParts(); ok {
		for _, c := range candidates {
			if c.AgencyID == agency && c.UniqueID == unique {
				return c.Ref, ""
			}
		}
	}
	var bare []ListingKey
	for _, c := range candidates {
		if c.UniqueID == l.ListingID {
			bare = append(bare, c)
		}
	}
	switch len(bare) {
	case 0:
		return 0, "no listing of this site has this id"
	case 1:
		return bare[0].Ref, ""
	}
	agencies := make([]string, len(bare))
	for i, c := range bare {
		agencies[i] = c.AgencyID
	}
	sort.Strings(agencies)
	return 0, fmt.Sprintf("is used by more than one agency of this site (%s): use the form AGENCYID:UNIQUEID, such as %q",
		strings.Join(agencies, ", "), agencies[0]+":"+l.ListingID)
}
