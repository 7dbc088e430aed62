package listings

import (
	"net/http"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/listgate/listgate/pkg/model"
)

// fields describes every field a search form can filter or sort on, with
// the values present on the site and how many current listings have each.
func (s *Service) fields(w http.ResponseWriter, r *http.Request, st site) error {
	q := newQuery(r.URL, pageParams)
	p := q.page()
	if err := q.err(); err != nil {
		return err
	}
	counts := map[string]map[string]int{}
	var ranges struct{ minPrice, maxPrice, minBeds, maxBeds, minBaths, maxBaths, minCars, maxCars *float64 }
	b := &pgx.Batch{}
	// The site's counts of listings by status and value (listing_facets,
	// kept with the listings), not a count of its listings: a few hundred
	// rows whatever the site's size.
	b.Queue(`SELECT status, sum(n)::bigint FROM listing_facets WHERE site_id = $1 AND field = 'type' AND status <> 'deleted'
		GROUP BY status HAVING sum(n) > 0`, st.id).
		Query(func(rs pgx.Rows) error { return collectCounts(rs, counts, "status") })
	b.Queue(`SELECT field, value, sum(n)::bigint FROM listing_facets
		WHERE site_id = $1 AND status = 'current' AND field IN ('type', 'category', 'suburb', 'state', 'postcode')
		GROUP BY field, value HAVING sum(n) > 0`, st.id).
		Query(func(rs pgx.Rows) error {
			var field string
			var value *string
			var n int
			_, err := pgx.ForEachRow(rs, []any{&field, &value, &n}, func() error {
				if value != nil && *value != "" {
					if counts[field] == nil {
						counts[field] = map[string]int{}
					}
					counts[field][*value] += n
				}
				return nil
			})
			return err
		})
	b.Queue(`SELECT min(price), max(price), min(bedrooms), max(bedrooms), min(bathrooms), max(bathrooms),
			min(car_spaces), max(car_spaces)
		FROM (SELECT CASE WHEN field LIKE 'price:%' THEN value::numeric END AS price,
				CASE WHEN field = 'bedrooms' THEN value::numeric END AS bedrooms,
				CASE WHEN field = 'bathrooms' THEN value::numeric END AS bathrooms,
				CASE WHEN field = 'car_spaces' THEN value::numeric END AS car_spaces
			FROM listing_facets WHERE site_id = $1 AND status = 'current'
				AND (field LIKE 'price:%' OR field IN ('bedrooms', 'bathrooms', 'car_spaces'))
			GROUP BY field, value HAVING sum(n) > 0) v`, st.id).
		QueryRow(func(row pgx.Row) error {
			return row.Scan(&ranges.minPrice, &ranges.maxPrice, &ranges.minBeds, &ranges.maxBeds,
				&ranges.minBaths, &ranges.maxBaths, &ranges.minCars, &ranges.maxCars)
		})
	if err := s.db.Pool.SendBatch(r.Context(), b).Close(); err != nil {
		return dbErr(err)
	}

	enum := func(name string, allowed []string) []model.FieldValue {
		out := []model.FieldValue{}
		for _, v := range allowed {
			n := counts[name][v]
			out = append(out, model.FieldValue{Value: v, Count: &n})
		}
		return out
	}
	present := func(name string) []model.FieldValue {
		out := []model.FieldValue{}
		for _, v := range sortedKeys(counts[name]) {
			n := counts[name][v]
			out = append(out, model.FieldValue{Value: v, Count: &n})
		}
		return out
	}
	sorts := []model.FieldValue{}
	for _, v := range listingSorts {
		sorts = append(sorts, model.FieldValue{Value: v})
	}
	all := []model.Field{
		{Name: "status", Label: "Status", Type: "enum", Filterable: true, Params: []string{"status"}, Values: enum("status", servedStatuses)},
		{Name: "type", Label: "Listing type", Type: "enum", Filterable: true, Params: []string{"type"}, Values: enum("type", listingTypes)},
		{Name: "category", Label: "Category", Type: "string", Filterable: true, Params: []string{"category"}, Values: present("category")},
		{Name: "suburb", Label: "Suburb", Type: "string", Filterable: true, Sortable: true, Params: []string{"suburb"}, Values: present("suburb")},
		{Name: "state", Label: "State", Type: "string", Filterable: true, Params: []string{"state"}, Values: present("state")},
		{Name: "postcode", Label: "Postcode", Type: "string", Filterable: true, Params: []string{"postcode"}, Values: present("postcode")},
		{Name: "price", Label: "Price", Type: "number", Filterable: true, Sortable: true, Params: []string{"min_price", "max_price"}, Values: []model.FieldValue{}, Min: ranges.minPrice, Max: ranges.maxPrice},
		{Name: "bedrooms", Label: "Bedrooms", Type: "integer", Filterable: true, Params: []string{"min_bedrooms"}, Values: []model.FieldValue{}, Min: ranges.minBeds, Max: ranges.maxBeds},
		{Name: "bathrooms", Label: "Bathrooms", Type: "integer", Filterable: true, Params: []string{"min_bathrooms"}, Values: []model.FieldValue{}, Min: ranges.minBaths, Max: ranges.maxBaths},
		{Name: "car_spaces", Label: "Car spaces", Type: "integer", Filterable: true, Params: []string{"min_car_spaces"}, Values: []model.FieldValue{}, Min: ranges.minCars, Max: ranges.maxCars},
		{Name: "agent_id", Label: "Agent", Type: "integer", Filterable: true, Params: []string{"agent_id"}, Values: []model.FieldValue{}},
		{Name: "q", Label: "Keywords", Type: "string", Filterable: true, Params: []string{"q"}, Values: []model.FieldValue{}},
		{Name: "modified", Label: "Last changed", Type: "date", Filterable: true, Sortable: true, Params: []string{"modified_since"}, Values: []model.FieldValue{}},
		{Name: "created", Label: "Listed", Type: "date", Sortable: true, Params: []string{}, Values: []model.FieldValue{}},
		{Name: "sort", Label: "Sort order", Type: "enum", Params: []string{"sort"}, Values: sorts},
	}
	total := len(all)
	from := min(p.offset(), total)
	to := min(from+p.perPage, total)
	return respond(w, r, s.cc.Listings, model.Collection[model.Field]{Data: all[from:to], Meta: meta(p, total)})
}

func collectCounts(rs pgx.Rows, counts map[string]map[string]int, field string) error {
	var v string
	var n int
	counts[field] = map[string]int{}
	_, err := pgx.ForEachRow(rs, []any{&v, &n}, func() error { counts[field][v] = n; return nil })
	return err
}

func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
