package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	json "github.com/goccy/go-json"
)

// report collects what one `go run ./bench` run measured: each scenario's
// headline lines (for the Markdown summary) and its data (for the JSON).
var report = struct {
	sync.Mutex
	summary map[string][]string
}{summary: map[string][]string{}}

// summarize prints one headline result of scenario and keeps it for the
// run's summary.
func summarize(scenario, format string, args ...any) {
	line := fmt.Sprintf(format, args...)
	fmt.Printf("%s: %s\n", scenario, line)
	report.Lock()
	report.summary[scenario] = append(report.summary[scenario], line)
	report.Unlock()
}

// writeResults writes bench/results/<date>-<commit>-<scenario>.json.
func writeResults(scenario string, v map[string]any) error {
	commit, _ := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	host, _ := os.Hostname()
	v["scenario"] = scenario
	v["commit"] = strings.TrimSpace(string(commit))
	v["date"] = time.Now().UTC().Format(time.RFC3339)
	v["machine"] = map[string]any{"host": host, "cpus": runtime.NumCPU()}
	report.Lock()
	if s := report.summary[scenario]; len(s) > 0 {
		v["summary"] = s
	}
	report.Unlock()
	b, _ := json.MarshalIndent(v, "", "  ")
	os.MkdirAll("bench/results", 0o755)
	name := filepath.Join("bench/results", time.Now().UTC().Format("2006-01-02")+"-"+strings.TrimSpace(string(commit))+"-"+scenario+".json")
	fmt.Printf("%s: results in %s\n", scenario, name)
	return os.WriteFile(name, b, 0o644)
}
