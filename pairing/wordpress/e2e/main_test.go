package e2e

import (
	"fmt"
	"os"
	"testing"

	"github.com/listgate/listgate/pkg/devdb/devdbtest"
	"github.com/listgate/listgate/pkg/devproc/devproctest"
)

// bins are the origin and edge binaries TestMain builds.
var bins *devproctest.Binaries

// TestMain builds the origin and edge, runs the tests, and stops the
// throwaway Postgres they used.
func TestMain(m *testing.M) {
	var err error
	if bins, err = devproctest.BuildBinaries(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := devdbtest.RunTests(m)
	bins.Remove()
	os.Exit(code)
}
