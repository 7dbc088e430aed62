// Command bench runs Listgate's load scenarios and comparisons on loopback
// (`make bench`, DESIGN.md §9). Every scenario is bounded in time and in
// request count.
package main

import (
	"flag"
	"fmt"
	"github.com/listgate/listgate/pkg/apikey"
	"os"
	"sort"
)

// scenarios maps a scenario's name to its runner.
var scenarios = map[string]func(args []string) error{}

// quick is set by -quick (make bench-quick): every scenario runs briefly and
// checks only its correctness counts (zero lost leads, exact limits), never
// speed.
var quick bool

func main() {
	flag.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: go run ./bench [scenario [flags]]\n\nscenarios:\n")
		for _, n := range names() {
			fmt.Fprintf(os.Stderr, "  %s\n", n)
		}
	}
	flag.BoolVar(&quick, "quick", false, "run each scenario briefly as a smoke test of its correctness counts")
	flag.Parse()
	if len(scenarios) == 0 {
		fmt.Println("bench: no scenarios yet")
		return
	}
	// go run ./bench [scenario [flags...]]: one scenario with its flags, or
	// every scenario with its defaults.
	run, args := names(), []string(nil)
	if flag.NArg() > 0 {
		run, args = flag.Args()[:1], flag.Args()[1:]
	}
	for _, n := range run {
		f, ok := scenarios[n]
		if !ok {
			fmt.Fprintf(os.Stderr, "bench: unknown scenario %q\n", n)
			os.Exit(2)
		}
		if err := f(args); err != nil {
			fmt.Fprintf(os.Stderr, "bench: %s: %v\n", n, err)
			os.Exit(1)
		}
	}
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
