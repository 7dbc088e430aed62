package store

import (
	"context"
	"crypto/rand"

	"github.com/jackc/pgx/v5/pgtype"
)

// MigrateTo applies the migrations up to version v, so that a test of a
// migration can fill a database at the version before it.
func (db *DB) MigrateTo(ctx context.Context, v int) ([]Migration, error) { return db.migrate(ctx, v) }

// LivenessOwner is the instance id the DB's claims record as their owner
// now, 0 for none.
func (db *DB) LivenessOwner() int32 { return db.live.owner() }

// LivenessClass is the first key of the liveness locks.
const LivenessClass = livenessClass

// SubmitLeadGroup stores nls as one group, in this order, as SubmitLead
// stores submissions that arrive together, and returns what became of each
// and whether the group stored it (false: it was made again alone, as
// SubmitLead makes it when its group fails).
func (db *DB) SubmitLeadGroup(ctx context.Context, nls []NewLead) ([]LeadOutcome, []error, []bool) {
	batch := make([]*pendingLead, len(nls))
	for i, nl := range nls {
		attempt := pgtype.UUID{Valid: true}
		rand.Read(attempt.Bytes[:])
		batch[i] = &pendingLead{ctx: ctx, nl: nl, attempt: attempt, done: make(chan groupResult, 1)}
	}
	db.storeGroup(batch)
	outs, errs, grouped := make([]LeadOutcome, len(nls)), make([]error, len(nls)), make([]bool, len(nls))
	for i, p := range batch {
		r := <-p.done
		if r.alone {
			outs[i], errs[i] = db.submitAlone(ctx, p.nl, p.attempt, r.retry)
			continue
		}
		outs[i], errs[i], grouped[i] = r.out, r.err, true
	}
	return outs, errs, grouped
}
