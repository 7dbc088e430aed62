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
	// The edges started by the tests inherit it: they report counted
	// listing views every viewsInterval instead of every 10 s.
	os.Setenv("LISTGATE_VIEWS_INTERVAL", viewsInterval)
	var err error
	if bins, err = devproctest.BuildBinaries(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := devdbtest.RunTests(m)
	bins.Remove()
	os.Exit(code)
}
