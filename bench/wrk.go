package main

import (
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// wrkResult is one wrk run.
type wrkResult struct {
	Name     string             `json:"name"`
	RPS      float64            `json:"requests_per_second"`
	Latency  map[string]float64 `json:"latency_ms"` // p50, p75, p90, p99
	Requests int                `json:"requests"`
	Non2xx   int                `json:"non_2xx"`
}

var (
	rpsRe     = regexp.MustCompile(`Requests/sec:\s+([0-9.]+)`)
	reqRe     = regexp.MustCompile(`([0-9]+) requests in`)
	non2xxRe  = regexp.MustCompile(`Non-2xx or 3xx responses: ([0-9]+)`)
	latencyRe = regexp.MustCompile(`(?m)^\s+(50|75|90|99)%\s+([0-9.]+)(us|ms|s)`)
)

// runWrk runs wrk for d with the given connections and headers (bounded in
// time; wrk stops itself).
func runWrk(ctx context.Context, name, url string, d time.Duration, conns int, headers []string) (wrkResult, error) {
	return runWrkScript(ctx, name, url, d, conns, headers, "")
}

// runWrkScript is runWrk with a Lua script (wrk -s) when script is not "".
func runWrkScript(ctx context.Context, name, url string, d time.Duration, conns int, headers []string, script string) (wrkResult, error) {
	return runWrkArgs(ctx, name, url, d, conns, headers, script)
}

// runWrkArgs is runWrkScript passing luaArgs to the script's init.
func runWrkArgs(ctx context.Context, name, url string, d time.Duration, conns int, headers []string, script string, luaArgs ...string) (wrkResult, error) {
	args := []string{"-t2", fmt.Sprintf("-c%d", conns), fmt.Sprintf("-d%ds", max(1, int(d.Seconds()))), "--latency", "--timeout", "5s"}
	if script != "" {
		args = append(args, "-s", script)
	}
	for _, h := range headers {
		args = append(args, "-H", h)
	}
	args = append(args, url)
	if len(luaArgs) > 0 {
		args = append(append(args, "--"), luaArgs...)
	}
	// wrk stops itself after d; the context is a backstop.
	ctx, cancel := context.WithTimeout(ctx, d+30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "wrk", args...).CombinedOutput()
	if err != nil {
		return wrkResult{}, fmt.Errorf("wrk %s: %v: %s", name, err, out)
	}
	r := wrkResult{Name: name, Latency: map[string]float64{}}
	if m := rpsRe.FindSubmatch(out); m != nil {
		r.RPS, _ = strconv.ParseFloat(string(m[1]), 64)
	}
	if m := reqRe.FindSubmatch(out); m != nil {
		r.Requests, _ = strconv.Atoi(string(m[1]))
	}
	if m := non2xxRe.FindSubmatch(out); m != nil {
		r.Non2xx, _ = strconv.Atoi(string(m[1]))
	}
	for _, m := range latencyRe.FindAllSubmatch(out, -1) {
		v, _ := strconv.ParseFloat(string(m[2]), 64)
		switch string(m[3]) {
		case "us":
			v /= 1000
		case "s":
			v *= 1000
		}
		r.Latency["p"+string(m[1])] = v
	}
	if r.RPS == 0 {
		return r, fmt.Errorf("wrk %s: no result in %q", name, strings.TrimSpace(string(out)))
	}
	return r, nil
}

func (r wrkResult) String() string {
	return fmt.Sprintf("%-14s %9.0f req/s  p50 %6.2f ms  p99 %6.2f ms  (%d requests, %d non-2xx)",
		r.Name, r.RPS, r.Latency["p50"], r.Latency["p99"], r.Requests, r.Non2xx)
}
