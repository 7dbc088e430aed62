package e2e

import (
	"fmt"
	"os"
	"testing"

	"github.com/listgate/listgate/pkg/devdb"
	"github.com/listgate/listgate/pkg/devproc"
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
	built, err := devproc.Build(dir, devproc.Origin, devproc.Edge)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	bins.origin, bins.edge = built[0], built[1]
	code := devdb.RunTests(m)
	os.RemoveAll(dir)
	os.Exit(code)
}
