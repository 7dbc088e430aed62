// Package chart draws the dashboard's charts as server-rendered SVG: bars,
// lines and steps over a row of buckets (minutes, days, months, listings…),
// with labelled axes, ticks and grid lines, and the same numbers as an HTML
// table for those who cannot see the picture. No JavaScript, no inline
// style (the dashboard's Content-Security-Policy forbids it): every part has
// a class the stylesheet colours.
//
// Use:
//
//	c := chart.Chart{
//		ID:     "usage",                       // prefixes the element ids
//		Title:  "Requests per day",            // the SVG's <title>, the table's caption
//		Desc:   "Last 30 days, Australia/Sydney; the line is the plan's limit.",
//		XLabel: "Day (AEDT)", YLabel: "Requests",
//		Labels: []string{"1 Nov", "2 Nov", …}, // one per bucket, in order
//		Series: []chart.Series{
//			{Name: "Requests", Kind: chart.Bars, Values: []float64{…}},
//			{Name: "Plan limit", Kind: chart.Steps, Class: "limit", Values: []float64{…}},
//		},
//	}
//	svg, table := c.SVG(), c.Table()   // template.HTML, ready to put in a page
//
// Every series has one value per label (missing ones count as 0; extra ones
// are ignored); a negative value or NaN counts as 0. Bars of several Bars
// series stand side by side within a bucket; Line joins the buckets'
// centres; Steps draws each value as a flat segment across its bucket (a
// limit that differs by bucket, such as a plan's limit per day across a
// daylight-saving change). The y axis starts at 0 and ends at a round
// number at or above the largest value of every series, so a limit is
// always on the chart; its ticks are round numbers (1, 2 or 5 × 10ⁿ). At
// most MaxXTicks labels are written under the x axis, evenly spread and
// always including the first and the last; every bucket's label is in its
// bar's tooltip (<title>) and the table.
//
// Drawn elements carry data-label and data-value (bars and points), so
// tests can read what was drawn: a bar is
// <rect class="bar s0" data-label="…" data-value="…" …>, a Steps or Line
// series a <path class="series s1 limit" data-values="v1 v2 …">.
package chart

import (
	"fmt"
	"html"
	"html/template"
	"math"
	"strconv"
	"strings"
)

// Kind is how a series is drawn.
type Kind int

const (
	// Bars draws a bar per bucket.
	Bars Kind = iota
	// Line joins the buckets' centres.
	Line
	// Steps draws a flat segment across each bucket.
	Steps
)

// Series is one row of values, one per label.
type Series struct {
	// Name is shown in the legend and heads the table's column.
	Name string
	Kind Kind
	// Class is added to the series' elements, for the stylesheet
	// ("limit"). Classes s0, s1 … (by position) are always there.
	Class  string
	Values []float64
}

// Chart is a chart to draw. The zero values of Width, Height, MaxXTicks
// and Format take the defaults named.
type Chart struct {
	// ID prefixes the ids of the title, description and table; unique in
	// the page. Default "chart".
	ID string
	// Title names the chart (the SVG's accessible name, the table's
	// caption); Desc says what it shows (the SVG's description).
	Title, Desc string
	// XLabel and YLabel are the axes' titles.
	XLabel, YLabel string
	// Labels name the buckets, in order.
	Labels []string
	Series []Series
	// Width and Height are the whole drawing's, in SVG user units (it
	// scales to its box). Default 720 × 260.
	Width, Height int
	// MaxXTicks bounds the labels written under the x axis. Default 8.
	MaxXTicks int
	// Format writes a value (ticks, tooltips, table). Default: whole
	// numbers with thousands separators ("12,345").
	Format func(float64) string
}

// The margins around the plot area, in SVG user units.
const (
	marginLeft   = 64
	marginRight  = 12
	marginTop    = 26 // the legend
	marginBottom = 44 // tick labels and the x axis title
)

// Plot is the geometry SVG computed: where the plot area is and the y
// axis' top value. Exposed for tests.
type Plot struct {
	Left, Top, Width, Height float64
	YMax                     float64
	YTicks                   []float64
}

func (c *Chart) defaults() {
	if c.ID == "" {
		c.ID = "chart"
	}
	if c.Width <= 0 {
		c.Width = 720
	}
	if c.Height <= 0 {
		c.Height = 260
	}
	if c.MaxXTicks <= 0 {
		c.MaxXTicks = 8
	}
	if c.Format == nil {
		c.Format = Thousands
	}
}

// value is series s's value at bucket i, 0 when missing, negative or NaN.
func value(s Series, i int) float64 {
	if i >= len(s.Values) {
		return 0
	}
	v := s.Values[i]
	if math.IsNaN(v) || v < 0 || math.IsInf(v, 0) {
		return 0
	}
	return v
}

// Layout returns the chart's geometry.
func (c Chart) Layout() Plot {
	c.defaults()
	p := Plot{Left: marginLeft, Top: marginTop,
		Width:  float64(c.Width - marginLeft - marginRight),
		Height: float64(c.Height - marginTop - marginBottom)}
	var peak float64
	for _, s := range c.Series {
		for i := range c.Labels {
			peak = max(peak, value(s, i))
		}
	}
	p.YMax, p.YTicks = niceAxis(peak)
	return p
}

// niceAxis returns a round top at or above peak and the ticks from 0 to it
// (about five).
func niceAxis(peak float64) (top float64, ticks []float64) {
	if peak <= 0 {
		return 1, []float64{0, 1}
	}
	step := niceStep(peak / 5)
	top = math.Ceil(peak/step) * step
	if top < peak { // rounding
		top += step
	}
	n := int(math.Round(top / step))
	for i := 0; i <= n; i++ {
		ticks = append(ticks, float64(i)*step)
	}
	return top, ticks
}

// niceStep is the smallest of 1, 2, 5 × 10ⁿ at or above raw (at least 1:
// the charts count whole things).
func niceStep(raw float64) float64 {
	if raw <= 1 {
		return 1
	}
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*mag >= raw {
			return m * mag
		}
	}
	return 10 * mag
}

// xTicks returns the buckets whose labels go under the axis: at most max,
// evenly spread, the first and the last included.
func xTicks(n, most int) []int {
	if n == 0 {
		return nil
	}
	if n <= most {
		out := make([]int, n)
		for i := range out {
			out[i] = i
		}
		return out
	}
	if most < 2 {
		return []int{0}
	}
	every := int(math.Ceil(float64(n-1) / float64(most-1)))
	var out []int
	for i := 0; i < n-1; i += every {
		out = append(out, i)
	}
	if last := out[len(out)-1]; n-1-last < every/2 && len(out) > 1 {
		out = out[:len(out)-1] // keep the last label clear of the one before
	}
	return append(out, n-1)
}

// num writes a coordinate with at most two decimals.
func num(f float64) string { return strconv.FormatFloat(math.Round(f*100)/100, 'f', -1, 64) }

// Thousands writes v rounded to a whole number with thousands separators.
func Thousands(v float64) string {
	s := strconv.FormatFloat(math.Round(v), 'f', 0, 64)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

func esc(s string) string { return html.EscapeString(s) }

// SVG draws the chart.
func (c Chart) SVG() template.HTML {
	c.defaults()
	p := c.Layout()
	n := len(c.Labels)
	var b strings.Builder
	id := esc(c.ID)
	fmt.Fprintf(&b, `<svg class="chart" id="%s-svg" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" role="img" aria-labelledby="%s-title %s-desc">`,
		id, c.Width, c.Height, id, id)
	fmt.Fprintf(&b, `<title id="%s-title">%s</title><desc id="%s-desc">%s</desc>`, id, esc(c.Title), id, esc(c.Desc))
	y := func(v float64) float64 { return p.Top + p.Height - v/p.YMax*p.Height }
	bottom := p.Top + p.Height
	// The y axis: grid lines, ticks and their values, the title.
	b.WriteString(`<g class="y-axis">`)
	for _, t := range p.YTicks {
		fmt.Fprintf(&b, `<line class="grid" x1="%s" y1="%s" x2="%s" y2="%s"></line>`, num(p.Left), num(y(t)), num(p.Left+p.Width), num(y(t)))
		fmt.Fprintf(&b, `<line class="tick" x1="%s" y1="%s" x2="%s" y2="%s"></line>`, num(p.Left-4), num(y(t)), num(p.Left), num(y(t)))
		fmt.Fprintf(&b, `<text class="tick-label" x="%s" y="%s" text-anchor="end" dominant-baseline="middle">%s</text>`,
			num(p.Left-7), num(y(t)), esc(c.Format(t)))
	}
	fmt.Fprintf(&b, `<line class="axis" x1="%s" y1="%s" x2="%s" y2="%s"></line>`, num(p.Left), num(p.Top), num(p.Left), num(bottom))
	fmt.Fprintf(&b, `<text class="axis-title" x="12" y="%s" text-anchor="middle" transform="rotate(-90 12 %s)">%s</text>`,
		num(p.Top+p.Height/2), num(p.Top+p.Height/2), esc(c.YLabel))
	b.WriteString(`</g>`)
	// The x axis: the line, ticks and labels, the title.
	b.WriteString(`<g class="x-axis">`)
	fmt.Fprintf(&b, `<line class="axis" x1="%s" y1="%s" x2="%s" y2="%s"></line>`, num(p.Left), num(bottom), num(p.Left+p.Width), num(bottom))
	pitch := 0.0
	if n > 0 {
		pitch = p.Width / float64(n)
	}
	centre := func(i int) float64 { return p.Left + (float64(i)+0.5)*pitch }
	for _, i := range xTicks(n, c.MaxXTicks) {
		anchor := "middle"
		x := centre(i)
		fmt.Fprintf(&b, `<line class="tick" x1="%s" y1="%s" x2="%s" y2="%s"></line>`, num(x), num(bottom), num(x), num(bottom+4))
		fmt.Fprintf(&b, `<text class="tick-label x-tick" x="%s" y="%s" text-anchor="%s">%s</text>`, num(x), num(bottom+16), anchor, esc(c.Labels[i]))
	}
	fmt.Fprintf(&b, `<text class="axis-title" x="%s" y="%s" text-anchor="middle">%s</text>`,
		num(p.Left+p.Width/2), num(float64(c.Height)-6), esc(c.XLabel))
	b.WriteString(`</g>`)
	// The series: bars first, lines and steps over them.
	var bars []int
	for k, s := range c.Series {
		if s.Kind == Bars {
			bars = append(bars, k)
		}
	}
	for j, k := range bars {
		s := c.Series[k]
		slot := pitch * 0.8 / float64(len(bars))
		fmt.Fprintf(&b, `<g class="bars s%d %s">`, k, esc(s.Class))
		for i := 0; i < n; i++ {
			v := value(s, i)
			h := v / p.YMax * p.Height
			if v > 0 && h < 1 {
				h = 1 // a bucket with any count stays visible
			}
			x := p.Left + float64(i)*pitch + pitch*0.1 + float64(j)*slot
			fmt.Fprintf(&b, `<rect class="bar s%d" data-label="%s" data-value="%s" x="%s" y="%s" width="%s" height="%s"><title>%s: %s %s</title></rect>`,
				k, esc(c.Labels[i]), strconv.FormatFloat(v, 'f', -1, 64), num(x), num(bottom-h), num(max(slot, 0.5)), num(h),
				esc(c.Labels[i]), esc(c.Format(v)), esc(strings.ToLower(s.Name)))
		}
		b.WriteString(`</g>`)
	}
	for k, s := range c.Series {
		if s.Kind == Bars || n == 0 {
			continue
		}
		var d strings.Builder
		vals := make([]string, n)
		for i := 0; i < n; i++ {
			v := value(s, i)
			vals[i] = strconv.FormatFloat(v, 'f', -1, 64)
			switch {
			case s.Kind == Steps && i == 0:
				fmt.Fprintf(&d, "M%s %sH%s", num(p.Left), num(y(v)), num(p.Left+pitch))
			case s.Kind == Steps:
				fmt.Fprintf(&d, "V%sH%s", num(y(v)), num(p.Left+float64(i+1)*pitch))
			case i == 0:
				fmt.Fprintf(&d, "M%s %s", num(centre(i)), num(y(v)))
			default:
				fmt.Fprintf(&d, "L%s %s", num(centre(i)), num(y(v)))
			}
		}
		fmt.Fprintf(&b, `<path class="series s%d %s" fill="none" data-values="%s" d="%s"><title>%s</title></path>`,
			k, esc(s.Class), strings.Join(vals, " "), d.String(), esc(s.Name))
	}
	// The legend, top left over the plot.
	x := p.Left
	for k, s := range c.Series {
		fmt.Fprintf(&b, `<g class="legend s%d %s">`, k, esc(s.Class))
		if s.Kind == Bars {
			fmt.Fprintf(&b, `<rect class="swatch s%d %s" x="%s" y="6" width="10" height="10"></rect>`, k, esc(s.Class), num(x))
		} else {
			fmt.Fprintf(&b, `<path class="series s%d %s" fill="none" d="M%s 11H%s"></path>`, k, esc(s.Class), num(x), num(x+14))
		}
		fmt.Fprintf(&b, `<text class="legend-label" x="%s" y="15">%s</text></g>`, num(x+18), esc(s.Name))
		x += 18 + 7*float64(len(s.Name)) + 16
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// Table writes the chart's numbers as a table: a row per bucket, a column
// per series, the Title as its caption.
func (c Chart) Table() template.HTML {
	c.defaults()
	var b strings.Builder
	fmt.Fprintf(&b, `<table class="chart-table" id="%s-table"><caption>%s</caption><thead><tr><th scope="col">%s</th>`,
		esc(c.ID), esc(c.Title), esc(c.XLabel))
	for _, s := range c.Series {
		fmt.Fprintf(&b, `<th scope="col">%s</th>`, esc(s.Name))
	}
	b.WriteString(`</tr></thead><tbody>`)
	for i, l := range c.Labels {
		fmt.Fprintf(&b, `<tr><th scope="row">%s</th>`, esc(l))
		for _, s := range c.Series {
			fmt.Fprintf(&b, `<td>%s</td>`, esc(c.Format(value(s, i))))
		}
		b.WriteString(`</tr>`)
	}
	b.WriteString(`</tbody></table>`)
	return template.HTML(b.String())
}
