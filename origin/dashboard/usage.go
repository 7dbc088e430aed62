package dashboard

import (
	"net/http"
	"time"

	"github.com/listgate/listgate/origin/store"
)

// The usage chart's geometry, in SVG user units: one bar per minute.
const (
	chartBarPitch  = 10 // from one bar's left edge to the next one's
	chartBarWidth  = 8
	chartHeight    = 120 // the bars' area; the axis labels go below
	chartMinHeight = 1   // a minute with requests stays visible
)

// usageBar is one minute of the usage chart.
type usageBar struct {
	X, Y, Width, Height int
	Minute              time.Time
	Requests            int64
}

// usageChart is the last hour of a site's usage as the page shows it.
type usageChart struct {
	Bars          []usageBar
	Width, Height int
	Total         int64
	// Peak is the busiest minute (the latest of equals); zero Requests when
	// the hour had none.
	Peak          store.UsageCount
	First, Last   time.Time
	LabelY        int
	ViewBoxHeight int
}

// newUsageChart lays out counts (oldest first) as bars scaled to the peak.
func newUsageChart(counts []store.UsageCount) usageChart {
	c := usageChart{Width: len(counts) * chartBarPitch, Height: chartHeight,
		LabelY: chartHeight + 14, ViewBoxHeight: chartHeight + 20}
	for _, u := range counts {
		c.Total += u.Requests
		if u.Requests >= c.Peak.Requests {
			c.Peak = u
		}
	}
	if len(counts) > 0 {
		c.First, c.Last = counts[0].Minute, counts[len(counts)-1].Minute
	}
	for i, u := range counts {
		h := 0
		if c.Peak.Requests > 0 && u.Requests > 0 {
			h = max(chartMinHeight, int(float64(u.Requests)/float64(c.Peak.Requests)*chartHeight))
		}
		c.Bars = append(c.Bars, usageBar{X: i * chartBarPitch, Y: chartHeight - h, Width: chartBarWidth,
			Height: h, Minute: u.Minute, Requests: u.Requests})
	}
	return c
}

func (h *Handler) usage(w http.ResponseWriter, r *http.Request, s *store.Session) error {
	site, err := h.site(r, s)
	if err != nil {
		return err
	}
	counts, err := h.db.UsageLastHour(r.Context(), site.ID, h.cfg.Now())
	if err != nil {
		return err
	}
	data := h.base(s)
	data["Title"] = "Usage · " + site.Name
	data["Site"] = site
	data["Chart"] = newUsageChart(counts)
	return h.render(w, http.StatusOK, "usage.html", data)
}
