package listings

import (
	"fmt"
	"math"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/listgate/listgate/origin/api"
	"github.com/listgate/listgate/pkg/apierror"
)

// Parameters a route accepts. Anything else is a 422: the edge caches by the
// canonical query, so unknown parameters must not make distinct pages.
var (
	pageParams    = []string{"page", "per_page"}
	listingParams = append([]string{"status", "type", "category", "suburb", "state", "postcode",
		"min_price", "max_price", "min_bedrooms", "min_bathrooms", "min_car_spaces", "agent_id",
		"sort", "modified_since"}, pageParams...)
	searchParams   = append([]string{"q"}, listingParams...)
	featuredParams = append([]string{"status"}, pageParams...)
	mediaParams    = append([]string{"listing_ref", "kind", "modified_since"}, pageParams...)
)

// Limits of the query parameters.
const (
	DefaultPerPage = 20
	MaxPerPage     = 100
	maxPage        = 10000
	maxQueryLen    = 200
	maxValueLen    = 100
)

// Statuses a client may filter on; deleted listings are never served.
var servedStatuses = []string{"current", "sold", "leased", "withdrawn", "offmarket"}

// Types of listing.
var listingTypes = []string{"residential", "rental", "land", "commercial", "commercial_land", "rural", "business", "holiday_rental"}

// Sorts of the listing routes; search adds relevance (its default).
var listingSorts = []string{"-modified", "modified", "price", "-price", "-created", "created", "suburb"}

// mediaKinds are the kinds of media object.
var mediaKinds = []string{"image", "floorplan", "document", "video", "link"}

// query reads one request's parameters strictly, collecting every problem.
type query struct {
	v         url.Values
	details   map[string]string
	malformed error // the query did not parse: its error, alone
}

// newQuery parses the query as url.ParseQuery does (the edge keys its cache
// on the same parse) and rejects a query it cannot parse whole, unknown
// parameters and repeated ones.
func newQuery(u *url.URL, allowed []string) *query {
	q := &query{v: url.Values{}, details: map[string]string{}}
	if len(u.RawQuery) > 4096 {
		q.details["query"] = "query string too long"
		return q
	}
	v, err := api.ParseQuery(u.RawQuery)
	if err != nil {
		q.malformed = err
		return q
	}
	q.v = v
	ok := map[string]bool{}
	for _, a := range allowed {
		ok[a] = true
	}
	for k, vs := range q.v {
		switch {
		case !ok[k]:
			q.details[cut(k)] = "unknown parameter"
		case len(vs) > 1:
			q.details[k] = "given more than once"
		}
	}
	return q
}

// err returns the validation error, or nil when every parameter was good.
func (q *query) err() error {
	if q.malformed != nil {
		return q.malformed
	}
	if len(q.details) == 0 {
		return nil
	}
	return apierror.Validation(q.details)
}

func (q *query) str(name string) (string, bool) {
	vs, ok := q.v[name]
	if !ok || len(vs) != 1 {
		return "", false
	}
	s := strings.TrimSpace(vs[0])
	if s == "" {
		q.details[name] = "must not be empty"
		return "", false
	}
	if len(s) > maxValueLen && name != "q" {
		q.details[name] = fmt.Sprintf("longer than %d characters", maxValueLen)
		return "", false
	}
	return s, true
}

// integer reads an integer parameter within [lo, hi]; def when absent.
func (q *query) integer(name string, def, lo, hi int) int {
	s, ok := q.str(name)
	if !ok {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		q.details[name] = "must be an integer"
		return def
	}
	if n < lo || n > hi {
		q.details[name] = fmt.Sprintf("must be between %d and %d", lo, hi)
		return def
	}
	return n
}

// optInt reads an optional integer ≥ 0.
func (q *query) optInt(name string, hi int) *int {
	if _, ok := q.v[name]; !ok {
		return nil
	}
	n := q.integer(name, -1, 0, hi)
	if n < 0 {
		return nil
	}
	return &n
}

// optNumber reads an optional non-negative number.
func (q *query) optNumber(name string) *float64 {
	s, ok := q.str(name)
	if !ok {
		return nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 || f > 1e12 {
		q.details[name] = "must be a non-negative number"
		return nil
	}
	return &f
}

// enumList reads a comma-separated list of allowed values.
func (q *query) enumList(name string, allowed []string) []string {
	s, ok := q.str(name)
	if !ok {
		return nil
	}
	var out []string
	seen := map[string]bool{}
	for _, p := range strings.Split(s, ",") {
		p = strings.ToLower(strings.TrimSpace(p))
		if !contains(allowed, p) {
			q.details[name] = fmt.Sprintf("%q is not one of %s", cut(p), strings.Join(allowed, ", "))
			return nil
		}
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

// enum reads one allowed value; def when absent.
func (q *query) enum(name string, allowed []string, def string) string {
	s, ok := q.str(name)
	if !ok {
		return def
	}
	if !contains(allowed, s) {
		q.details[name] = fmt.Sprintf("must be one of %s", strings.Join(allowed, ", "))
		return def
	}
	return s
}

// timestamp reads an RFC 3339 time.
func (q *query) timestamp(name string) *time.Time {
	s, ok := q.str(name)
	if !ok {
		return nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		q.details[name] = "must be an RFC 3339 time such as 2024-05-01T09:00:00+10:00"
		return nil
	}
	return &t
}

// text reads a free-text value (suburb, category, q).
func (q *query) text(name string, max int) *string {
	s, ok := q.str(name)
	if !ok {
		return nil
	}
	if len(s) > max {
		q.details[name] = fmt.Sprintf("longer than %d characters", max)
		return nil
	}
	return &s
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// cut bounds a client's string echoed in an error message.
func cut(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// page is a collection request's page and page size.
type page struct{ page, perPage int }

func (q *query) page() page {
	return page{
		page:    q.integer("page", 1, 1, maxPage),
		perPage: q.integer("per_page", DefaultPerPage, 1, MaxPerPage),
	}
}

func (p page) offset() int { return (p.page - 1) * p.perPage }

// listingFilter is the parsed filter set of the listing routes.
type listingFilter struct {
	page
	statuses      []string
	types         []string
	category      *string
	suburb, state *string
	postcode      *string
	minPrice      *float64
	maxPrice      *float64
	minBedrooms   *int
	minBathrooms  *int
	minCarSpaces  *int
	agentID       *int
	sort          string
	modifiedSince *time.Time
	q             *string
	featuredOnly  bool
}

// parseListingFilter reads the parameters of the list, search and featured
// routes.
func parseListingFilter(u *url.URL, allowed []string, search bool) (listingFilter, error) {
	q := newQuery(u, allowed)
	f := listingFilter{page: q.page()}
	f.statuses = q.enumList("status", servedStatuses)
	f.types = q.enumList("type", listingTypes)
	f.category = q.text("category", maxValueLen)
	f.suburb = q.text("suburb", maxValueLen)
	if s := q.text("state", 3); s != nil {
		up := strings.ToUpper(*s)
		f.state = &up
	}
	f.postcode = q.text("postcode", 4)
	f.minPrice = q.optNumber("min_price")
	f.maxPrice = q.optNumber("max_price")
	if f.minPrice != nil && f.maxPrice != nil && *f.minPrice > *f.maxPrice {
		q.details["max_price"] = "must not be below min_price"
	}
	f.minBedrooms = q.optInt("min_bedrooms", 100)
	f.minBathrooms = q.optInt("min_bathrooms", 100)
	f.minCarSpaces = q.optInt("min_car_spaces", 100)
	f.agentID = q.optInt("agent_id", math.MaxInt32)
	f.modifiedSince = q.timestamp("modified_since")
	sorts := listingSorts
	def := "-modified"
	if search {
		sorts = append([]string{"relevance"}, listingSorts...)
		def = "relevance"
		f.q = q.text("q", maxQueryLen)
		if f.q == nil {
			if _, given := q.details["q"]; !given {
				q.details["q"] = "is required"
			}
		}
	}
	f.sort = q.enum("sort", sorts, def)
	if f.statuses == nil && f.modifiedSince == nil {
		f.statuses = []string{"current"}
	}
	return f, q.err()
}
