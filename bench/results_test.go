package main

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	json "github.com/goccy/go-json"
)

// TestWriteReport writes a run's files from made-up results: the combined
// JSON and Markdown, and one PNG per chart; a failed scenario is recorded.
func TestWriteReport(t *testing.T) {
	dir := t.TempDir()
	if err := runScenario("report-ok", func([]string) error {
		summarize("report-ok", "edge/nginx = %s", fmtRatio(0.8))
		addTable("report-ok", wrkTable("wrk runs:", []wrkResult{{Name: "edge", RPS: 40000}, {Name: "nginx", RPS: 50000}}, 0))
		addBars("report-ok", barChart{Name: "throughput", Title: "t", Unit: "requests/s", Ref: 0,
			Bars: []chartBar{{"edge", 40000}, {"nginx", 50000}, {"origin", 1200}}})
		addLatency("report-ok", latencyChart{Name: "latency", Title: "l", Series: []latencySeries{
			{Target: "edge", MaxRPS: 10000, Points: []latencyPoint{
				{Fraction: .25, OfferedRPS: 2500, Requests: 100, P50: 1, P99: 5, P999: 9},
				{Fraction: .5, OfferedRPS: 5000, Requests: 100, P50: 1.2, P99: 7, P999: 12},
				{Fraction: .75, OfferedRPS: 7500, Requests: 100, P50: 2, P99: 20, P999: 40}}},
			{Target: "origin", MaxRPS: 400, Points: []latencyPoint{
				{Fraction: .25, OfferedRPS: 100, Requests: 100, P50: 6, P99: 50, P999: 60}}},
		}})
		return writeResults("report-ok", map[string]any{"answer": 42})
	}, nil); err != nil {
		t.Fatal(err)
	}
	if err := runScenario("report-failed", func([]string) error { return errors.New("boom") }, nil); err == nil {
		t.Fatal("a failing scenario returned nil")
	}
	if err := runScenario("report-panic", func([]string) error { panic("oops") }, nil); err == nil {
		t.Fatal("a panicking scenario returned nil")
	}
	md, err := writeReport(dir, runInfo{Date: "2000-01-01", Commit: "abc1234"})
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "2000-01-01-abc1234.md"); md != want {
		t.Errorf("markdown at %s, want %s", md, want)
	}
	for _, f := range []string{"2000-01-01-abc1234.json", "2000-01-01-abc1234-report-ok-throughput.png", "2000-01-01-abc1234-report-ok-latency.png"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	b, _ := os.ReadFile(md)
	for _, want := range []string{"## report-ok — ok", "edge/nginx = 0.80", "edge / nginx = **0.80**", "## report-failed — **FAILED**: boom",
		"panic: oops", "![2000-01-01-abc1234-report-ok-latency.png]"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the Markdown lacks %q:\n%s", want, b)
		}
	}
	var j struct {
		Machine   map[string]any
		Scenarios []struct {
			Name  string
			OK    bool
			Error string
			Data  map[string]any
		}
	}
	b, _ = os.ReadFile(filepath.Join(dir, "2000-01-01-abc1234.json"))
	if err := json.Unmarshal(b, &j); err != nil {
		t.Fatal(err)
	}
	if j.Machine["cores"] == nil || j.Machine["go"] == nil {
		t.Errorf("machine: %v", j.Machine)
	}
	var got []string
	for _, s := range j.Scenarios {
		if strings.HasPrefix(s.Name, "report-") {
			got = append(got, s.Name)
		}
		if s.Name == "report-ok" && (!s.OK || s.Data["answer"] != float64(42)) {
			t.Errorf("report-ok: %+v", s)
		}
	}
	if want := []string{"report-ok", "report-failed", "report-panic"}; !reflect.DeepEqual(got, want) {
		t.Errorf("scenarios %v, want %v", got, want)
	}
	if dst := os.Getenv("BENCH_REPORT_TEST_KEEP"); dst != "" {
		os.CopyFS(dst, os.DirFS(dir))
	}
}

// TestSplitArgs reads scenario names and their flags.
func TestSplitArgs(t *testing.T) {
	saved := scenarios
	defer func() { scenarios = saved }()
	scenarios = map[string]func([]string) error{"a": nil, "b": nil}
	gs, err := splitArgs([]string{"b", "-duration", "2s", "a"})
	if err != nil {
		t.Fatal(err)
	}
	want := []argGroup{{"b", []string{"-duration", "2s"}}, {"a", nil}}
	if !reflect.DeepEqual(gs, want) {
		t.Errorf("got %+v, want %+v", gs, want)
	}
	if gs, _ := splitArgs(nil); len(gs) != 2 || gs[0].name != "a" {
		t.Errorf("all: %+v", gs)
	}
	for _, bad := range [][]string{{"c"}, {"-x", "a"}, {"a", "a"}} {
		if _, err := splitArgs(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want float64
	}{{nil, 0}, {[]float64{0.9}, 0.9}, {[]float64{1, 0.8, 0.9}, 0.9}, {[]float64{1, 0.8, 0.9, 0.7}, 0.85}} {
		if got := median(c.in); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("median(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}
