package dashboard

import (
	"net/http"
	"strconv"
	"time"

	"github.com/listgate/listgate/origin/dashboard/chart"
	"github.com/listgate/listgate/origin/store"
	"github.com/listgate/listgate/pkg/model"
)

// Listing performance: a listing's page (daily views and enquiries over the
// last 30 days), the site's top listings of the week, and the printable
// vendor report (the last 8 weeks, weeks from Monday). Days and weeks are
// the site's, in its time zone, as the edges count them (listing_views).

const (
	// detailDays is the listing page's period, ending today.
	detailDays = 30
	// reportWeeks is the vendor report's, ending with this week.
	reportWeeks = 8
	// topDays and topLimit are the performance page's period (ending
	// today) and its number of listings.
	topDays  = 7
	topLimit = 20
)

// formatPer100 writes leads per 100 views: "—" without views, else up to
// two decimals ("2.5").
func formatPer100(v *float64) string {
	if v == nil {
		return "—"
	}
	return strconv.FormatFloat(*v, 'f', -1, 64)
}

// photoCSP is the Content-Security-Policy of the pages that show a
// listing's photo: the dashboard's, with images also from any https
// origin (the feed's media hosts are many and unknown), and from any http
// one when the dashboard itself is served over plain HTTP (development);
// over HTTPS a browser upgrades an http photo to https. Scripts, styles,
// frames and forms stay 'self'; Referrer-Policy same-origin keeps the
// dashboard's addresses from the photo's host.
func photoCSP(r *http.Request) string {
	img := "img-src 'self' https:"
	if !isSecure(r) {
		img += " http:"
	}
	return csp + "; " + img
}

// listingRef returns the request's {ref}, or a 404.
func listingRef(r *http.Request) (int64, error) {
	ref, err := strconv.ParseInt(r.PathValue("ref"), 10, 64)
	if err != nil || ref <= 0 {
		return 0, errNotFound()
	}
	return ref, nil
}

// localDate is t's calendar date in loc, as midnight UTC (the form of
// store.ViewPeriod's dates).
func localDate(t time.Time, loc *time.Location) time.Time {
	l := t.In(loc)
	return time.Date(l.Year(), l.Month(), l.Day(), 0, 0, 0, 0, time.UTC)
}

// daysOnMarket counts the whole days in loc from the listing's first
// import to now for a current listing, to its last change (when it was
// sold, leased, withdrawn, taken off the market or deleted) otherwise.
func daysOnMarket(l store.ListingSummary, now time.Time, loc *time.Location) int {
	end := now
	if l.Status != "current" && l.ModifiedAt.Before(now) {
		end = l.ModifiedAt
	}
	d := int(localDate(end, loc).Sub(localDate(l.CreatedAt, loc)).Hours() / 24)
	return max(d, 0)
}

// sumDays adds days' figures.
func sumDays(days []model.ViewDay) model.ViewFigures {
	var f model.ViewFigures
	for _, d := range days {
		f.Views += d.Views
		f.UniqueVisitors += d.UniqueVisitors
		f.Leads += d.Leads
	}
	f.LeadsPer100Views = model.Per100(f.Leads, f.Views)
	return f
}

// dayLabel is "2 Jan" of a YYYY-MM-DD date.
func dayLabel(date string) string {
	d, err := time.Parse(time.DateOnly, date)
	if err != nil {
		return date
	}
	return d.Format("2 Jan")
}

// listingPage is what a listing's page and its report show of it.
type listingPage struct {
	Listing      store.ListingSummary
	Title, Place string
	ListedOn     string
	DaysOnMarket int
}

func newListingPage(l store.ListingSummary, now time.Time, loc *time.Location) listingPage {
	p := listingPage{Listing: l, Title: l.Title(), Place: l.PlaceText(),
		ListedOn: l.CreatedAt.In(loc).Format("2 Jan 2006"), DaysOnMarket: daysOnMarket(l, now, loc)}
	if p.Place == "" {
		p.Place = "Address not shown"
	}
	return p
}

// siteListing returns the request's site (the account's) and its listing
// {ref}; 404 for another account's site or a listing the site has not.
func (h *Handler) siteListing(r *http.Request, s *store.Session) (store.Site, store.ListingSummary, error) {
	site, err := h.site(r, s)
	if err != nil {
		return store.Site{}, store.ListingSummary{}, err
	}
	ref, err := listingRef(r)
	if err != nil {
		return store.Site{}, store.ListingSummary{}, err
	}
	l, err := h.db.DashboardListing(r.Context(), site.ID, ref)
	return site, l, err
}

// listingDetail is a listing's page: its views, unique visitors and
// enquiries per day over the last 30 days, charted, with their totals.
func (h *Handler) listingDetail(w http.ResponseWriter, r *http.Request, s *store.Session) error {
	site, l, err := h.siteListing(r, s)
	if err != nil {
		return err
	}
	loc := siteLocation(site)
	now := h.cfg.Now()
	to := localDate(now, loc)
	p := store.ViewPeriod{From: to.AddDate(0, 0, 1-detailDays), To: to, Zone: loc.String()}
	days, err := h.db.ListingViews(r.Context(), site.ID, l.Ref, p)
	if err != nil {
		return err
	}
	labels := make([]string, len(days))
	views, visitors, leads := make([]float64, len(days)), make([]float64, len(days)), make([]float64, len(days))
	for i, d := range days {
		labels[i] = dayLabel(d.Date)
		views[i], visitors[i], leads[i] = float64(d.Views), float64(d.UniqueVisitors), float64(d.Leads)
	}
	span := p.From.Format("2 Jan") + " – " + p.To.Format("2 Jan 2006")
	xLabel := "Day (" + loc.String() + ")"
	viewsChart := chart.Chart{ID: "views", Title: "Views per day, the last 30 days",
		Desc: "Views and unique visitors of the listing per day, " + span + ", days in " + loc.String() +
			"; the bars are views, the line unique visitors.",
		XLabel: xLabel, YLabel: "Views", Labels: labels, Series: []chart.Series{
			{Name: "Views", Kind: chart.Bars, Values: views},
			{Name: "Unique visitors", Kind: chart.Line, Class: "visitors", Values: visitors}}}
	leadsChart := chart.Chart{ID: "enquiries", Title: "Enquiries per day, the last 30 days",
		Desc:   "Enquiries (leads naming the listing, spam excluded) per day, " + span + ", days in " + loc.String() + ".",
		XLabel: xLabel, YLabel: "Enquiries", Labels: labels, Height: 200, Series: []chart.Series{
			{Name: "Enquiries", Kind: chart.Bars, Class: "leads", Values: leads}}}
	data := h.base(s)
	data["Title"] = l.Title() + " · " + site.Name
	data["Site"] = site
	data["Page"] = newListingPage(l, now, loc)
	data["Totals"] = sumDays(days)
	data["Span"] = span
	data["ViewsSVG"], data["ViewsTable"] = viewsChart.SVG(), viewsChart.Table()
	data["LeadsSVG"], data["LeadsTable"] = leadsChart.SVG(), leadsChart.Table()
	return h.renderCSP(w, http.StatusOK, "listing.html", data, photoCSP(r))
}

// reportWeek is a week of the vendor report.
type reportWeek struct {
	// Label is the week's first and last day ("Mon 17 Nov – Sun 23 Nov");
	// ToDate marks the current week, counted to today.
	Label  string
	ToDate bool
	model.ViewFigures
}

// reportWeeksOf groups days (consecutive, from a Monday) into weeks.
func reportWeeksOf(days []model.ViewDay, from, today time.Time) []reportWeek {
	var weeks []reportWeek
	for i := 0; i < len(days); i += 7 {
		end := min(i+7, len(days))
		first := from.AddDate(0, 0, i)
		last := first.AddDate(0, 0, 6)
		wk := reportWeek{ViewFigures: sumDays(days[i:end])}
		if !last.Before(today) {
			wk.ToDate = true
			last = today
		}
		wk.Label = first.Format("Mon 2 Jan") + " – " + last.Format("Mon 2 Jan")
		weeks = append(weeks, wk)
	}
	return weeks
}

// vendorReport is the printable one-page report of a listing for its
// vendor: the agency's name, the listing's photo and address, days on
// market, and views, unique visitors and enquiries by week over the last
// 8 weeks with their totals and the totals since listed. A deleted
// listing's report shows what is known.
func (h *Handler) vendorReport(w http.ResponseWriter, r *http.Request, s *store.Session) error {
	site, l, err := h.siteListing(r, s)
	if err != nil {
		return err
	}
	loc := siteLocation(site)
	now := h.cfg.Now()
	today := localDate(now, loc)
	monday := today.AddDate(0, 0, -((int(today.Weekday()) + 6) % 7))
	from := monday.AddDate(0, 0, -7*(reportWeeks-1))
	days, err := h.db.ListingViews(r.Context(), site.ID, l.Ref, store.ViewPeriod{From: from, To: today, Zone: loc.String()})
	if err != nil {
		return err
	}
	all, err := h.db.ListingTotals(r.Context(), site.ID, l.Ref)
	if err != nil {
		return err
	}
	weeks := reportWeeksOf(days, from, today)
	labels := make([]string, len(weeks))
	views, visitors := make([]float64, len(weeks)), make([]float64, len(weeks))
	for i, wk := range weeks {
		labels[i] = from.AddDate(0, 0, 7*i).Format("2 Jan")
		views[i], visitors[i] = float64(wk.Views), float64(wk.UniqueVisitors)
	}
	c := chart.Chart{ID: "report", Title: "Views per week, the last 8 weeks",
		Desc: "Views and unique visitors of the listing per week (Monday to Sunday, " + loc.String() +
			"), the last 8 weeks; the numbers are in the table below.",
		XLabel: "Week starting (" + loc.String() + ")", YLabel: "Views", Labels: labels, Height: 170, MaxXTicks: 8,
		Series: []chart.Series{
			{Name: "Views", Kind: chart.Bars, Values: views},
			{Name: "Unique visitors", Kind: chart.Bars, Class: "visitors", Values: visitors}}}
	data := h.base(s)
	data["Title"] = "Vendor report · " + l.Title() + " · " + site.Name
	data["Site"] = site
	data["Page"] = newListingPage(l, now, loc)
	data["Weeks"] = weeks
	data["WeeksTotal"] = sumDays(days)
	data["AllTime"] = all
	data["From"] = from.Format("2 Jan 2006")
	data["ReportSVG"] = c.SVG()
	data["Generated"] = now
	return h.renderCSP(w, http.StatusOK, "report.html", data, photoCSP(r))
}

// topRow is a listing of the performance page.
type topRow struct {
	model.TopListing
	Title, Place string
}

// topSorts are the performance page's orders: ?sort= value, link text,
// store sort.
var topSorts = []struct{ Key, Name, Sort string }{
	{"views", "Views", store.SortViews},
	{"visitors", "Unique visitors", store.SortVisitors},
	{"leads", "Enquiries", store.SortLeads},
}

// performance is the site's top listings of the last 7 days by views (or
// unique visitors, or enquiries), each linked to its page and report.
func (h *Handler) performance(w http.ResponseWriter, r *http.Request, s *store.Session) error {
	site, err := h.site(r, s)
	if err != nil {
		return err
	}
	sort := topSorts[0]
	for _, o := range topSorts {
		if o.Key == r.URL.Query().Get("sort") {
			sort = o
		}
	}
	loc := siteLocation(site)
	to := localDate(h.cfg.Now(), loc)
	p := store.ViewPeriod{From: to.AddDate(0, 0, 1-topDays), To: to, Zone: loc.String()}
	top, err := h.db.TopListings(r.Context(), site.ID, p, sort.Sort, topLimit)
	if err != nil {
		return err
	}
	refs := make([]int64, len(top))
	for i, t := range top {
		refs[i] = t.ListingRef
	}
	ls, err := h.db.DashboardListingRows(r.Context(), site.ID, refs)
	if err != nil {
		return err
	}
	rows := make([]topRow, len(top))
	for i, t := range top {
		l := ls[t.ListingRef]
		rows[i] = topRow{TopListing: t, Title: l.Title(), Place: store.ListingSummary{ListingRow: l}.PlaceText()}
	}
	data := h.base(s)
	data["Title"] = "Listing performance · " + site.Name
	data["Site"] = site
	data["Rows"] = rows
	data["Sorts"] = topSorts
	data["Sort"] = sort.Key
	data["Span"] = p.From.Format("Mon 2 Jan") + " – " + p.To.Format("Mon 2 Jan 2006")
	return h.render(w, http.StatusOK, "performance.html", data)
}
