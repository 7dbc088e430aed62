// Package devproctest runs Listgate's binaries in tests, on top of
// [devproc]: BuildBinaries builds the origin and edge once per test binary
// (from TestMain), and Start runs one for a single test, stopping it when
// the test ends and printing its log if the test failed.
//
// It imports testing, so only tests may import it; the programs use
// [devproc] directly.
package devproctest

import (
	"os"
	"testing"

	"github.com/listgate/listgate/pkg/devproc"
)

// Start is [devproc.Start] for a test: a failure to start fails tb, and the
// process is stopped when tb ends, its log (named name) printed if tb
// failed.
func Start(tb testing.TB, name, bin string, opts devproc.Options) *devproc.Process {
	tb.Helper()
	p, err := devproc.Start(bin, opts)
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

// BuildBinaries builds the origin and edge into a new temporary directory
// with [devproc.Build]; Remove deletes it. It must run inside the module's
// tree.
func BuildBinaries() (*Binaries, error) {
	dir, err := os.MkdirTemp("", "listgate-bin-")
	if err != nil {
		return nil, err
	}
	built, err := devproc.Build(dir, devproc.Origin, devproc.Edge)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return &Binaries{Origin: built[0], Edge: built[1], dir: dir}, nil
}

// Remove deletes the binaries.
func (b *Binaries) Remove() { os.RemoveAll(b.dir) }
