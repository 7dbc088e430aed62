package chart

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

func TestNiceAxis(t *testing.T) {
	for _, tc := range []struct {
		peak  float64
		top   float64
		ticks int
	}{
		{0, 1, 2}, {0.4, 1, 2}, {1, 1, 2}, {3, 3, 4}, {7, 8, 5}, {60, 60, 4}, {61, 80, 5},
		{86400, 100000, 6}, {1234567, 1500000, 4},
	} {
		top, ticks := niceAxis(tc.peak)
		if top != tc.top || len(ticks) != tc.ticks || ticks[0] != 0 || ticks[len(ticks)-1] != top {
			t.Errorf("niceAxis(%v) = %v %v, want top %v and %d ticks", tc.peak, top, ticks, tc.top, tc.ticks)
		}
	}
}

func TestXTicks(t *testing.T) {
	for _, tc := range []struct {
		n, most int
		want    string
	}{
		{0, 8, "[]"}, {1, 8, "[0]"}, {5, 8, "[0 1 2 3 4]"}, {12, 12, "[0 1 2 3 4 5 6 7 8 9 10 11]"},
		{60, 8, "[0 9 18 27 36 45 54 59]"}, {30, 8, "[0 5 10 15 20 25 29]"},
	} {
		got := xTicks(tc.n, tc.most)
		if fmt.Sprint(got) != tc.want && !(tc.want == "[]" && got == nil) {
			t.Errorf("xTicks(%d, %d) = %v, want %s", tc.n, tc.most, got, tc.want)
		}
		if len(got) > tc.most {
			t.Errorf("xTicks(%d, %d): %d ticks", tc.n, tc.most, len(got))
		}
	}
}

func TestSVG(t *testing.T) {
	c := Chart{ID: "c<1>", Title: `Views & "leads"`, Desc: "d", XLabel: "Day", YLabel: "Views",
		Labels: []string{"1 Nov", "<script>", "3 Nov"},
		Series: []Series{
			{Name: "Views", Kind: Bars, Values: []float64{10, math.NaN(), -4}},
			{Name: "Leads", Kind: Bars, Values: []float64{2}},
			{Name: "Limit", Kind: Steps, Class: "limit", Values: []float64{20, 20, 19}},
			{Name: "Trend", Kind: Line, Values: []float64{1, 2, 3}},
		}}
	svg := string(c.SVG())
	for _, s := range []string{
		`<svg class="chart" id="c&lt;1&gt;-svg"`, `role="img" aria-labelledby="c&lt;1&gt;-title c&lt;1&gt;-desc"`,
		`<title id="c&lt;1&gt;-title">Views &amp; &#34;leads&#34;</title>`,
		`data-label="&lt;script&gt;" data-value="0"`, // NaN is 0, the label escaped
		`data-label="3 Nov" data-value="0"`,          // negative is 0
		`<rect class="bar s1" data-label="1 Nov" data-value="2"`,
		`<path class="series s2 limit" fill="none" data-values="20 20 19"`,
		`<path class="series s3 " fill="none" data-values="1 2 3"`,
		`>Views</text>`, `>Day</text>`, `>20</text>`, // axis titles; the y axis ends at 20
	} {
		if !strings.Contains(svg, s) {
			t.Errorf("SVG lacks %s", s)
		}
	}
	if strings.Contains(svg, "<script>") || strings.Contains(svg, "style=") {
		t.Error("unescaped text or an inline style")
	}
	// Two bar series share each bucket side by side.
	p := c.Layout()
	if p.YMax != 20 {
		t.Errorf("y max %v", p.YMax)
	}
	table := string(c.Table())
	if !strings.Contains(table, `<caption>Views &amp; &#34;leads&#34;</caption>`) ||
		!strings.Contains(table, `<tr><th scope="row">1 Nov</th><td>10</td><td>2</td><td>20</td><td>1</td></tr>`) ||
		!strings.Contains(table, `<th scope="row">&lt;script&gt;</th><td>0</td><td>0</td><td>20</td><td>2</td>`) {
		t.Errorf("table %s", table)
	}
	if Thousands(1234567) != "1,234,567" || Thousands(999) != "999" || Thousands(-1000) != "-1,000" {
		t.Error("Thousands")
	}
	// No labels: an empty chart, no panic.
	if s := string((Chart{}).SVG()); !strings.Contains(s, "<svg") {
		t.Error("empty chart")
	}
}
