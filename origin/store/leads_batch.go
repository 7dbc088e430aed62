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
// A submission costs Postgres over a millisecond of CPU, much of it the
// transaction around the work (its start, its snapshots, its commit) and
// the turn it waits for the site's round-robin counter, whose row every
// new lead of a site locks until its transaction ends. Submissions to a
// site that arrive while a group of the site's is being stored wait, and
// are then stored together in one transaction, in one round trip: the
// calls of submit_lead one after the other, in the order they arrived, as
// if each had been made alone after the previous one committed. A
// submission therefore sees the ones before it in its group: two with a
// contact in common are a lead and its duplicate, the second use of an
// Idempotency-Key replays the first's answer, and round robin gives
// consecutive turns. Each call takes its own
// locks, in the order a call alone takes them (its key's row, then its
// duplicate locks, sorted), and holds them to the group's commit. A site's
// groups are stored one at a time on an origin, so they never wait on each
// other; two origins' groups that wait on each other in a cycle are ended
// by Postgres's deadlock detection, and their submissions made again alone.
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

// leadGroups gathers concurrent submissions into groups, one queue per
// site, which is in sites exactly while a goroutine stores it. A site's
// groups are stored one at a time: each new lead of a group takes a turn
// of the site's round-robin counter, whose row its
// transaction holds to the commit, so two groups of one site would only
// wait for each other (measured: more Postgres CPU a lead with two at
// once). Sites' groups are stored side by side. The zero value stores
// nothing in groups (max 0: every submission alone).
type leadGroups struct {
	max   int
	mu    sync.Mutex
	sites map[string]*siteQueue
}

// siteQueue is the submissions to one site waiting for their group.
type siteQueue struct {
	queue []*pendingLead
}

// submitGrouped stores nl with the submissions to its site that arrive
// meanwhile: it queues nl, and the first submission to find no group of
// its site being stored starts a goroutine that stores the site's queue,
// group after group, until it is empty.
func (db *DB) submitGrouped(ctx context.Context, nl NewLead, attempt pgtype.UUID) groupResult {
	g := &db.leadGroups
	p := &pendingLead{ctx: ctx, nl: nl, attempt: attempt, done: make(chan groupResult, 1)}
	g.mu.Lock()
	if g.sites == nil {
		g.sites = map[string]*siteQueue{}
	}
	q := g.sites[nl.SiteID]
	if q == nil {
		q = &siteQueue{}
		g.sites[nl.SiteID] = q
		go db.storeGroups(nl.SiteID, q)
	}
	q.queue = append(q.queue, p)
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

// storeGroups stores a site's queue, group after group, until it is empty,
// and then forgets the queue.
func (db *DB) storeGroups(site string, q *siteQueue) {
	g := &db.leadGroups
	for {
		g.mu.Lock()
		n := min(len(q.queue), g.max)
		if n == 0 {
			delete(g.sites, site)
			g.mu.Unlock()
			return
		}
		batch := slices.Clone(q.queue[:n])
		q.queue = slices.Delete(q.queue, 0, n)
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
	if len(live) == 0 {
		return
	}
	// A group of one is stored here too, not handed back to its caller:
	// this goroutine stays busy for as long as it takes, and the
	// submissions that arrive meanwhile gather into the next group.
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
// pipeline, up to its one Sync): the rows of the keys claimed before the
// call, then each submission's call, in order, leaving round robin to the last
// statement, finish_lead_group (migration 0016), whose rows fix collects.
func groupBatch(batch []*pendingLead, fix *[]groupFix) *pgx.Batch {
	n := len(batch)
	sites, attempts, keyIDs := make([]string, n), make([]pgtype.UUID, n), make([]*string, n)
	idemKeys, claims := make([]*string, n), make([]*string, n)
	for i, p := range batch {
		sites[i], attempts[i] = p.nl.SiteID, p.attempt
		switch {
		case p.nl.Key != nil:
			attempt := p.attempt.String()
			keyIDs[i], idemKeys[i], claims[i] = &p.nl.KeyID, &p.nl.Key.Key, &attempt
		case p.nl.Idempotency != nil:
			keyIDs[i], idemKeys[i], claims[i] = &p.nl.KeyID, &p.nl.Idempotency.Key, &p.nl.Idempotency.ClaimID
		}
	}
	b := &pgx.Batch{}
	// The rows of keys claimed before the call come first, as in a call
	// alone: a request that takes such a claim over (its lease over) while
	// the group waits for a lock waits for the group, then finds the
	// answer stored. In key order.
	var cSites, cKeyIDs, cKeys, cClaims []string
	for _, p := range batch {
		if c := p.nl.Idempotency; c != nil {
			cSites, cKeyIDs = append(cSites, c.SiteID), append(cKeyIDs, c.KeyID)
			cKeys, cClaims = append(cKeys, c.Key), append(cClaims, c.ClaimID)
		}
	}
	if len(cClaims) > 0 {
		b.Queue(`SELECT count(*) FROM (
				SELECT 1 FROM idempotency_keys k
				JOIN unnest($1::uuid[], $2::uuid[], $3::text[], $4::uuid[]) AS c (site_id, key_id, idem_key, claim_id)
					ON k.site_id = c.site_id AND k.key_id = c.key_id AND k.idem_key = c.idem_key AND k.claim_id = c.claim_id
				ORDER BY k.site_id, k.key_id, k.idem_key
				FOR UPDATE OF k) AS locked`, cSites, cKeyIDs, cKeys, cClaims)
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
