package store

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/listgate/listgate/origin/leads/rules"
)

// Group commit of lead submissions.
//
// A submission costs Postgres about a millisecond of CPU, much of it the
// transaction around the work (its start, its snapshots, its commit) and
// the turn it waits for the site's round-robin counter, whose row every
// new lead of a site locks until its transaction ends. Submissions that
// arrive while others are being stored wait, and are then stored together
// in one transaction, in one round trip: the calls of submit_lead one after
// the other, in the order they arrived, as if each had been made alone
// after the previous one committed. A submission therefore sees the ones
// before it in its group: two with a contact in common are a lead and its
// duplicate, the second use of an Idempotency-Key replays the first's
// answer, and round robin gives consecutive turns. The group's duplicate
// locks (NewLead.LockKeys) are all taken first, in one sorted order, so
// that groups and single submissions never wait on each other in a cycle.
//
// When the group fails, each of its submissions is made again on its own,
// as SubmitLead makes one: a group that the database refused (one
// submission it could not store) was rolled back, and the others are stored
// without it; a group whose answer was lost (the connection died, the
// server gave up) may have committed, and each submission is made again
// with its attempt id, which finds what the group stored.

// DefaultLeadBatch is the most submissions stored in one transaction when
// Options.LeadBatch is zero.
const DefaultLeadBatch = 32

// pendingLead is one submission waiting for its group.
type pendingLead struct {
	ctx     context.Context
	nl      NewLead
	attempt pgtype.UUID
	row     submitLeadRow
	done    chan groupResult
}

// groupResult is what the group did for one submission: its outcome (err
// nil), or that it must be made again on its own (alone), after a group
// that may have committed (retry), or an error of its own.
type groupResult struct {
	out   LeadOutcome
	err   error
	alone bool
	retry bool
}

// leadGroupRunners is how many groups are stored at once: as many as the
// cores a small Postgres has. Groups of different sites, or of one site
// (but for their last statement, round robin), are stored side by side.
const leadGroupRunners = 2

// leadGroups gathers concurrent submissions into groups. The zero value
// stores nothing in groups (max 0: every submission alone).
type leadGroups struct {
	max     int
	runners int
	mu      sync.Mutex
	queue   []*pendingLead
	running int
}

// submitGrouped stores nl with the submissions that arrive meanwhile: it
// queues nl, and a submission that finds fewer than leadGroupRunners
// groups being stored starts a goroutine that stores the queue, group
// after group, until it is empty.
// A group of one is made as a single call (groupResult.alone).
func (db *DB) submitGrouped(ctx context.Context, nl NewLead, attempt pgtype.UUID) groupResult {
	g := &db.leadGroups
	p := &pendingLead{ctx: ctx, nl: nl, attempt: attempt, done: make(chan groupResult, 1)}
	g.mu.Lock()
	g.queue = append(g.queue, p)
	if g.running < g.runners {
		g.running++
		go db.storeGroups()
	}
	g.mu.Unlock()
	select {
	case r := <-p.done:
		return r
	case <-ctx.Done():
		// The group may still store it; as when a single call's context
		// ends, the caller cannot know.
		return groupResult{err: fmt.Errorf("store: submit lead: %w", ctx.Err())}
	}
}

// storeGroups stores the queue, group after group, until it is empty.
func (db *DB) storeGroups() {
	g := &db.leadGroups
	for {
		g.mu.Lock()
		n := min(len(g.queue), g.max)
		if n == 0 {
			g.running--
			g.mu.Unlock()
			return
		}
		batch := slices.Clone(g.queue[:n])
		g.queue = slices.Delete(g.queue, 0, n)
		g.mu.Unlock()
		db.storeGroup(batch)
	}
}

// storeGroup stores one group and answers each of its submissions.
func (db *DB) storeGroup(batch []*pendingLead) {
	// Submissions whose callers have given up are not stored.
	live := batch[:0]
	for _, p := range batch {
		if err := p.ctx.Err(); err != nil {
			p.done <- groupResult{err: fmt.Errorf("store: submit lead: %w", err)}
			continue
		}
		live = append(live, p)
	}
	switch len(live) {
	case 0:
		return
	case 1:
		live[0].done <- groupResult{alone: true}
		return
	}
	ctx, cancel := groupContext(live)
	defer cancel()
	var fixes []groupFix
	err := db.Pool.SendBatch(ctx, groupBatch(live, &fixes)).Close()
	if err != nil {
		// Refused (rolled back) or lost (perhaps committed): each alone.
		retry := IsUnavailable(err)
		for _, p := range live {
			p.done <- groupResult{alone: true, retry: retry}
		}
		return
	}
	outs, errs := make([]LeadOutcome, len(live)), make([]error, len(live))
	for i, p := range live {
		outs[i], errs[i] = p.row.result(p.nl)
	}
	applyFixes(live, outs, fixes)
	for i, p := range live {
		p.done <- groupResult{out: outs[i], err: errs[i]}
	}
}

// groupContext bounds a group's work by the earliest deadline of its
// submissions; it is not cancelled when one of their callers leaves.
func groupContext(batch []*pendingLead) (context.Context, context.CancelFunc) {
	var first time.Time
	for _, p := range batch {
		if d, ok := p.ctx.Deadline(); ok && (first.IsZero() || d.Before(first)) {
			first = d
		}
	}
	ctx := context.WithoutCancel(batch[0].ctx)
	if first.IsZero() {
		return context.WithCancel(ctx)
	}
	return context.WithDeadline(ctx, first)
}

// groupBatch is one group's statements, which pgx sends in one round trip
// and Postgres runs as one transaction (the implicit transaction of a
// pipeline, up to its one Sync): the group's duplicate locks, sorted, then
// each submission's call, in order, leaving round robin to the last
// statement, finish_lead_group (migration 0016), whose rows fix collects.
func groupBatch(batch []*pendingLead, fix *[]groupFix) *pgx.Batch {
	var keys []int64
	n := len(batch)
	sites, attempts, keyIDs := make([]string, n), make([]pgtype.UUID, n), make([]*string, n)
	idemKeys, claims := make([]*string, n), make([]*string, n)
	for i, p := range batch {
		keys = append(keys, p.nl.LockKeys...)
		sites[i], attempts[i] = p.nl.SiteID, p.attempt
		switch {
		case p.nl.Key != nil:
			attempt := p.attempt.String()
			keyIDs[i], idemKeys[i], claims[i] = &p.nl.KeyID, &p.nl.Key.Key, &attempt
		case p.nl.Idempotency != nil:
			keyIDs[i], idemKeys[i], claims[i] = &p.nl.KeyID, &p.nl.Idempotency.Key, &p.nl.Idempotency.ClaimID
		}
	}
	slices.Sort(keys)
	keys = slices.Compact(keys)
	b := &pgx.Batch{}
	if len(keys) > 0 {
		b.Queue(`SELECT count(pg_advisory_xact_lock(k.lock_key)) FROM unnest($1::bigint[]) AS k (lock_key)`, keys)
	}
	for _, p := range batch {
		b.Queue(submitLeadGroupCall, append(submitLeadArgs(p.nl, p.attempt, false), true)...).QueryRow(func(r pgx.Row) error {
			return r.Scan(p.row.dest()...)
		})
	}
	b.Queue(`SELECT r_attempt, r_assigned_to, r_reason, r_key_id, r_idem_key, r_response
		FROM finish_lead_group($1::uuid[], $2::uuid[], $3::uuid[], $4::text[], $5::uuid[])`,
		sites, attempts, keyIDs, idemKeys, claims).Query(func(rows pgx.Rows) error {
		var err error
		*fix, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (groupFix, error) {
			var f groupFix
			return f, r.Scan(&f.attempt, &f.assignedTo, &f.reason, &f.keyID, &f.idemKey, &f.response)
		})
		return err
	})
	return b
}

// submitLeadGroupCall is submitLeadCall leaving round robin to
// finish_lead_group ($31).
const submitLeadGroupCall = `SELECT r_outcome, r_lead_id, r_status, r_duplicate, r_assigned_to, r_reason, r_response,
		r_response_code
	FROM submit_lead($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19,
		$20, $21, $22, $23, $24, $25, $26, $27, $28, $29, $30, $31)`

// groupFix is a row of finish_lead_group: a submission of the group whose
// lead it assigned, and the answer stored with its key, if any.
type groupFix struct {
	attempt        pgtype.UUID
	assignedTo     *string
	reason         *string
	keyID, idemKey *string
	response       []byte
}

// applyFixes completes the outcomes of a group's submissions with what
// finish_lead_group did: the assignee (and, for a new lead, the reason) of
// each lead it assigned, and the answer stored with each key it corrected,
// which is the answer of the submission that stored it and of any later
// one in the group that replayed it.
func applyFixes(batch []*pendingLead, outs []LeadOutcome, fixes []groupFix) {
	if len(fixes) == 0 {
		return
	}
	byAttempt := make(map[[16]byte]*groupFix, len(fixes))
	type keyRef struct{ keyID, key string }
	answers := map[keyRef][]byte{}
	for i := range fixes {
		f := &fixes[i]
		byAttempt[f.attempt.Bytes] = f
		if f.keyID != nil && f.idemKey != nil && f.response != nil {
			answers[keyRef{*f.keyID, *f.idemKey}] = f.response
		}
	}
	for i, p := range batch {
		out := &outs[i]
		if f, ok := byAttempt[p.attempt.Bytes]; ok && out.LeadID != 0 {
			out.AssignedTo = f.assignedTo
			if !out.Duplicate && f.reason != nil {
				out.Reason = *f.reason
			}
			out.Response = rules.Response{LeadID: out.LeadID, Status: out.Status, Duplicate: out.Duplicate,
				AssignedTo: out.AssignedTo}.Encode()
		}
		if k := p.nl.Key; k != nil && (out.Key == IdempotencyClaimed || out.Key == IdempotencyReplay) {
			if a, ok := answers[keyRef{p.nl.KeyID, k.Key}]; ok {
				out.Response = a
			}
		}
		if c := p.nl.Idempotency; c != nil {
			if a, ok := answers[keyRef{p.nl.KeyID, c.Key}]; ok {
				out.Response = a
			}
		}
	}
}
