package depcheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/listgate/listgate"

// pkg is what this test reads of `go list -json` about one package.
type pkg struct {
	ImportPath string
	Imports    []string
	DepOnly    bool // listed only because a named package depends on it
}

// graph is a dependency graph from `go list -deps`: every package the named
// ones depend on, keyed by import path.
type graph struct {
	pkgs  map[string]*pkg
	roots []string // the named packages, in go list's order
}

// mustList runs `go list -deps -json` on patterns (test files excluded).
func mustList(tb testing.TB, patterns ...string) *graph {
	tb.Helper()
	args := append([]string{"list", "-deps", "-json=ImportPath,Imports,DepOnly"}, patterns...)
	cmd := exec.Command("go", args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		tb.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	g := &graph{pkgs: map[string]*pkg{}}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		p := new(pkg)
		if err := dec.Decode(p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			tb.Fatalf("go list output: %v", err)
		}
		g.pkgs[p.ImportPath] = p
		if !p.DepOnly {
			g.roots = append(g.roots, p.ImportPath)
		}
	}
	return g
}

// chains returns an import chain from root ("a → b → c") for every import
// of a package that banned reports, by any package reachable from root: one
// chain for each importer of each banned package, the shortest way to that
// importer. The search does not go past a banned package.
func (g *graph) chains(root string, banned func(path string) bool) []string {
	if banned(root) {
		return []string{short(root)}
	}
	parent := map[string]string{root: ""}
	queue := []string{root}
	var found []string
	for len(queue) > 0 {
		path := queue[0]
		queue = queue[1:]
		p := g.pkgs[path]
		if p == nil {
			continue // "C", or a package go list left out
		}
		for _, imp := range p.Imports {
			if banned(imp) {
				found = append(found, chainTo(parent, path)+" → "+short(imp))
				continue
			}
			if _, seen := parent[imp]; !seen {
				parent[imp] = path
				queue = append(queue, imp)
			}
		}
	}
	return found
}

// chainTo spells the chain that parent records from the root to path.
func chainTo(parent map[string]string, path string) string {
	var chain []string
	for p := path; p != ""; p = parent[p] {
		chain = append(chain, short(p))
	}
	slices.Reverse(chain)
	return strings.Join(chain, " → ")
}

// short drops the module path from the module's own packages.
func short(path string) string {
	if rest, ok := strings.CutPrefix(path, module+"/"); ok {
		return rest
	}
	return path
}

// under reports whether path is prefix or a package below it.
func under(path, prefix string) bool {
	return path == prefix || strings.HasPrefix(path, prefix+"/")
}

// testOnly reports packages a production binary must not link: the testing
// package and its subpackages, the module's test-helper packages (named
// *test, such as devdbtest and storetest) and the test drivers for a real
// browser and a real WordPress.
func testOnly(path string) bool {
	if under(path, "testing") {
		return true
	}
	if !under(path, module) {
		return false
	}
	return strings.HasSuffix(path[strings.LastIndex(path, "/")+1:], "test") ||
		under(path, module+"/pkg/devbrowser") || under(path, module+"/pkg/devwp")
}

func usesPostgres(path string) bool { return under(path, "github.com/jackc/pgx/v5") }

func TestBinariesLinkNoTestCode(t *testing.T) {
	g := mustList(t, module+"/origin", module+"/edge")
	for _, bin := range []string{module + "/origin", module + "/edge"} {
		for _, chain := range g.chains(bin, testOnly) {
			t.Errorf("%s links test code: %s", short(bin), chain)
		}
	}
}

func TestEdgeLinksNoOriginOrPostgres(t *testing.T) {
	g := mustList(t, module+"/edge")
	banned := func(path string) bool { return usesPostgres(path) || under(path, module+"/origin") }
	for _, chain := range g.chains(module+"/edge", banned) {
		t.Errorf("edge links the origin's side: %s", chain)
	}
}

func TestPairingLibrariesLinkNoPostgres(t *testing.T) {
	g := mustList(t, module+"/pairing/...")
	for _, root := range g.roots {
		for _, chain := range g.chains(root, usesPostgres) {
			t.Errorf("%s links pgx: %s", short(root), chain)
		}
	}
}

// The origin's HTTP core, which pairing/pairinghttp mounts on, is told how
// to check readiness and classify errors by whoever builds it: it links
// neither the store nor pgx.
func TestHTTPCoreLinksNoStore(t *testing.T) {
	g := mustList(t, module+"/origin/api")
	banned := func(path string) bool { return usesPostgres(path) || under(path, module+"/origin/store") }
	for _, chain := range g.chains(module+"/origin/api", banned) {
		t.Errorf("origin/api links the store: %s", chain)
	}
}

func TestChainsNameEveryRoute(t *testing.T) {
	g := &graph{pkgs: map[string]*pkg{}}
	for path, imports := range map[string][]string{
		module + "/origin":      {module + "/pkg/devdb", module + "/pkg/devproc", "fmt"},
		module + "/pkg/devdb":   {"testing", "fmt"},
		module + "/pkg/devproc": {"testing/fstest"},
		"testing/fstest":        {"testing"},
		"fmt":                   nil,
	} {
		g.pkgs[path] = &pkg{ImportPath: path, Imports: imports}
	}
	tests := []struct {
		name   string
		root   string
		banned func(string) bool
		want   []string
	}{
		{"each importer once", module + "/origin", testOnly, []string{
			"origin → pkg/devdb → testing", "origin → pkg/devproc → testing/fstest"}},
		{"clean", module + "/origin", func(p string) bool { return p == "net/http" }, nil},
		{"banned root", module + "/pkg/devdb", func(p string) bool { return under(p, module+"/pkg") }, []string{"pkg/devdb"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := g.chains(tt.root, tt.banned); !slices.Equal(got, tt.want) {
				t.Errorf("chains = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestTestOnly(t *testing.T) {
	for path, want := range map[string]bool{
		"testing":                          true,
		"testing/fstest":                   true,
		module + "/pkg/devdb/devdbtest":    true,
		module + "/origin/store/storetest": true,
		module + "/pkg/devbrowser":         true,
		module + "/pkg/devwp":              true,
		module + "/pkg/devdb":              false,
		module + "/origin":                 false,
		"github.com/jackc/pgx/v5/pgxtest":  false, // not ours: its own business
		"net/http":                         false,
		"testingx":                         false,
	} {
		if got := testOnly(path); got != want {
			t.Errorf("testOnly(%q) = %v, want %v", path, got, want)
		}
	}
}
