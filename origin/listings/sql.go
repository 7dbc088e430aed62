package listings

import (
	"strconv"
	"strings"
)

// sqlBuilder collects WHERE conditions with numbered parameters.
type sqlBuilder struct {
	conds []string
	args  []any
}

// add appends a condition; each ? in cond is the value v.
func (b *sqlBuilder) add(cond string, v any) {
	b.args = append(b.args, v)
	b.conds = append(b.conds, strings.ReplaceAll(cond, "?", "$"+strconv.Itoa(len(b.args))))
}

// param adds v as a parameter and returns its placeholder.
func (b *sqlBuilder) param(v any) string {
	b.args = append(b.args, v)
	return "$" + strconv.Itoa(len(b.args))
}

func (b *sqlBuilder) where() string { return strings.Join(b.conds, " AND ") }

// listingWhere builds the WHERE clause of a listing query and, for search,
// the tsquery expression ("" otherwise).
func listingWhere(siteID string, f listingFilter) (b *sqlBuilder, tsq string) {
	b = &sqlBuilder{}
	b.add("l.site_id = ?", siteID)
	// One value compares with =, so the (site_id, status, …) indexes give
	// their order; = ANY would not.
	switch len(f.statuses) {
	case 0:
	case 1:
		b.add("l.status = ?", f.statuses[0])
	default:
		b.add("l.status = ANY(?)", f.statuses)
	}
	switch len(f.types) {
	case 0:
	case 1:
		b.add("l.type = ?", f.types[0])
	default:
		b.add("l.type = ANY(?)", f.types)
	}
	if f.category != nil {
		b.add("lower(l.category) = lower(?)", *f.category)
	}
	if f.suburb != nil {
		b.add("lower(l.suburb) = lower(?)", *f.suburb)
	}
	if f.state != nil {
		b.add("l.state = ?", *f.state)
	}
	if f.postcode != nil {
		b.add("l.postcode = ?", *f.postcode)
	}
	if f.minPrice != nil {
		b.add("l.price >= ?", *f.minPrice)
	}
	if f.maxPrice != nil {
		b.add("l.price <= ?", *f.maxPrice)
	}
	minBeds, minBaths := f.minBedrooms, f.minBathrooms
	if f.q != nil {
		t := parseSearch(*f.q)
		if minBeds == nil {
			minBeds = t.minBedrooms
		}
		if minBaths == nil {
			minBaths = t.minBathrooms
		}
		var parts []string
		for _, w := range t.words {
			var alts []string
			for _, a := range alternatives(w) {
				p := b.param(a)
				alts = append(alts, "to_tsquery('simple', "+p+" || ':*')", "to_tsquery('english', "+p+")")
			}
			parts = append(parts, "("+strings.Join(alts, " || ")+")")
		}
		if len(parts) > 0 {
			tsq = "(" + strings.Join(parts, " && ") + ")"
			b.conds = append(b.conds, "l.search @@ "+tsq)
		}
	}
	if minBeds != nil {
		b.add("l.bedrooms >= ?", *minBeds)
	}
	if minBaths != nil {
		b.add("l.bathrooms >= ?", *minBaths)
	}
	if f.minCarSpaces != nil {
		b.add("l.car_spaces >= ?", *f.minCarSpaces)
	}
	if f.agentID != nil {
		b.add(`EXISTS (SELECT 1 FROM listing_agents la
			WHERE la.site_id = l.site_id AND la.listing_ref = l.ref AND la.agent_id = ?)`, int64(*f.agentID))
	}
	if f.modifiedSince != nil {
		b.add("l.modified_at > ?", *f.modifiedSince)
	}
	// No status filter (modified_since without status): every status,
	// deleted included, comes back, withdrawn and deleted as tombstones.
	return b, tsq
}

// orderBy is the ORDER BY of a sort; every order ends in the ref so pages
// are stable.
func orderBy(sort, tsq string) string {
	switch sort {
	case "relevance":
		if tsq == "" {
			return "l.modified_at DESC, l.ref DESC"
		}
		return "ts_rank_cd(l.search, " + tsq + ") DESC, l.modified_at DESC, l.ref DESC"
	case "modified":
		return "l.modified_at, l.ref"
	case "price":
		return "l.price ASC NULLS LAST, l.ref"
	case "-price":
		return "l.price DESC NULLS LAST, l.ref DESC"
	case "-created":
		return "l.created_at DESC, l.ref DESC"
	case "created":
		return "l.created_at, l.ref"
	case "suburb":
		return "lower(l.suburb) ASC NULLS LAST, l.ref"
	default:
		return "l.modified_at DESC, l.ref DESC"
	}
}
