package contract

import (
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// CoverageEnv names the directory where test binaries write the pairs they
// exercised, when set.
const CoverageEnv = "LISTGATE_CONTRACT_COVERAGE"

// Pair is one answer of a route: the method, the route's full path template
// as the server sees it ("/v1/sites/{site}/listings") and the status.
type Pair struct {
	Method string `json:"method"`
	Route  string `json:"route"`
	Status int    `json:"status"`
}

func (p Pair) String() string { return fmt.Sprintf("%s %s %d", p.Method, p.Route, p.Status) }

// exercised counts the pairs wrapped handlers answered in this process.
var exercised = struct {
	sync.Mutex
	m map[Pair]int
}{m: map[Pair]int{}}

func recordPair(p Pair) {
	exercised.Lock()
	exercised.m[p]++
	exercised.Unlock()
}

func snapshot() map[Pair]int {
	exercised.Lock()
	defer exercised.Unlock()
	out := make(map[Pair]int, len(exercised.m))
	for p, n := range exercised.m {
		out[p] = n
	}
	return out
}

// Report is the contract's coverage: every (route, status) pair the
// document documents, and how many times tests exercised each pair, the
// documented ones and any other (HEAD requests, 405 answers).
type Report struct {
	Documented []Pair
	Exercised  map[Pair]int
}

// Coverage returns the report of what the wrapped handlers of this process
// answered so far. Safe for concurrent use.
func Coverage() (*Report, error) {
	c, err := loadChecker()
	if err != nil {
		return nil, err
	}
	return &Report{Documented: c.documented(), Exercised: snapshot()}, nil
}

// ReadCoverage returns the report of this process merged with the files
// that test binaries wrote to dir (see CoverageEnv).
func ReadCoverage(dir string) (*Report, error) {
	r, err := Coverage()
	if err != nil {
		return nil, err
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var counts []pairCount
		if err := json.Unmarshal(b, &counts); err != nil {
			return nil, fmt.Errorf("coverage file %s: %w", f, err)
		}
		for _, pc := range counts {
			r.Exercised[pc.Pair] += pc.Count
		}
	}
	return r, nil
}

// Covered returns how many documented pairs were exercised, of how many.
func (r *Report) Covered() (covered, documented int) {
	for _, p := range r.Documented {
		if r.Exercised[p] > 0 {
			covered++
		}
	}
	return covered, len(r.Documented)
}

// String renders the report: one line per operation with each documented
// status, ✓ and a count for those exercised, · for the others; then the
// pairs exercised that the document has no operation for.
func (r *Report) String() string {
	var b strings.Builder
	covered, total := r.Covered()
	fmt.Fprintf(&b, "contract coverage: %d of %d documented (route, status) pairs exercised\n", covered, total)
	type op struct{ method, route string }
	var ops []op
	statuses := map[op][]int{}
	documented := map[Pair]bool{}
	for _, p := range r.Documented {
		o := op{p.Method, p.Route}
		if _, ok := statuses[o]; !ok {
			ops = append(ops, o)
		}
		statuses[o] = append(statuses[o], p.Status)
		documented[p] = true
	}
	for _, o := range ops {
		fmt.Fprintf(&b, "  %-6s %-42s", o.method, o.route)
		for _, st := range statuses[o] {
			if n := r.Exercised[Pair{o.method, o.route, st}]; n > 0 {
				fmt.Fprintf(&b, " %d✓%d", st, n)
			} else {
				fmt.Fprintf(&b, " %d·", st)
			}
		}
		b.WriteByte('\n')
	}
	var other []Pair
	for p := range r.Exercised {
		if !documented[p] {
			other = append(other, p)
		}
	}
	if len(other) > 0 {
		sortPairs(other)
		b.WriteString("also exercised (HEAD, 405 and other answers outside the documented operations):\n")
		for _, p := range other {
			fmt.Fprintf(&b, "  %-6s %-42s %d ×%d\n", p.Method, p.Route, p.Status, r.Exercised[p])
		}
	}
	return b.String()
}

// documented lists every (method, route, status) of the document, by route
// and method as the document orders them, statuses ascending.
func (c *checker) documented() []Pair {
	var out []Pair
	for _, rt := range c.routes {
		ops := rt.item.Operations()
		methods := make([]string, 0, len(ops))
		for m := range ops {
			methods = append(methods, m)
		}
		slices.Sort(methods)
		for _, m := range methods {
			var sts []int
			for code := range ops[m].Responses.Map() {
				if st, err := strconv.Atoi(code); err == nil {
					sts = append(sts, st)
				}
			}
			slices.Sort(sts)
			for _, st := range sts {
				out = append(out, Pair{Method: m, Route: rt.full, Status: st})
			}
		}
	}
	slices.SortStableFunc(out, func(a, b Pair) int { return cmp.Compare(a.Route, b.Route) })
	return out
}

func sortPairs(ps []Pair) {
	slices.SortFunc(ps, func(a, b Pair) int {
		return cmp.Or(cmp.Compare(a.Route, b.Route), cmp.Compare(a.Method, b.Method), cmp.Compare(a.Status, b.Status))
	})
}

// pairCount is a coverage file's entry.
type pairCount struct {
	Pair
	Count int `json:"count"`
}

func coverageDir() string { return os.Getenv(CoverageEnv) }

// writeCoverage writes this process's pairs to dir, in a file named after
// the test binary, replacing what an earlier run of it wrote.
func writeCoverage(dir string) error {
	m := snapshot()
	counts := make([]pairCount, 0, len(m))
	for p, n := range m {
		counts = append(counts, pairCount{p, n})
	}
	slices.SortFunc(counts, func(a, b pairCount) int {
		return cmp.Or(cmp.Compare(a.Route, b.Route), cmp.Compare(a.Method, b.Method), cmp.Compare(a.Status, b.Status))
	})
	b, err := json.MarshalIndent(counts, "", " ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("coverage directory: %w", err)
	}
	name := strings.TrimSuffix(filepath.Base(os.Args[0]), ".exe") + ".json"
	tmp, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return fmt.Errorf("coverage file: %w", err)
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return fmt.Errorf("coverage file: %w", err)
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("coverage file: %w", err)
	}
	return os.Rename(tmp.Name(), filepath.Join(dir, name))
}
