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
// the tsquery expression that matches ("" otherwise) and the one that
// ranks (rankq; see rankWord).
func listingWhere(siteID string, f listingFilter) (b *sqlBuilder, tsq, rankq string) {
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
		var parts, rparts []string
		for _, w := range t.words {
			var alts, ralts []string
			for _, a := range alternatives(w) {
				p := b.param(a)
				alts = append(alts, prefixQuery(p)+" || "+stemQuery(p))
				ralts = append(ralts, rankWord(p))
			}
			parts = append(parts, "("+strings.Join(alts, " || ")+")")
			rparts = append(rparts, "("+strings.Join(ralts, " || ")+")")
		}
		if len(parts) > 0 {
			tsq = "(" + strings.Join(parts, " && ") + ")"
			rankq = "(" + strings.Join(rparts, " && ") + ")"
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
	return b, tsq, rankq
}

// prefixQuery and stemQuery are the text-search queries a search word's
// spelling (the SQL parameter p) matches by: the word as a prefix (as
// typed), or its English stem (houses: hous).
func prefixQuery(p string) string { return "to_tsquery('simple', " + p + " || ':*')" }
func stemQuery(p string) string   { return "to_tsquery('english', " + p + ")" }

// rankWord is the query a spelling ranks by: the stem is left out when it
// starts with the word (kitchen: kitchen; bedr: bedr), since the prefix
// already matches it. The rank is the same — ts_rank_cd gathers the
// positions a listing's lexemes match, and the stem's are among the
// prefix's (TestRankQueryRanksAlike) — and it costs less: in PostgreSQL 15
// ts_rank_cd clears 32 KiB for each item of the query at every cover it
// finds, most of its time, so ranking by a three-word query of 5 items
// instead of 11 takes half the time. Matching keeps the whole query: the
// planner's estimate of how many listings a query matches (which chooses
// between walking the newest listings and the full-text index) is of that
// query, and the smaller one, estimated lower, took the full-text index
// where walking ran in half the time. The expression is of the parameter
// and immutable functions only, so a search planned with its values
// (customPlan) ranks by a constant.
func rankWord(p string) string {
	s, e := prefixQuery(p), stemQuery(p)
	return "CASE WHEN numnode(" + s + ") = 1 AND numnode(" + e + ") = 1 AND starts_with(" + e + "::text, left(" + s + "::text, -3))" +
		" THEN " + s + " ELSE " + s + " || " + e + " END"
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
