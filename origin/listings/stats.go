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
	b.Queue(`SELECT status, type, count(*) FROM listings WHERE site_id = $1 AND status <> 'deleted'
		GROUP BY status, type`, st.id).Query(func(rs pgx.Rows) error {
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
	b.Queue(`SELECT count(price), min(price), max(price), percentile_cont(0.5) WITHIN GROUP (ORDER BY price)
		FROM listings WHERE site_id = $1 AND status = 'current' AND type = ANY($2) AND price_shown AND price IS NOT NULL`,
		st.id, saleTypes).QueryRow(func(row pgx.Row) error {
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
