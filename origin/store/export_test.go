package store

import "context"

// MigrateTo applies the migrations up to version v, so that a test of a
// migration can fill a database at the version before it.
func (db *DB) MigrateTo(ctx context.Context, v int) ([]Migration, error) { return db.migrate(ctx, v) }
