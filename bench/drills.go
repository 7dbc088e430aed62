package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"slices"
	"strings"
	"time"
)

func init() {
	scenarios["drills"] = benchDrills
	plans["drills"] = func(quick bool) time.Duration {
		// Eight systems (setup each) and the drills' load phases; of those,
		// webhook-outage's phases and its wait for the retries (the killed
		// origin's claims held for their lease, 30 s by default): about 25 s
		// quick, 55 s full; rolling-deploy 24 s, redis-killed up to 17 s
		// (waiting for room in the minute's window), the others 6–10 s.
		if quick {
			return 8*systemSetup + 70*time.Second
		}
		return 8*systemSetup + 135*time.Second
	}
}

// drillParams are the lengths and sizes of a drill's load.
type drillParams struct {
	pre, down, post time.Duration // load before the fault, the fault, load after recovery
	readWorkers     int
	leadWorkers     int
	rounds          int // key-revoked repetitions

	// webhook-outage: leads per second, how long the receiver refuses
	// connections, how long it then answers slowly and how slowly, how
	// long to wait for every webhook afterwards, and the origins' YAML
	// config (empty: the defaults).
	hookRate                        float64
	hookOutage, hookSlow, hookDelay time.Duration
	hookWait                        time.Duration
	hookOriginConfig                string
}

// drill is one fault drill: it starts its own system, runs its load and
// its fault, checks its correctness conditions and returns its numbers
// (for the results) and one line for the summary. An error means a
// correctness condition failed.
type drill struct {
	name string
	run  func(ctx context.Context, p drillParams) (data map[string]any, line string, err error)
}

var drills = []drill{
	{"origin-restart", drillOriginRestart},
	{"postgres-restart", drillPostgresRestart},
	{"redis-killed", drillRedisKilled},
	{"edge-killed", drillEdgeKilled},
	{"key-revoked", drillKeyRevoked},
	{"upload-flood", drillUploadFlood},
	{"rolling-deploy", drillRollingDeploy},
	{"webhook-outage", drillWebhookOutage},
}

// benchDrills runs the fault drills (docs/operations.md, "Fault drills"),
// each on a fresh system of its own so they cannot interfere, and fails
// when any correctness condition of any drill fails.
func benchDrills(args []string) error {
	fs := flag.NewFlagSet("drills", flag.ContinueOnError)
	var names []string
	for _, d := range drills {
		names = append(names, d.name)
	}
	only := fs.String("only", "", "comma-separated drills to run (default all): "+strings.Join(names, ", "))
	p := drillParams{}
	fs.DurationVar(&p.pre, "pre", def(3*time.Second, time.Second), "load before the fault")
	fs.DurationVar(&p.down, "down", def(2*time.Second, 1500*time.Millisecond), "how long the origin or Postgres stays down")
	fs.DurationVar(&p.post, "post", def(3*time.Second, 1500*time.Millisecond), "load after recovery")
	fs.IntVar(&p.readWorkers, "read-workers", 4, "concurrent readers")
	fs.IntVar(&p.leadWorkers, "lead-workers", 4, "concurrent lead submitters")
	fs.IntVar(&p.rounds, "rounds", def(5, 3), "key-revoked repetitions")
	fs.Float64Var(&p.hookRate, "webhook-rate", 50, "webhook-outage: leads per second throughout")
	// Under -quick the outage is 5 s and the origins' webhook timeout 4 s,
	// which shortens the claim lease (origin/delivery: 18 s instead of
	// 30 s): the drill's time is mostly the wait for the retries' backoff
	// (up to about the outage again) and for the killed origin's claims,
	// and so stays near 30 s.
	fs.DurationVar(&p.hookOutage, "webhook-outage", def(20*time.Second, 5*time.Second), "webhook-outage: how long the receiver refuses connections")
	fs.DurationVar(&p.hookSlow, "webhook-slow", def(10*time.Second, 4*time.Second), "webhook-outage: how long it then answers slowly")
	fs.DurationVar(&p.hookDelay, "webhook-answer-delay", def(3*time.Second, 2*time.Second), "webhook-outage: how long each slow answer takes (under the origin's webhook timeout)")
	fs.DurationVar(&p.hookWait, "webhook-wait", def(5*time.Minute, 2*time.Minute), "webhook-outage: the longest wait, after the last lead, for every webhook")
	fs.StringVar(&p.hookOriginConfig, "webhook-origin-config", def("", "webhook_timeout: 4s"),
		"webhook-outage: YAML for the origins' -config (\"webhook_timeout: 4s\": claims leased for 18 s; empty: the defaults, 10 s and 30 s)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	run := drills
	if *only != "" {
		run = nil
		for _, n := range strings.Split(*only, ",") {
			i := slices.IndexFunc(drills, func(d drill) bool { return d.name == strings.TrimSpace(n) })
			if i < 0 {
				return fmt.Errorf("-only: unknown drill %q (drills: %s)", n, strings.Join(names, ", "))
			}
			run = append(run, drills[i])
		}
	}
	ctx := context.Background()
	results := map[string]any{}
	table := reportTable{Title: "Fault drills", Header: []string{"drill", "result", "what happened"}}
	var failed []error
	for _, d := range run {
		fmt.Printf("drills: %s: starting (pre %v, down %v, post %v)\n", d.name, p.pre, p.down, p.post)
		t0 := time.Now()
		data, line, err := d.run(ctx, p)
		if data == nil {
			data = map[string]any{}
		}
		data["took_s"] = time.Since(t0).Seconds()
		verdict := "ok"
		if err != nil {
			verdict = "FAILED"
			data["error"] = err.Error()
			failed = append(failed, fmt.Errorf("%s: %w", d.name, err))
			if line == "" {
				line = err.Error()
			} else {
				line += "; " + err.Error()
			}
		}
		data["ok"] = err == nil
		results[d.name] = data
		summarize("drills", "%s %s: %s", d.name, verdict, line)
		table.Rows = append(table.Rows, []string{d.name, verdict, line})
	}
	addTable("drills", table)
	params := map[string]any{"pre_s": p.pre.Seconds(), "down_s": p.down.Seconds(), "post_s": p.post.Seconds(),
		"read_workers": p.readWorkers, "lead_workers": p.leadWorkers, "rounds": p.rounds,
		"webhook_rate": p.hookRate, "webhook_outage_s": p.hookOutage.Seconds(), "webhook_slow_s": p.hookSlow.Seconds(),
		"webhook_answer_delay_s": p.hookDelay.Seconds(), "webhook_wait_s": p.hookWait.Seconds(),
		"webhook_origin_config": p.hookOriginConfig}
	if err := writeResults("drills", map[string]any{"quick": quick, "params": params, "drills": results}); err != nil {
		return err
	}
	return errors.Join(failed...)
}

// cachedPaths are the demo site's pages the read load asks for: listing
// pages, agents, fields, featured.
func cachedPaths(site string) []string {
	base := "/v1/sites/" + site
	return []string{base + "/listings", base + "/listings?page=2", base + "/listings?page=3",
		base + "/listings?per_page=5", base + "/agents", base + "/fields", base + "/listings/featured",
		base + "/media?per_page=10"}
}

// uncachedPath is a different agents page for every i: each one a cache
// miss the origin answers from Postgres (an empty page past the end).
func uncachedPath(site string, i int64) string {
	return fmt.Sprintf("/v1/sites/%s/agents?page=%d&per_page=%d", site, 1000+i%9000, 1+(i/9000)%99)
}

// leadLoad runs lead submissions and collects their results.
type leadLoad struct {
	g       *loadGen
	results chan leadResult
}

func startLeads(d *driver, workers int, dur time.Duration, key string) *leadLoad {
	run := runID()
	l := &leadLoad{results: make(chan leadResult, 1<<16)}
	l.g = startLoad(workers, dur, 1<<16, func(i int64) { l.results <- d.submitLead(run, i, key) })
	return l
}

// halt stops the submissions, lets those under way finish their retries
// and returns every result.
func (l *leadLoad) halt() []leadResult {
	l.g.halt()
	close(l.results)
	var rs []leadResult
	for r := range l.results {
		rs = append(rs, r)
	}
	return rs
}
