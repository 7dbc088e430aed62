package promtext_test

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/VictoriaMetrics/metrics"
	dto "github.com/prometheus/client_model/go"

	"github.com/listgate/listgate/pkg/promtext"
	"github.com/listgate/listgate/pkg/promtext/promtexttest"
)

func init() {
	promtext.Describe("listgate_edge_test_things_total", "Things counted by the test.\nSecond line, with a \\ backslash.")
	promtext.Describe("listgate_edge_test_wait_seconds", "A test histogram.")
	promtext.Describe("listgate_edge_test_level", "A test gauge.")
	promtext.Describe("listgate_edge_test_hand_total", "A family written by hand.")
}

var (
	things = metrics.NewCounter(`listgate_edge_test_things_total{kind="a"}`)
	_      = metrics.NewCounter(`listgate_edge_test_things_total{kind="b"}`)
	wait   = metrics.NewPrometheusHistogramExt(`listgate_edge_test_wait_seconds{route="x"}`, []float64{.1, 1})
	_      = metrics.NewGauge(`listgate_edge_test_level`, func() float64 { return 3 })
)

func byHand(w io.Writer) {
	promtext.WriteFamily(w, "listgate_edge_test_hand_total", "counter",
		promtext.Sample{Labels: `result="hit"`, Value: 7}, promtext.Sample{Labels: `result="miss"`, Value: 1.5})
}

// Write's output, families written by hand included, passes Prometheus'
// parser with a TYPE and a HELP text on every family, each family once.
func TestWriteParsesWithPrometheus(t *testing.T) {
	things.Add(2)
	wait.Update(.5)
	var buf bytes.Buffer
	promtext.Write(&buf, byHand)
	mfs, err := promtexttest.Families(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatalf("%v\n%s", err, buf.Bytes())
	}
	if c := mfs["listgate_edge_test_things_total"]; c.GetType() != dto.MetricType_COUNTER || len(c.Metric) != 2 ||
		c.GetHelp() != "Things counted by the test.\nSecond line, with a \\ backslash." {
		t.Errorf("counter family: %v", c)
	}
	h := mfs["listgate_edge_test_wait_seconds"]
	if h.GetType() != dto.MetricType_HISTOGRAM || h.Metric[0].GetHistogram().GetSampleCount() != 1 ||
		len(h.Metric[0].GetHistogram().Bucket) != 3 || h.Metric[0].GetHistogram().Bucket[1].GetCumulativeCount() != 1 {
		t.Errorf("histogram family: %v", h)
	}
	if g := mfs["listgate_edge_test_level"]; g.GetType() != dto.MetricType_GAUGE || g.Metric[0].GetGauge().GetValue() != 3 {
		t.Errorf("gauge family: %v", g)
	}
	if c := mfs["listgate_edge_test_hand_total"]; c.GetType() != dto.MetricType_COUNTER || len(c.Metric) != 2 ||
		c.Metric[1].GetCounter().GetValue()+c.Metric[0].GetCounter().GetValue() != 8.5 {
		t.Errorf("family by hand: %v", c)
	}
	if mfs["go_goroutines"] == nil || mfs["process_cpu_seconds_total"] == nil {
		t.Errorf("no Go runtime or process families")
	}
}

// The checks refuse what Prometheus or its conventions would: each case is
// a small exposition with one fault.
func TestFamiliesRefuses(t *testing.T) {
	for name, tc := range map[string]struct{ text, want string }{
		"no TYPE":        {"# HELP listgate_edge_x_total X.\nlistgate_edge_x_total 1\n", "no TYPE"},
		"no HELP":        {"# TYPE listgate_edge_x_total counter\nlistgate_edge_x_total 1\n", "no HELP"},
		"empty HELP":     {"# HELP listgate_edge_x_total\n# TYPE listgate_edge_x_total counter\nlistgate_edge_x_total 1\n", "no HELP"},
		"twice":          {"# HELP listgate_edge_x_total X.\n# TYPE listgate_edge_x_total counter\nlistgate_edge_x_total 1\n# HELP listgate_edge_y Y.\n# TYPE listgate_edge_y gauge\nlistgate_edge_y 1\n# HELP listgate_edge_x_total X.\n# TYPE listgate_edge_x_total counter\nlistgate_edge_x_total{a=\"b\"} 1\n", "second HELP"},
		"other prefix":   {"# HELP edge_x_total X.\n# TYPE edge_x_total counter\nedge_x_total 1\n", "namespace"},
		"no program":     {"# HELP listgate_x_total X.\n# TYPE listgate_x_total counter\nlistgate_x_total 1\n", "namespace"},
		"counter suffix": {"# HELP listgate_edge_x X.\n# TYPE listgate_edge_x counter\nlistgate_edge_x 1\n", "_total"},
		"gauge _total":   {"# HELP listgate_edge_x_total X.\n# TYPE listgate_edge_x_total gauge\nlistgate_edge_x_total 1\n", "_total"},
		"milliseconds":   {"# HELP listgate_edge_x_ms X.\n# TYPE listgate_edge_x_ms gauge\nlistgate_edge_x_ms 1\n", "base units"},
	} {
		_, err := promtexttest.Families(strings.NewReader(tc.text))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error saying %q", name, err, tc.want)
		}
	}
}
