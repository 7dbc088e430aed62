package dashboard

import (
	"html/template"
	"net/http"
	"time"

	"github.com/listgate/listgate/origin/dashboard/chart"
	"github.com/listgate/listgate/origin/store"
)

// usagePeriod is a choice of the usage page: how far back, in which
// buckets.
type usagePeriod struct {
	// Key is the ?period= value; Name the link's text; Bucket names one
	// bucket ("minute"); Span the whole ("the last hour"); At the word
	// before a bucket's label ("at 14:05").
	Key, Name, Bucket, Span, At string
}

var usagePeriods = []usagePeriod{
	{Key: "hour", Name: "Last hour", Bucket: "minute", Span: "the last hour", At: "at"},
	{Key: "day", Name: "Last 30 days", Bucket: "day", Span: "the last 30 days", At: "on"},
	{Key: "month", Name: "Last 12 months", Bucket: "month", Span: "the last 12 months", At: "in"},
}

// usageBuckets lays out the period's buckets in loc ending with now's:
// their starts and the end of the last. Days and months start at local
// midnight, so a day across a daylight-saving change is 23 or 25 hours.
func usageBuckets(period string, now time.Time, loc *time.Location) (starts []time.Time, end time.Time) {
	local := now.In(loc)
	switch period {
	case "day":
		today := time.Date(local.Year(), local.Month(), local.Day(), 0, 0, 0, 0, loc)
		for i := 29; i >= 0; i-- {
			starts = append(starts, today.AddDate(0, 0, -i))
		}
		return starts, today.AddDate(0, 0, 1)
	case "month":
		month := time.Date(local.Year(), local.Month(), 1, 0, 0, 0, 0, loc)
		for i := 11; i >= 0; i-- {
			starts = append(starts, month.AddDate(0, -i, 0))
		}
		return starts, month.AddDate(0, 1, 0)
	}
	last := now.Truncate(time.Minute)
	for i := 59; i >= 0; i-- {
		starts = append(starts, last.Add(-time.Duration(i)*time.Minute))
	}
	return starts, last.Add(time.Minute)
}

// usageLabel names a bucket of the period in loc.
func usageLabel(period string, t time.Time, loc *time.Location) string {
	switch period {
	case "day":
		return t.In(loc).Format("2 Jan")
	case "month":
		return t.In(loc).Format("Jan 2006")
	}
	return t.In(loc).Format(layoutClock)
}

// usageView is what the usage page shows of a period.
type usageView struct {
	Period usagePeriod
	Total  int64
	// Peak is the busiest bucket (the latest of equals): its label and
	// requests; zero requests when the period had none.
	PeakLabel    string
	PeakRequests int64
	// Limit is the plan's requests per minute (0: none).
	Limit    int
	SVG      template.HTML
	Table    template.HTML
	ZoneName string
}

// newUsageView charts counts (one per bucket of starts, the last ending at
// end) against the plan's limit per minute scaled to each bucket.
func newUsageView(p usagePeriod, site store.Site, loc *time.Location, starts []time.Time, end time.Time, counts []int64) usageView {
	v := usageView{Period: p, Limit: site.Plan.Limit(), ZoneName: zoneName(loc, end.Add(-time.Nanosecond))}
	labels := make([]string, len(starts))
	reqs := make([]float64, len(starts))
	limits := make([]float64, len(starts))
	for i, s := range starts {
		labels[i] = usageLabel(p.Key, s, loc)
		var n int64
		if i < len(counts) {
			n = counts[i]
		}
		reqs[i] = float64(n)
		v.Total += n
		if n > 0 && n >= v.PeakRequests {
			v.PeakRequests, v.PeakLabel = n, labels[i]
		}
		next := end
		if i+1 < len(starts) {
			next = starts[i+1]
		}
		limits[i] = float64(v.Limit) * next.Sub(s).Minutes()
	}
	series := []chart.Series{{Name: "Requests", Kind: chart.Bars, Values: reqs}}
	desc := "Requests per " + p.Bucket + " served by the edges for " + site.Name + ", " + p.Span + ", times in " +
		site.Timezone + " (" + v.ZoneName + ")"
	if v.Limit > 0 {
		series = append(series, chart.Series{Name: "Plan limit", Kind: chart.Steps, Class: "limit", Values: limits})
		desc += "; the line is the plan's limit for a " + p.Bucket + "."
	} else {
		desc += "; the plan has no rate limit."
	}
	xLabel := map[string]string{"hour": "Minute", "day": "Day", "month": "Month"}[p.Key] + " (" + site.Timezone + ")"
	c := chart.Chart{ID: "usage", Title: "Requests per " + p.Bucket + ", " + p.Span, Desc: desc,
		XLabel: xLabel, YLabel: "Requests", Labels: labels, Series: series}
	v.SVG, v.Table = c.SVG(), c.Table()
	return v
}

func (h *Handler) usage(w http.ResponseWriter, r *http.Request, s *store.Session) error {
	site, err := h.site(r, s)
	if err != nil {
		return err
	}
	p := usagePeriods[0]
	for _, c := range usagePeriods {
		if c.Key == r.URL.Query().Get("period") {
			p = c
		}
	}
	loc := siteLocation(site)
	starts, end := usageBuckets(p.Key, h.cfg.Now(), loc)
	var counts []int64
	if p.Key == "hour" {
		minutes, err := h.db.UsageLastHour(r.Context(), site.ID, h.cfg.Now())
		if err != nil {
			return err
		}
		for _, m := range minutes {
			counts = append(counts, m.Requests)
		}
	} else if counts, err = h.db.UsageBuckets(r.Context(), site.ID, starts, end); err != nil {
		return err
	}
	data := h.base(s)
	data["Title"] = "Usage · " + site.Name
	data["Site"] = site
	data["Periods"] = usagePeriods
	data["Usage"] = newUsageView(p, site, loc, starts, end, counts)
	return h.render(w, http.StatusOK, "usage.html", data)
}
