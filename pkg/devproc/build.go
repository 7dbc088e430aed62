package devproc

import (
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"testing"
)

// Origin and Edge are the import paths of Listgate's two programs, for
// Build.
const (
	Origin = "github.com/listgate/listgate/origin"
	Edge   = "github.com/listgate/listgate/edge"
)

// Build compiles each main package (an import path of this module, such as
// Origin) into dir with `go build`, named after its last element, and
// returns the binaries' paths in the order given. It must run inside the
// module's tree.
func Build(dir string, pkgs ...string) ([]string, error) {
	bins := make([]string, len(pkgs))
	for i, pkg := range pkgs {
		bins[i] = filepath.Join(dir, path.Base(pkg))
		if out, err := exec.Command("go", "build", "-o", bins[i], pkg).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("devproc: build %s: %v\n%s", pkg, err, out)
		}
	}
	return bins, nil
}

// StartTB is Start for a test: a failure to start fails tb, and the process
// is stopped when tb ends, its log printed if tb failed.
func StartTB(tb testing.TB, name, bin string, opts Options) *Process {
	tb.Helper()
	p, err := Start(bin, opts)
	if err != nil {
		tb.Fatalf("%s: %v", name, err)
	}
	tb.Cleanup(func() {
		p.Stop()
		if tb.Failed() {
			tb.Logf("--- %s log ---\n%s", name, p.Logs())
		}
	})
	return p
}

// Binaries are the origin and edge built for a test package (TestMain).
type Binaries struct {
	Origin, Edge string
	dir          string
}

// BuildBinaries builds the origin and edge into a new temporary directory;
// Remove deletes it.
func BuildBinaries() (*Binaries, error) {
	dir, err := os.MkdirTemp("", "listgate-bin-")
	if err != nil {
		return nil, err
	}
	built, err := Build(dir, Origin, Edge)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return &Binaries{Origin: built[0], Edge: built[1], dir: dir}, nil
}

// Remove deletes the binaries.
func (b *Binaries) Remove() { os.RemoveAll(b.dir) }
