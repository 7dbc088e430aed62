package main

import (
	"bufio"
	"bytes"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	json "github.com/goccy/go-json"
)

// report collects what one `go run ./bench` run measured: for each scenario
// its headline lines, its data, its tables and charts, and whether it
// failed. writeReport turns it into the run's files at the end.
var report = struct {
	sync.Mutex
	scenarios map[string]*scenarioReport
	order     []string
	machine   map[string]any
}{scenarios: map[string]*scenarioReport{}, machine: map[string]any{}}

// scenarioReport is one scenario's part of the run's report.
type scenarioReport struct {
	Name    string         `json:"name"`
	OK      bool           `json:"ok"`
	Error   string         `json:"error,omitempty"`
	Started time.Time      `json:"started"`
	TookS   float64        `json:"took_s"`
	PlanS   float64        `json:"planned_s,omitempty"`   // its plan (plans), 0 without one
	Load    [2]string      `json:"load_average,omitzero"` // /proc/loadavg before and after
	Summary []string       `json:"summary,omitempty"`
	Data    map[string]any `json:"data,omitempty"`
	Tables  []reportTable  `json:"tables,omitempty"`
	Bars    []barChart     `json:"bar_charts,omitempty"`
	Latency []latencyChart `json:"latency_charts,omitempty"`
	// Blocks are preformatted texts (query plans), each under its title.
	Blocks []textBlock `json:"blocks,omitempty"`
	// Plots are the PNG files written for this scenario (names only).
	Plots []string `json:"plots,omitempty"`
}

// textBlock is a preformatted text of a scenario's, shown as it is.
type textBlock struct {
	Title string `json:"title"`
	Text  string `json:"text"`
}

// addBlock adds a preformatted text to the scenario's report.
func addBlock(scenario, title, text string) {
	report.Lock()
	defer report.Unlock()
	s := scenarioOf(scenario)
	s.Blocks = append(s.Blocks, textBlock{Title: title, Text: text})
}

// reportTable is a Markdown table of a scenario's results.
type reportTable struct {
	Title  string     `json:"title"`
	Header []string   `json:"header"`
	Rows   [][]string `json:"rows"`
}

// barChart is a throughput comparison: one bar per target, each labelled
// with its value and, when Ref ≥ 0, the ratio of the Ref bar to it.
type barChart struct {
	Name  string     `json:"name"` // file name part
	Title string     `json:"title"`
	Unit  string     `json:"unit"`
	Ref   int        `json:"ref"` // index of the bar the ratios are of, -1 for none
	Bars  []chartBar `json:"bars"`
	Notes []string   `json:"notes,omitempty"`
}

type chartBar struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"`
}

// latencyChart is a set of open-model runs: latency percentiles against
// the offered rate, one series per target.
type latencyChart struct {
	Name   string          `json:"name"`
	Title  string          `json:"title"`
	Series []latencySeries `json:"series"`
}

// scenarioOf returns scenario's report, creating it (callers hold the lock).
func scenarioOf(name string) *scenarioReport {
	s := report.scenarios[name]
	if s == nil {
		s = &scenarioReport{Name: name, OK: true, Started: time.Now(), Data: map[string]any{}}
		report.scenarios[name] = s
		report.order = append(report.order, name)
	}
	return s
}

// summarize prints one headline result of scenario and keeps it for the
// run's summary.
func summarize(scenario, format string, args ...any) {
	line := fmt.Sprintf(format, args...)
	fmt.Printf("%s: %s\n", scenario, line)
	report.Lock()
	s := scenarioOf(scenario)
	s.Summary = append(s.Summary, line)
	report.Unlock()
}

// writeResults records a scenario's data in the run's report; the report's
// files are written once, at the end of the run (writeReport). Calling it
// again for a scenario adds to what it recorded.
func writeResults(scenario string, v map[string]any) error {
	report.Lock()
	defer report.Unlock()
	s := scenarioOf(scenario)
	maps.Copy(s.Data, v)
	return nil
}

// addTable adds a Markdown table to the scenario's section of the report.
func addTable(scenario string, t reportTable) {
	report.Lock()
	defer report.Unlock()
	s := scenarioOf(scenario)
	s.Tables = append(s.Tables, t)
}

// addBars adds a throughput bar chart (a PNG, and its numbers in the JSON).
func addBars(scenario string, c barChart) {
	report.Lock()
	defer report.Unlock()
	s := scenarioOf(scenario)
	s.Bars = append(s.Bars, c)
}

// addLatency adds a latency-percentiles-vs-offered-rate chart.
func addLatency(scenario string, c latencyChart) {
	report.Lock()
	defer report.Unlock()
	s := scenarioOf(scenario)
	s.Latency = append(s.Latency, c)
}

// noteMachine records a fact about the machine or its software (the
// Postgres version, say) the first time it is learned.
func noteMachine(key string, value any) {
	report.Lock()
	defer report.Unlock()
	if _, ok := report.machine[key]; !ok {
		report.machine[key] = value
	}
}

// runScenario runs one scenario, recording its duration and its failure
// (an error or a panic) in the report instead of stopping the run.
func runScenario(name string, f func([]string) error, args []string) (err error) {
	report.Lock()
	s := scenarioOf(name)
	s.Started = time.Now()
	s.PlanS = scenarioPlan(name, len(report.order) == 1).Seconds()
	s.Load[0] = loadAverage()
	report.Unlock()
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
		report.Lock()
		s.TookS = time.Since(s.Started).Seconds()
		s.Load[1] = loadAverage()
		if err != nil {
			s.OK, s.Error = false, err.Error()
		}
		report.Unlock()
	}()
	return f(args)
}

// runInfo is what names a run's files and heads its report.
type runInfo struct {
	Date    string    `json:"date"`
	Started time.Time `json:"started"`
	Commit  string    `json:"commit"`
	Dirty   bool      `json:"dirty"`
	Quick   bool      `json:"quick"`
	Args    []string  `json:"args"`
	PlanS   float64   `json:"planned_s"`
	TookS   float64   `json:"took_s"`
}

func newRunInfo(args []string, plan time.Duration) runInfo {
	commit, _ := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	status, _ := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output()
	c := strings.TrimSpace(string(commit))
	if c == "" {
		c = "nocommit"
	}
	return runInfo{Date: time.Now().UTC().Format("2006-01-02"), Started: time.Now().UTC(), Commit: c,
		Dirty: len(bytes.TrimSpace(status)) > 0, Quick: quick, Args: args, PlanS: plan.Seconds()}
}

// writeReport writes <dir>/<date>-<commit>.json and .md and the PNG plots
// of every scenario that ran, and returns the Markdown file's path.
func writeReport(dir string, run runInfo) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	base := run.Date + "-" + run.Commit
	report.Lock()
	defer report.Unlock()
	machine := machineInfo()
	maps.Copy(machine, report.machine)

	var plotErrs []string
	for _, name := range report.order {
		s := report.scenarios[name]
		s.Plots = nil
		for _, c := range s.Bars {
			file := base + "-" + name + "-" + c.Name + ".png"
			if err := plotBars(filepath.Join(dir, file), c); err != nil {
				plotErrs = append(plotErrs, fmt.Sprintf("%s: %v", file, err))
				continue
			}
			s.Plots = append(s.Plots, file)
		}
		for _, c := range s.Latency {
			file := base + "-" + name + "-" + c.Name + ".png"
			if err := plotLatency(filepath.Join(dir, file), c); err != nil {
				plotErrs = append(plotErrs, fmt.Sprintf("%s: %v", file, err))
				continue
			}
			s.Plots = append(s.Plots, file)
		}
	}
	scen := make([]*scenarioReport, 0, len(report.order))
	for _, n := range report.order {
		scen = append(scen, report.scenarios[n])
	}
	b, err := json.MarshalIndent(map[string]any{"run": run, "machine": machine, "scenarios": scen}, "", "  ")
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, base+".json"), append(b, '\n'), 0o644); err != nil {
		return "", err
	}
	md := filepath.Join(dir, base+".md")
	if err := os.WriteFile(md, markdown(run, machine, scen), 0o644); err != nil {
		return "", err
	}
	if len(plotErrs) > 0 {
		return md, fmt.Errorf("plots: %s", strings.Join(plotErrs, "; "))
	}
	return md, nil
}

// markdown is the run's human summary.
func markdown(run runInfo, machine map[string]any, scen []*scenarioReport) []byte {
	var b bytes.Buffer
	dirty := ""
	if run.Dirty {
		dirty = " (with uncommitted changes)"
	}
	mode := "full run"
	if run.Quick {
		mode = "quick smoke run (-quick): correctness counts only, numbers meaningless"
	}
	fmt.Fprintf(&b, "# Benchmark run %s, commit %s%s\n\n", run.Date, run.Commit, dirty)
	fmt.Fprintf(&b, "`go run ./bench %s` — %s, %s (planned %s).\n\n", strings.Join(run.Args, " "), mode,
		fmtDuration(run.TookS), fmtDuration(run.PlanS))
	b.WriteString("## Machine\n\n")
	for _, k := range slices.Sorted(maps.Keys(machine)) {
		fmt.Fprintf(&b, "- %s: %v\n", k, machine[k])
	}
	b.WriteString(`
## Method

Real processes on loopback: a throwaway PostgreSQL (fsync off), the origin
and the edge as child processes, the load generators (wrk, and this Go
program for the scenarios that need logic or counting) on the same two
cores. Throughput is measured closed-loop (wrk or Go clients sending back
to back) and compared, in the same run, with anchors: nginx serving the
same bytes, the origin alone, pgbench inserting single rows. Latency is
measured open-model (vegeta at a fixed rate, latency counted from each
request's scheduled send time) at 25, 50 and 75 % of the closed-loop
maximum, so a slow response cannot hold back the requests behind it
(no coordinated omission). Compare the ratios; absolute numbers on a
shared two-core machine are noisy. docs/performance.md describes each
scenario.
`)
	for _, s := range scen {
		status := "ok"
		if !s.OK {
			status = "**FAILED**: " + s.Error
		}
		planned := ""
		if s.PlanS > 0 {
			planned = ", planned " + fmtDuration(s.PlanS)
		}
		fmt.Fprintf(&b, "\n## %s — %s (%s%s, load average %s → %s)\n\n", s.Name, status, fmtDuration(s.TookS),
			planned, firstField(s.Load[0]), firstField(s.Load[1]))
		for _, l := range s.Summary {
			fmt.Fprintf(&b, "- %s\n", l)
		}
		for _, t := range s.Tables {
			writeTable(&b, t)
		}
		for _, c := range s.Latency {
			writeTable(&b, latencyTable(c))
		}
		for _, p := range s.Plots {
			fmt.Fprintf(&b, "\n![%s](%s)\n", p, p)
		}
		for _, t := range s.Blocks {
			fmt.Fprintf(&b, "\n%s\n\n```\n%s\n```\n", t.Title, strings.TrimRight(t.Text, "\n"))
		}
	}
	return b.Bytes()
}

func writeTable(b *bytes.Buffer, t reportTable) {
	if t.Title != "" {
		fmt.Fprintf(b, "\n%s\n", t.Title)
	}
	b.WriteString("\n| " + strings.Join(t.Header, " | ") + " |\n|")
	for i := range t.Header {
		if i == 0 {
			b.WriteString("---|")
		} else {
			b.WriteString("---:|")
		}
	}
	b.WriteString("\n")
	for _, r := range t.Rows {
		b.WriteString("| " + strings.Join(r, " | ") + " |\n")
	}
}

// latencyTable is an open-model chart's numbers as a table.
func latencyTable(c latencyChart) reportTable {
	t := reportTable{Title: c.Title + " (open model, latency from the scheduled send time; send lag: how late the generator sent, " +
		"at the 99th percentile — its own share of the latency, on the cores it shares with the target):",
		Header: []string{"target", "% of max", "offered req/s", "achieved req/s", "p50", "p99", "p99.9", "max", "send lag p99", "success", "statuses"}}
	for _, s := range c.Series {
		for _, p := range s.Points {
			t.Rows = append(t.Rows, []string{s.Target, fmt.Sprintf("%.0f %%", 100*p.Fraction),
				fmt.Sprintf("%.0f", p.OfferedRPS), fmt.Sprintf("%.0f", p.AchievedRPS),
				fmtMs(p.P50), fmtMs(p.P99), fmtMs(p.P999), fmtMs(p.Max), fmtMs(p.SendLagP99),
				fmt.Sprintf("%.2f %%", 100*p.Success), fmtStatuses(p.Statuses)})
		}
	}
	return t
}

func fmtMs(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f ms", v)
	case v >= 10:
		return fmt.Sprintf("%.1f ms", v)
	default:
		return fmt.Sprintf("%.2f ms", v)
	}
}

func fmtStatuses(m map[string]int) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s×%d", k, m[k]))
	}
	return strings.Join(parts, " ")
}

func fmtDuration(s float64) string {
	return (time.Duration(s*float64(time.Second)) / time.Second * time.Second).String()
}

func firstField(s string) string {
	if f := strings.Fields(s); len(f) > 0 {
		return f[0]
	}
	return "?"
}

// fmtRate formats a rate with thousands separators.
func fmtRate(v float64) string {
	if v < 10 {
		return fmt.Sprintf("%.1f", v)
	}
	s := fmt.Sprintf("%.0f", v)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// fmtRatio formats a ratio with two significant digits past 1.
func fmtRatio(v float64) string {
	switch {
	case v >= 10:
		return fmt.Sprintf("%.0f", v)
	case v >= 0.1:
		return fmt.Sprintf("%.2f", v)
	default:
		return fmt.Sprintf("%.3f", v)
	}
}

func loadAverage() string {
	b, _ := os.ReadFile("/proc/loadavg")
	return strings.TrimSpace(string(b))
}

// machineInfo describes the machine the run measured.
func machineInfo() map[string]any {
	m := map[string]any{"cores": runtime.NumCPU(), "go": runtime.Version(), "os_arch": runtime.GOOS + "/" + runtime.GOARCH}
	if host, err := os.Hostname(); err == nil {
		m["host"] = host
	}
	if v := procField("/proc/cpuinfo", "model name"); v != "" {
		m["cpu"] = v
	}
	if v := procField("/proc/meminfo", "MemTotal"); v != "" {
		var kb float64
		fmt.Sscanf(v, "%f", &kb)
		m["memory"] = fmt.Sprintf("%.1f GiB", kb/(1<<20))
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m["kernel"] = strings.TrimSpace(string(b))
	}
	if v := procField("/etc/os-release", "PRETTY_NAME"); v != "" {
		m["os"] = strings.Trim(v, `"`)
	}
	for _, t := range []struct {
		key  string
		args []string
	}{{"wrk", []string{"wrk", "-v"}}, {"nginx", []string{"nginx", "-v"}}, {"pgbench", []string{"pgbench", "--version"}}} {
		bin, err := exec.LookPath(t.args[0])
		if err != nil {
			bin = "/usr/sbin/" + t.args[0]
		}
		out, _ := exec.Command(bin, t.args[1:]...).CombinedOutput()
		if line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n"); line != "" {
			m[t.key] = line
		}
	}
	return m
}

// procField returns the value of the first "key: value" or "key=value"
// line of a file like /proc/cpuinfo.
func procField(path, key string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			k, v, ok = strings.Cut(sc.Text(), "=")
		}
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
