package main

import (
	"fmt"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// plotBars draws a throughput comparison: one bar per target, labelled
// with its value and, for every bar but the reference, "ref / this = r".
func plotBars(path string, c barChart) error {
	if len(c.Bars) == 0 {
		return fmt.Errorf("no bars")
	}
	p := plot.New()
	p.Title.Text = c.Title
	p.Y.Label.Text = c.Unit
	p.Y.Min = 0
	vals := make(plotter.Values, len(c.Bars))
	names := make([]string, len(c.Bars))
	top := 0.0
	for i, b := range c.Bars {
		vals[i], names[i] = b.Value, b.Name
		top = math.Max(top, b.Value)
	}
	if top == 0 {
		top = 1
	}
	bars, err := plotter.NewBarChart(vals, vg.Points(50))
	if err != nil {
		return err
	}
	bars.Color = plotutil.Color(0)
	bars.LineStyle.Width = 0
	p.Add(bars)
	p.NominalX(names...)

	// Labels just above each bar; room for them above the tallest.
	xys := make(plotter.XYs, len(c.Bars))
	labels := make([]string, len(c.Bars))
	for i, b := range c.Bars {
		xys[i] = plotter.XY{X: float64(i), Y: b.Value + top*0.02}
		labels[i] = fmtRate(b.Value) + " " + shortUnit(c.Unit)
		if c.Ref >= 0 && i != c.Ref && b.Value > 0 {
			ref := c.Bars[c.Ref]
			labels[i] += fmt.Sprintf("\n%s / %s = %s", ref.Name, b.Name, fmtRatio(ref.Value/b.Value))
		}
	}
	l, err := plotter.NewLabels(plotter.XYLabels{XYs: xys, Labels: labels})
	if err != nil {
		return err
	}
	for i := range l.TextStyle {
		l.TextStyle[i].XAlign = draw.XCenter
	}
	p.Add(l)
	p.Y.Max = top * 1.3
	p.Y.Tick.Marker = rateTicks{}
	width := vg.Length(math.Max(5, 1.8*float64(len(c.Bars)))) * vg.Inch
	return p.Save(width, 4*vg.Inch, path)
}

func shortUnit(u string) string {
	switch u {
	case "requests/s":
		return "/s"
	}
	return u
}

// plotLatency draws latency percentiles (p50, p99, p99.9) against the
// offered rate, one colour per target, one dash pattern per percentile,
// on a logarithmic latency axis.
func plotLatency(path string, c latencyChart) error {
	p := plot.New()
	p.Title.Text = c.Title
	p.X.Label.Text = "offered rate (requests/s, open model)"
	p.Y.Label.Text = "latency (ms, from scheduled send time)"
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Legend.Top = true
	p.Legend.Left = true
	drawn := false
	for i, s := range c.Series {
		for j, q := range []struct {
			name string
			get  func(latencyPoint) float64
		}{{"p50", func(p latencyPoint) float64 { return p.P50 }},
			{"p99", func(p latencyPoint) float64 { return p.P99 }},
			{"p99.9", func(p latencyPoint) float64 { return p.P999 }}} {
			var xys plotter.XYs
			for _, pt := range s.Points {
				if v := q.get(pt); v > 0 && pt.Requests > 0 {
					xys = append(xys, plotter.XY{X: pt.OfferedRPS, Y: v})
				}
			}
			if len(xys) == 0 {
				continue
			}
			line, points, err := plotter.NewLinePoints(xys)
			if err != nil {
				return err
			}
			line.Color, points.Color = plotutil.Color(i), plotutil.Color(i)
			line.Dashes = plotutil.Dashes(j)
			points.Shape = plotutil.Shape(j)
			p.Add(line, points)
			p.Legend.Add(fmt.Sprintf("%s %s (max %s/s)", s.Target, q.name, fmtRate(s.MaxRPS)), line, points)
			drawn = true
		}
	}
	if !drawn {
		return fmt.Errorf("no latency points")
	}
	// Targets differ by orders of magnitude (the origin alone against the
	// edge's cache): a logarithmic rate axis, ticked at the offered rates.
	p.X.Scale = plot.LogScale{}
	var ticks []plot.Tick
	for _, s := range c.Series {
		for _, pt := range s.Points {
			if pt.OfferedRPS > 0 {
				ticks = append(ticks, plot.Tick{Value: pt.OfferedRPS, Label: fmtRate(pt.OfferedRPS)})
			}
		}
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	// Headroom above the curves for the legend (top left).
	lo, hi := math.Inf(1), 0.0
	for _, s := range c.Series {
		for _, pt := range s.Points {
			if pt.Requests > 0 && pt.P50 > 0 {
				lo, hi = math.Min(lo, pt.P50), math.Max(hi, math.Max(pt.P999, pt.P99))
			}
		}
	}
	p.Y.Min, p.Y.Max = lo/2, hi*math.Pow(hi/lo*2, 0.8)
	return p.Save(7*vg.Inch, 4.5*vg.Inch, path)
}

// rateTicks are plot.DefaultTicks labelled with thousands separators.
type rateTicks struct{}

func (rateTicks) Ticks(min, max float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(min, max)
	for i := range ts {
		if ts[i].Label != "" && ts[i].Value != 0 {
			ts[i].Label = fmtRate(ts[i].Value)
		} else if ts[i].Label != "" {
			ts[i].Label = "0"
		}
	}
	return ts
}
