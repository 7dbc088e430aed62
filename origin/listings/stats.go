package listings

import (
	"time"

	"net/http"

	"github.com/jackc/pgx/v5"

	"github.com/listgate/listgate/pkg/model"
)

// leadTypes are the lead types counted in the summary.
var leadTypes = []string{"inquiry", "appraisal", "rental_application", "general"}

// saleTypes are the listing types sold rather than leased.
var saleTypes = []string{"residential", "land", "rural", "commercial", "commercial_land", "business"}

// stats serves the site's summary: listing counts by status and type, the
// price range and median of current sale listings whose price may be shown,
// leads of the last 7 and 30 days by type, and the agent count.
func (s *Service) stats(w http.ResponseWriter, r *http.Request, st site) error {
	if err := newQuery(r.URL, nil).err(); err != nil {
		return err
	}
	out := model.StatsSummary{
		Listings: model.ListingStats{ByStatus: map[string]int{}, ByType: map[string]int{}},
		Leads:    model.LeadStats{Last7Days: map[string]int{}, Last30Days: map[string]int{}},
	}
	for _, v := range servedStatuses {
		out.Listings.ByStatus[v] = 0
	}
	for _, v := range listingTypes {
		out.Listings.ByType[v] = 0
	}
	for _, v := range leadTypes {
		out.Leads.Last7Days[v], out.Leads.Last30Days[v] = 0, 0
	}
	now := s.now()
	b := &pgx.Batch{}
	// Counted from the site's counts of listings by status and value
	// (listing_facets, kept with the listings), not from its listings: a
	// few hundred rows whatever the site's size.
	b.Queue(`SELECT status, value, sum(n)::bigint FROM listing_facets WHERE site_id = $1 AND field = 'type' AND status <> 'deleted'
		GROUP BY status, value HAVING sum(n) > 0`, st.id).Query(func(rs pgx.Rows) error {
		var status, typ string
		var n int
		_, err := pgx.ForEachRow(rs, []any{&status, &typ, &n}, func() error {
			out.Listings.Total += n
			out.Listings.ByStatus[status] += n
			out.Listings.ByType[typ] += n
			return nil
		})
		return err
	})
	p := &out.Listings.Price
	// The median as percentile_cont(0.5) computes it over every price: the
	// mean, in float8, of the prices at the middle positions (the same one
	// when the count is odd), found by the counts of each price.
	saleFields := make([]string, len(saleTypes))
	for i, t := range saleTypes {
		saleFields[i] = "price:" + t
	}
	b.Queue(`WITH v AS (SELECT value::numeric AS price, sum(n) AS n FROM listing_facets
			WHERE site_id = $1 AND status = 'current' AND field = ANY($2) GROUP BY value HAVING sum(n) > 0),
		c AS (SELECT price, sum(n) OVER (ORDER BY price) AS upto, sum(n) OVER () AS total FROM v),
		m AS (SELECT coalesce(max(total), 0) AS total, min(price) AS lo_price, max(price) AS hi_price,
				min(price) FILTER (WHERE upto > floor((total - 1) / 2)) AS first,
				min(price) FILTER (WHERE upto > ceil((total - 1) / 2)) AS second FROM c)
		SELECT total::bigint, lo_price, hi_price,
			CASE WHEN total > 0 THEN first::float8 + ((0.5 * (total - 1)) - floor(0.5 * (total - 1)))::float8 * (second::float8 - first::float8) END
		FROM m`,
		st.id, saleFields).QueryRow(func(row pgx.Row) error {
		return row.Scan(&p.Count, &p.Min, &p.Max, &p.Median)
	})
	b.Queue(`SELECT type, count(*) FILTER (WHERE created_at > $2::timestamptz - interval '7 days'), count(*)
		FROM leads WHERE site_id = $1 AND created_at > $2::timestamptz - interval '30 days' GROUP BY type`, st.id, now).
		Query(func(rs pgx.Rows) error {
			var typ string
			var week, month int
			_, err := pgx.ForEachRow(rs, []any{&typ, &week, &month}, func() error {
				out.Leads.Last7Days[typ], out.Leads.Last30Days[typ] = week, month
				return nil
			})
			return err
		})
	b.Queue(`SELECT count(*) FROM agents WHERE site_id = $1`, st.id).QueryRow(func(row pgx.Row) error {
		return row.Scan(&out.AgentCount)
	})
	if err := s.db.Pool.SendBatch(r.Context(), b).Close(); err != nil {
		return dbErr(err)
	}
	// To the minute: the summary keeps one ETag for a minute, so clients and
	// the edge can revalidate it.
	out.GeneratedAt = now.Truncate(time.Minute).In(st.loc)
	return respond(w, r, s.cc.Stats, out)
}
