package store

import "context"

// MigrateTo applies the migrations up to version v, so that a test of a
// migration can fill a database at the version before it.
func (db *DB) MigrateTo(ctx context.Context, v int) ([]Migration, error) { return db.migrate(ctx, v) }

// LivenessOwner is the instance id the DB's claims record as their owner
// now, 0 for none.
func (db *DB) LivenessOwner() int32 { return db.live.owner() }

// LivenessClass is the first key of the liveness locks.
const LivenessClass = livenessClass
