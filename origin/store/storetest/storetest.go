// Package storetest gives tests a migrated database of their own on the test
// binary's throwaway cluster (pkg/devdb/devdbtest). Packages using it call
// devdbtest.RunTests from TestMain.
package storetest

import (
	"context"
	"testing"

	"github.com/listgate/listgate/origin/store"
	"github.com/listgate/listgate/pkg/devdb/devdbtest"
)

var migrated = &devdbtest.Template{
	Name: "listgate_migrated",
	Prepare: func(ctx context.Context, url string) error {
		db, err := store.Open(ctx, url, store.Options{MaxConns: 2})
		if err != nil {
			return err
		}
		defer db.Close()
		_, err = db.Migrate(ctx)
		return err
	},
}

// URL returns the connection string of a new, migrated database that is
// dropped when the test ends.
func URL(tb testing.TB) string {
	tb.Helper()
	return devdbtest.NewDatabase(tb, migrated)
}

// NewDB opens a new, migrated database for the test; it is closed and
// dropped when the test ends.
func NewDB(tb testing.TB) *store.DB {
	tb.Helper()
	db, err := store.Open(context.Background(), URL(tb), store.Options{MaxConns: 10})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(db.Close)
	return db
}
