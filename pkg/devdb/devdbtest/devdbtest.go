// Package devdbtest gives tests throwaway databases and Redis servers from
// [devdb]: one PostgreSQL cluster per test binary, shared by its tests, with a
// database of each test's own ([NewDatabase], optionally copied from a
// prepared [Template]); a cluster of the test's own for tests that stop it
// ([NewCluster]); and a Redis server per test ([NewRedis]). Everything is
// removed when the test (or, for the shared cluster, [RunTests]) ends.
//
// When the server binaries are missing, a test is skipped, except when the
// CI environment variable is set: there it fails, so that CI cannot pass by
// skipping.
//
// It imports testing, so only tests and test helpers may import it; the
// programs use [devdb] directly.
package devdbtest

import (
	"testing"

	"github.com/listgate/listgate/pkg/devdb"
)

// While the callers move here, these forward to devdb's own test helpers,
// so that old and new names share one cluster; they move here next.

// Template is a database prepared once per test binary (for example,
// migrated) and copied for each test with CREATE DATABASE … TEMPLATE.
type Template = devdb.Template

// RunTests runs m and then stops the cluster the tests shared. Call it from
// TestMain in every package that uses NewDatabase, directly or through a
// helper such as storetest:
//
//	func TestMain(m *testing.M) { os.Exit(devdbtest.RunTests(m)) }
func RunTests(m *testing.M) int { return devdb.RunTests(m) }

// NewDatabase creates an empty database (or a copy of tmpl, when not nil) on
// the cluster shared by the test binary, started on first use, and returns
// its URL. The database is dropped when the test ends. It fails tb when
// TestMain does not call RunTests. Safe for parallel tests.
func NewDatabase(tb testing.TB, tmpl *Template) string {
	tb.Helper()
	return devdb.NewTestDatabase(tb, tmpl)
}

// NewCluster starts a cluster of the test's own, for tests that stop or
// restart the server; it is closed when the test ends. It needs no RunTests.
func NewCluster(tb testing.TB) *devdb.Postgres {
	tb.Helper()
	return devdb.NewTestCluster(tb)
}

// NewRedis starts a Redis server for this test; it is stopped when the test
// ends. It needs no RunTests.
func NewRedis(tb testing.TB) *devdb.Redis {
	tb.Helper()
	return devdb.NewTestRedis(tb)
}
