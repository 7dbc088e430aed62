package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/listgate/listgate/pkg/devdb"
)

// bins are the origin and edge binaries TestMain builds.
var bins struct {
	dir          string
	origin, edge string
}

// TestMain builds the origin and edge, runs the tests, and stops the
// throwaway Postgres they used.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "listgate-wp-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bins.dir = dir
	bins.origin, bins.edge = filepath.Join(dir, "origin"), filepath.Join(dir, "edge")
	for _, b := range []struct{ out, pkg string }{{bins.origin, "../../../origin"}, {bins.edge, "../../../edge"}} {
		if out, err := exec.Command("go", "build", "-o", b.out, b.pkg).CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "build %s: %v\n%s", b.pkg, err, out)
			os.RemoveAll(dir)
			os.Exit(1)
		}
	}
	code := devdb.RunTests(m)
	os.RemoveAll(dir)
	os.Exit(code)
}
