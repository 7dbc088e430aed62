package listings

import (
	"fmt"
	"net/http"
	"time"

	"github.com/listgate/listgate/origin/store"
	"github.com/listgate/listgate/pkg/apierror"
	"github.com/listgate/listgate/pkg/model"
)

// Limits of the listing performance routes.
const (
	// maxViewDays bounds a period: 366 days.
	maxViewDays = 366
	// defaultViewDays is the period without from: the 30 days ending with
	// to.
	defaultViewDays = 30
	// defaultTopLimit and maxTopLimit bound the top listings.
	defaultTopLimit = 10
	maxTopLimit     = 100
)

var topSorts = []string{store.SortViews, store.SortVisitors, store.SortLeads}

// period reads from and to (dates, YYYY-MM-DD, in the site's time zone,
// inclusive): to defaults to today, from to 29 days before to; from after
// to, or a period over maxViewDays days, is a 422.
func (q *query) period(loc *time.Location, now time.Time) store.ViewPeriod {
	today := now.In(loc)
	p := store.ViewPeriod{To: time.Date(today.Year(), today.Month(), today.Day(), 0, 0, 0, 0, time.UTC), Zone: loc.String()}
	if d, ok := q.date("to"); ok {
		p.To = d
	}
	p.From = p.To.AddDate(0, 0, 1-defaultViewDays)
	if d, ok := q.date("from"); ok {
		p.From = d
	}
	switch days := int(p.To.Sub(p.From).Hours()/24) + 1; {
	case days < 1:
		q.details["from"] = "must not be after to"
	case days > maxViewDays:
		q.details["from"] = fmt.Sprintf("the period is at most %d days", maxViewDays)
	}
	return p
}

// date reads a calendar date, YYYY-MM-DD, as midnight UTC.
func (q *query) date(name string) (time.Time, bool) {
	s, ok := q.str(name)
	if !ok {
		return time.Time{}, false
	}
	d, err := time.Parse(time.DateOnly, s)
	if err != nil || d.Year() < 2000 || d.Year() > 9999 {
		q.details[name] = "must be a date such as 2026-05-01"
		return time.Time{}, false
	}
	return d, true
}

// listingViews serves one listing's views, unique visitors and leads per
// day over a period. Deleted listings are served: their history stays.
func (s *Service) listingViews(w http.ResponseWriter, r *http.Request, st site) error {
	q := newQuery(r.URL, []string{"from", "to"})
	now := s.now()
	p := q.period(st.loc, now)
	if err := q.err(); err != nil {
		return err
	}
	ref, err := s.resolve(r.Context(), st.id, r.PathValue("listing"))
	if err != nil {
		return err
	}
	out := model.ListingPerformance{ListingRef: ref, From: p.From.Format(time.DateOnly), To: p.To.Format(time.DateOnly),
		Timezone: p.Zone, GeneratedAt: now.Truncate(time.Minute).In(st.loc)}
	if err := s.db.Pool.QueryRow(r.Context(), `SELECT unique_id, agency_id, status FROM listings WHERE site_id = $1 AND ref = $2`,
		st.id, ref).Scan(&out.ListingID, &out.AgencyID, &out.Status); err != nil {
		return dbErr(err)
	}
	if out.Days, err = s.db.ListingViews(r.Context(), st.id, ref, p); err != nil {
		return dbErr(err)
	}
	for _, d := range out.Days {
		out.Totals.Views += d.Views
		out.Totals.UniqueVisitors += d.UniqueVisitors
		out.Totals.Leads += d.Leads
	}
	out.Totals.LeadsPer100Views = model.Per100(out.Totals.Leads, out.Totals.Views)
	return respond(w, r, s.cc.Stats, out)
}

// topListings serves the site's listings with the most views (or unique
// visitors, or leads) over a period.
func (s *Service) topListings(w http.ResponseWriter, r *http.Request, st site) error {
	q := newQuery(r.URL, []string{"from", "to", "sort", "limit"})
	now := s.now()
	p := q.period(st.loc, now)
	sort := q.enum("sort", topSorts, store.SortViews)
	limit := q.integer("limit", defaultTopLimit, 1, maxTopLimit)
	if err := q.err(); err != nil {
		return err
	}
	rows, err := s.db.TopListings(r.Context(), st.id, p, sort, limit)
	if err != nil {
		if _, ok := err.(*apierror.Error); ok {
			return err
		}
		return dbErr(err)
	}
	if rows == nil {
		rows = []model.TopListing{}
	}
	return respond(w, r, s.cc.Stats, model.TopListings{Data: rows, Meta: model.TopListingsMeta{
		From: p.From.Format(time.DateOnly), To: p.To.Format(time.DateOnly), Timezone: p.Zone,
		Sort: sort, Limit: limit, GeneratedAt: now.Truncate(time.Minute).In(st.loc)}})
}
