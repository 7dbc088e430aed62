// Command bench runs Listgate's load scenarios and comparisons on loopback
// (`make bench`, DESIGN.md §9). Every scenario is bounded in time and in
// request count.
//
//	go run ./bench [-quick] [-out DIR] [scenario [flags]]...
//
// Without a scenario it runs them all with their defaults. One run writes
// DIR/<date>-<commit>.json (every scenario's data, summary lines and the
// machine), DIR/<date>-<commit>.md (a human summary) and the PNG plots
// DIR/<date>-<commit>-<scenario>-*.png. DIR is bench/results, or a new
// temporary directory with -quick. A scenario that fails is recorded and
// the others still run; the command then exits 1.
package main

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/listgate/listgate/pkg/apikey"
)

// scenarios maps a scenario's name to its runner.
var scenarios = map[string]func(args []string) error{}

// plans maps a scenario's name to how long it takes with its default flags
// (quick or not), setup included: main prints the planned total at start.
// A scenario without one is counted as unplanned.
var plans = map[string]func(quick bool) time.Duration{}

// systemSetup is about how long startSystem takes once the run's binaries
// and Postgres cluster are up: a copy of the demo site's database, the
// origin and the edge (0.3–0.6 s measured; a second with a Redis or a
// second edge and a busy machine).
const systemSetup = time.Second

// runSetup is about how long the first system of a run takes beyond
// systemSetup: building the origin and edge (from the build cache; much
// longer after a change to their packages), a new Postgres cluster, the
// schema and the demo site's 250 listings (3–10 s measured on two cores).
const runSetup = 10 * time.Second

// fullBudget is what `make bench` (every scenario, defaults) may take on the
// 2-core machine.
const fullBudget = 15 * time.Minute

// quick is set by -quick (make bench-quick): every scenario runs briefly and
// checks only its correctness counts (zero lost leads, exact limits), never
// speed.
var quick bool

// def returns full, or quick under -quick: a flag's default.
func def[T any](full, quickValue T) T {
	if quick {
		return quickValue
	}
	return full
}

func main() {
	flag.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: go run ./bench [-quick] [-out DIR] [scenario [flags]]...\n\n"+
			"Without a scenario, runs every one with its defaults. `go run ./bench SCENARIO -h` lists its flags.\n\nscenarios:\n")
		for _, n := range names() {
			plan := "?"
			if p := plans[n]; p != nil {
				plan = p(false).String()
			}
			fmt.Fprintf(os.Stderr, "  %-18s ~%s\n", n, plan)
		}
		fmt.Fprintf(os.Stderr, "\nflags:\n")
		flag.PrintDefaults()
	}
	out := flag.String("out", "", "directory for the run's results (default bench/results; a new temporary directory with -quick)")
	flag.BoolVar(&quick, "quick", false, "run each scenario briefly as a smoke test of its correctness counts")
	flag.Parse()
	if len(scenarios) == 0 {
		fmt.Println("bench: no scenarios yet")
		return
	}
	groups, err := splitArgs(flag.Args())
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		flag.Usage()
		os.Exit(2)
	}

	// A scenario's -h prints its flags; nothing runs.
	for _, g := range groups {
		if slices.ContainsFunc(g.args, func(a string) bool { return a == "-h" || a == "-help" || a == "--help" }) {
			fmt.Fprintf(os.Stderr, "%s flags:\n", g.name)
			scenarios[g.name]([]string{"-h"})
			return
		}
	}

	// The plan, before anything starts.
	total := runSetup
	planned, unplanned := []string{fmt.Sprintf("setup ~%v", runSetup)}, []string(nil)
	for _, g := range groups {
		if p := plans[g.name]; p != nil {
			total += p(quick)
			planned = append(planned, fmt.Sprintf("%s ~%v", g.name, p(quick)))
		} else {
			unplanned = append(unplanned, g.name)
		}
	}
	fmt.Printf("bench: %d scenarios, planned about %v: %s\n", len(groups), total.Round(time.Second), strings.Join(planned, ", "))
	if !quick && total > fullBudget {
		fmt.Printf("bench: WARNING: the plan is over the full set's budget of %v\n", fullBudget)
	}
	if len(unplanned) > 0 {
		fmt.Printf("bench: not in the plan (no estimate): %s\n", strings.Join(unplanned, ", "))
	}

	dir := *out
	if dir == "" {
		dir = "bench/results"
		if quick {
			if dir, err = os.MkdirTemp("", "listgate-bench-quick-"); err != nil {
				fmt.Fprintf(os.Stderr, "bench: %v\n", err)
				os.Exit(1)
			}
		}
	}
	args := os.Args[1:]
	run := newRunInfo(args, total)
	start := time.Now()
	var failed []string
	for i, g := range groups {
		fmt.Printf("\n=== %s %s\n", g.name, strings.Join(g.args, " "))
		t0 := time.Now()
		if err := runScenario(g.name, scenarios[g.name], g.args); err != nil {
			fmt.Fprintf(os.Stderr, "bench: %s: FAILED: %v\n", g.name, err)
			failed = append(failed, g.name)
		}
		took, plan := time.Since(t0), scenarioPlan(g.name, i == 0)
		fmt.Printf("=== %s done in %v (planned %v)\n", g.name, took.Round(100*time.Millisecond), plan.Round(100*time.Millisecond))
		// The plan table is what tells whether the full set fits its
		// budget: say when a scenario's plan is far from what it took.
		if plan > 0 && (took > plan*3/2+10*time.Second || took < plan/2-10*time.Second) {
			setup := ""
			if i == 0 {
				setup = " with the run's setup (runSetup: the build and the cluster)"
			}
			fmt.Printf("bench: %s took %v, its plan says %v%s: correct the plan (or the machine was busy: load average %s)\n",
				g.name, took.Round(time.Second), plan.Round(time.Second), setup, firstField(loadAverage()))
		}
	}
	run.TookS = time.Since(start).Seconds()
	removeBinaries()
	closePostgres()
	md, err := writeReport(dir, run)
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench: results: %v\n", err)
		failed = append(failed, "results")
	}
	fmt.Printf("\nbench: took %v (planned %v); results in %s and %s\n", time.Since(start).Round(time.Second),
		total.Round(time.Second), md, strings.TrimSuffix(md, ".md")+".json")
	if took := time.Since(start); !quick && len(groups) == len(scenarios) && took > fullBudget {
		fmt.Fprintf(os.Stderr, "bench: WARNING: the full set took %v, over its budget of %v: shorten the scenarios' defaults\n",
			took.Round(time.Second), fullBudget)
	}
	if len(failed) > 0 {
		fmt.Fprintf(os.Stderr, "bench: FAILED: %s\n", strings.Join(failed, ", "))
		os.Exit(1)
	}
}

// scenarioPlan is how long scenario name should take (0 without a plan),
// with the run's setup when it runs first.
func scenarioPlan(name string, first bool) time.Duration {
	p := plans[name]
	if p == nil {
		return 0
	}
	if first {
		return runSetup + p(quick)
	}
	return p(quick)
}

// argGroup is one scenario to run with its flags.
type argGroup struct {
	name string
	args []string
}

// splitArgs reads "[scenario [flags...]]...": each scenario's name starts
// its group, the arguments after it up to the next name are its flags.
// No scenario means all of them, with their defaults.
func splitArgs(args []string) ([]argGroup, error) {
	if len(args) == 0 {
		var gs []argGroup
		for _, n := range names() {
			gs = append(gs, argGroup{name: n})
		}
		return gs, nil
	}
	var gs []argGroup
	for _, a := range args {
		if _, ok := scenarios[a]; ok {
			if slices.ContainsFunc(gs, func(g argGroup) bool { return g.name == a }) {
				return nil, fmt.Errorf("scenario %q named twice", a)
			}
			gs = append(gs, argGroup{name: a})
			continue
		}
		if len(gs) == 0 {
			return nil, fmt.Errorf("unknown scenario %q", a)
		}
		gs[len(gs)-1].args = append(gs[len(gs)-1].args, a)
	}
	return gs, nil
}

func names() []string {
	var ns []string
	for n := range scenarios {
		ns = append(ns, n)
	}
	sort.Strings(ns)
	return ns
}

// mustUnknownKey is a well-formed key (prefix and checksum right) that no
// site has.
func mustUnknownKey() string {
	k, err := apikey.Generate()
	if err != nil {
		panic(err)
	}
	return k
}
