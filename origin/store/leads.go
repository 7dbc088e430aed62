package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/listgate/listgate/origin/leads/rules"
)

// Assignment reasons, recorded in lead_assignments.
const (
	AssignedByAgentEmail       = "agent_email"
	AssignedByListingAgent     = "listing_agent"
	AssignedByDefaultRecipient = "default_recipient"
	AssignedByRoundRobin       = "round_robin"
	AssignedToNobody           = "none"
)

// LeadRefQuery names what a lead refers to; zero fields are not looked up.
type LeadRefQuery struct {
	ListingRef int64
	// ListingID is matched against the uniqueID of the site's listings, and
	// IDAgency/IDUnique (its AGENCYID:UNIQUEID parts, when it has them)
	// against the (agentID, uniqueID) pair.
	ListingID, IDAgency, IDUnique string
	AgentEmail                    string
}

// LeadRefFacts looks up, in one round trip, the site and the listings and
// agent a lead refers to, in the form the lead rules resolve them from:
// ByRef is the listing with q.ListingRef, ByID the listings q.ListingID may
// name (bare and qualified, by ref, at most 100), AgentID and AgentEmail
// the agent with q.AgentEmail (any case); deleted listings are left out.
// It is read-only, and tried once more when the database drops it.
func (db *DB) LeadRefFacts(ctx context.Context, siteID string, q LeadRefQuery) (rules.RefFacts, error) {
	var f rules.RefFacts
	var err error
	for attempt := 1; attempt <= maxAttempts; attempt++ {
		f = rules.RefFacts{}
		// A batch remembers the statements it prepared on its connection:
		// each attempt needs a new one.
		err = db.Pool.SendBatch(ctx, leadRefBatch(siteID, q, &f)).Close()
		if err == nil || !IsUnavailable(err) || ctx.Err() != nil {
			break
		}
	}
	if err != nil {
		return rules.RefFacts{}, fmt.Errorf("store: lead references: %w", err)
	}
	return f, nil
}

// leadRefBatch queues the look-ups of LeadRefFacts, filling f.
func leadRefBatch(siteID string, q LeadRefQuery, f *rules.RefFacts) *pgx.Batch {
	b := &pgx.Batch{}
	b.Queue(`SELECT EXISTS (SELECT 1 FROM sites WHERE id = $1)`, siteID).QueryRow(func(r pgx.Row) error {
		return r.Scan(&f.SiteExists)
	})
	if q.ListingRef != 0 {
		b.Queue(`SELECT ref FROM listings WHERE site_id = $1 AND ref = $2 AND status <> 'deleted'`, siteID, q.ListingRef).
			QueryRow(func(r pgx.Row) error { return noRows(r.Scan(&f.ByRef)) })
	}
	if q.ListingID != "" {
		b.Queue(`SELECT ref, agency_id, unique_id FROM listings
			WHERE site_id = $1 AND status <> 'deleted' AND (unique_id = $2 OR (agency_id = $3 AND unique_id = $4))
			ORDER BY ref LIMIT 100`, siteID, q.ListingID, q.IDAgency, q.IDUnique).
			Query(func(rows pgx.Rows) error {
				var err error
				f.ByID, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (rules.ListingKey, error) {
					var k rules.ListingKey
					return k, r.Scan(&k.Ref, &k.AgencyID, &k.UniqueID)
				})
				return err
			})
	}
	if q.AgentEmail != "" {
		b.Queue(`SELECT id, email FROM agents WHERE site_id = $1 AND lower(email) = lower($2)`, siteID, q.AgentEmail).
			QueryRow(func(r pgx.Row) error { return noRows(r.Scan(&f.AgentID, &f.AgentEmail)) })
	}
	return b
}

// noRows turns "no rows" into nil, leaving the destination zero.
func noRows(err error) error {
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	return err
}

// NewLead is a validated submission for SubmitLead. Empty strings and zero
// ids are stored as NULL.
type NewLead struct {
	SiteID, KeyID, RequestID string
	ListingRef               int64
	Type, Priority, Name     string
	Email, EmailNorm         string
	Phone, PhoneE164         string
	Mobile, MobileE164       string
	Message                  string
	// Phones are the distinct E.164 numbers duplicates are matched on.
	Phones []string
	// Metadata is a JSON object; Payload the request as received, JSON.
	Metadata, Payload []byte
	// LockKeys are the advisory locks to take, in this order, before the
	// duplicate look-up (rules.LockKeys).
	LockKeys []int64
	// DuplicateWindow is how far back a lead counts as a duplicate.
	DuplicateWindow time.Duration
	// AgentID and AgentEmail are the agent named by agent_email, if any.
	AgentID    int64
	AgentEmail string
	// Idempotency, when not nil, is a claim held for this request; it is
	// completed with the response (rules.ResponseStatus and
	// LeadOutcome.Response) in the lead's transaction, so the response is
	// stored if and only if the lead is.
	Idempotency *IdempotencyClaim
}

// LeadOutcome is what became of a submission.
type LeadOutcome struct {
	LeadID int64
	Status string
	// Duplicate is true when the submission was attached to an earlier lead.
	Duplicate bool
	// AssignedTo is the e-mail of the agent the lead is assigned to, nil for
	// nobody; Reason says why (AssignedBy…), "" for a duplicate.
	AssignedTo *string
	Reason     string
	// Response is the body of the submission's answer, rules.Response
	// encoded: the one stored with NewLead.Idempotency.
	Response []byte
}

// ErrClaimLost is returned by SubmitLead when the request's idempotency
// claim was taken over (it had been held longer than the lease, or its
// owner's liveness lock was free) before the lead could be stored; nothing
// was stored.
var ErrClaimLost = errors.New("store: idempotency claim lost")

// SubmitLead stores a submission in one transaction. It takes the
// submission's advisory locks, then looks for a lead of the same site,
// listing (or none) and type, with the same e-mail or one of the same
// numbers, created within the window. If there is one, the submission is
// attached to it (duplicate); otherwise a lead is created and assigned: the
// agent named by agent_email, else the listing's first listing agent with an
// e-mail, else the site's default recipient, else the next of the site's
// agents with an e-mail in round-robin order, else nobody; the assignment is
// recorded with its reason. Either way the submission is stored. Nothing is
// stored unless the transaction commits.
//
// A transaction that fails before its COMMIT was sent, because the
// connection died or the server gave up (IsUnavailable), is run once more on
// another connection: nothing of it was stored. A failed COMMIT is not
// retried, since it may have been applied.
func (db *DB) SubmitLead(ctx context.Context, nl NewLead) (LeadOutcome, error) {
	for attempt := 1; ; attempt++ {
		var out LeadOutcome
		committing := false
		err := db.InTx(ctx, func(tx pgx.Tx) error {
			var err error
			out, err = submitLead(ctx, tx, nl)
			committing = err == nil
			return err
		})
		if err == nil {
			return out, nil
		}
		if committing || attempt == maxAttempts || !IsUnavailable(err) || ctx.Err() != nil {
			return LeadOutcome{}, err
		}
	}
}

// maxAttempts bounds the runs of a lead transaction and of the reference
// look-up when the database drops them.
const maxAttempts = 2

func submitLead(ctx context.Context, tx pgx.Tx, nl NewLead) (LeadOutcome, error) {
	// The locks, the duplicate search and what assignment needs to know go
	// in one round trip: a batch runs in order, so the search starts once
	// the locks are held.
	b := &pgx.Batch{}
	for _, k := range nl.LockKeys {
		b.Queue(`SELECT pg_advisory_xact_lock($1)`, k)
	}
	out, found := LeadOutcome{Duplicate: true}, false
	queueFindDuplicate(b, nl, &out, &found)
	var af assignFacts
	queueAssignFacts(b, nl, &af)
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
		return LeadOutcome{}, fmt.Errorf("store: lead locks and duplicate search: %w", err)
	}
	b = &pgx.Batch{}
	if !found {
		var err error
		if out, err = createLead(ctx, tx, nl, af, b); err != nil {
			return LeadOutcome{}, err
		}
	}
	// The rows that follow from the outcome, in one round trip: its
	// assignment (queued by createLead), the submission, the stored
	// response of the Idempotency-Key.
	// The submission and its event in the outbox (lead.created or
	// lead.duplicate), which the outbox's trigger fans out into deliveries.
	event := EventLeadCreated
	if out.Duplicate {
		event = EventLeadDuplicate
	}
	b.Queue(`WITH s AS (INSERT INTO lead_submissions (site_id, lead_id, key_id, duplicate, request_id, payload)
			VALUES ($1, $2, $3, $4, $5, $6) RETURNING id)
		INSERT INTO events (site_id, type, payload)
		SELECT $1, $7, jsonb_build_object('lead_id', $2::bigint, 'submission_id', s.id) FROM s`,
		nl.SiteID, out.LeadID, nullString(nl.KeyID), out.Duplicate, nullString(nl.RequestID), string(nl.Payload), event)
	out.Response = rules.Response{LeadID: out.LeadID, Status: out.Status, Duplicate: out.Duplicate,
		AssignedTo: out.AssignedTo}.Encode()
	if nl.Idempotency != nil {
		queueFinishIdempotency(b, *nl.Idempotency, rules.ResponseStatus, out.Response)
	}
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
		if errors.Is(err, ErrClaimLost) {
			return LeadOutcome{}, err
		}
		return LeadOutcome{}, fmt.Errorf("store: insert lead submission: %w", err)
	}
	return out, nil
}

// queueFindDuplicate queues the search for the earliest lead the
// submission duplicates; when there is one, it sets *found and fills out.
func queueFindDuplicate(b *pgx.Batch, nl NewLead, out *LeadOutcome, found *bool) {
	phones := nl.Phones
	if phones == nil {
		phones = []string{}
	}
	b.Queue(`SELECT id, status, assigned_to FROM leads
		WHERE site_id = $1
		  AND listing_ref IS NOT DISTINCT FROM $2::bigint
		  AND type = $3
		  AND created_at > now() - make_interval(secs => $4)
		  AND (email_norm = $5 OR phone_e164 = ANY ($6) OR mobile_e164 = ANY ($6))
		ORDER BY created_at, id
		LIMIT 1`,
		nl.SiteID, nullInt(nl.ListingRef), nl.Type, nl.DuplicateWindow.Seconds(), nullString(nl.EmailNorm), phones).
		QueryRow(func(r pgx.Row) error {
			err := r.Scan(&out.LeadID, &out.Status, &out.AssignedTo)
			if errors.Is(err, pgx.ErrNoRows) {
				return nil
			}
			if err != nil {
				return fmt.Errorf("find duplicate lead: %w", err)
			}
			*found = true
			return nil
		})
}

// assignFacts is what the assignment rules read (see SubmitLead).
type assignFacts struct {
	// listingAgentID and listingAgentEmail are the listing's first listing
	// agent with an e-mail, 0 for none.
	listingAgentID    int64
	listingAgentEmail string
	// recipient is the site's default lead recipient ("" for none) and
	// recipientAgent the agent with that e-mail, if any.
	recipient      string
	recipientAgent *int64
	// agents is true when the site has an agent with an e-mail.
	agents bool
}

// queueAssignFacts queues the read-only look-ups of the assignment rules,
// filling af; none is queued when agent_email already decides.
func queueAssignFacts(b *pgx.Batch, nl NewLead, af *assignFacts) {
	if nl.AgentID != 0 {
		return
	}
	if nl.ListingRef != 0 {
		b.Queue(`SELECT a.id, a.email FROM listing_agents la
			JOIN agents a ON a.site_id = la.site_id AND a.id = la.agent_id
			WHERE la.site_id = $1 AND la.listing_ref = $2 AND btrim(coalesce(a.email, '')) <> ''
			ORDER BY la.position LIMIT 1`, nl.SiteID, nl.ListingRef).
			QueryRow(func(r pgx.Row) error {
				return wrap("listing agent", noRows(r.Scan(&af.listingAgentID, &af.listingAgentEmail)))
			})
	}
	b.Queue(`SELECT btrim(coalesce(s.default_lead_recipient, '')),
			(SELECT a.id FROM agents a WHERE a.site_id = s.id AND lower(a.email) = lower(btrim(s.default_lead_recipient))),
			EXISTS (SELECT 1 FROM agents a WHERE a.site_id = s.id AND btrim(coalesce(a.email, '')) <> '')
		FROM sites s WHERE s.id = $1`, nl.SiteID).
		QueryRow(func(r pgx.Row) error {
			return wrap("default lead recipient", r.Scan(&af.recipient, &af.recipientAgent, &af.agents))
		})
}

// insertLeadColumns are the columns createLead inserts, assignment last.
const insertLeadColumns = `site_id, listing_ref, type, priority, name, email, email_norm, phone, phone_e164,
	mobile, mobile_e164, message, metadata, assigned_to, assigned_agent_id`

// createLead assigns and inserts a new lead, and queues its assignment's
// record on b. Round robin takes the site's counter in the statement that
// inserts the lead: the counter row stays locked until the transaction
// ends (concurrent leads take consecutive turns), so it is taken as late,
// and held for as few round trips, as can be.
func createLead(ctx context.Context, tx pgx.Tx, nl NewLead, af assignFacts, b *pgx.Batch) (LeadOutcome, error) {
	values := []any{nl.SiteID, nullInt(nl.ListingRef), nl.Type, nl.Priority, nl.Name,
		nullString(nl.Email), nullString(nl.EmailNorm), nullString(nl.Phone), nullString(nl.PhoneE164),
		nullString(nl.Mobile), nullString(nl.MobileE164), nullString(nl.Message), string(nl.Metadata)}
	a := assignment{reason: AssignedToNobody}
	switch {
	case nl.AgentID != 0:
		a = assignment{&nl.AgentID, &nl.AgentEmail, AssignedByAgentEmail}
	case af.listingAgentID != 0:
		a = assignment{&af.listingAgentID, &af.listingAgentEmail, AssignedByListingAgent}
	case af.recipient != "":
		a = assignment{af.recipientAgent, &af.recipient, AssignedByDefaultRecipient}
	}
	var out LeadOutcome
	var agentID *int64
	var err error
	if a.reason == AssignedToNobody && af.agents {
		// The agent at the turn's position (modulo their number) among
		// the site's agents with an e-mail, in id order; nobody if they
		// went away meanwhile.
		err = tx.QueryRow(ctx, `WITH turn AS (
				INSERT INTO lead_round_robin AS rr (site_id, next) VALUES ($1, 1)
				ON CONFLICT (site_id) DO UPDATE SET next = rr.next + 1
				RETURNING next - 1 AS t),
			pick AS (
				SELECT a.id, a.email FROM (
					SELECT id, email, row_number() OVER (ORDER BY id) - 1 AS i, count(*) OVER () AS n
					FROM agents WHERE site_id = $1 AND btrim(coalesce(email, '')) <> '') a, turn
				WHERE a.i = turn.t % a.n)
			INSERT INTO leads (`+insertLeadColumns+`)
			SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, pick.email, pick.id
			FROM turn LEFT JOIN pick ON true
			RETURNING id, status, assigned_to, assigned_agent_id`, values...).
			Scan(&out.LeadID, &out.Status, &out.AssignedTo, &agentID)
		a = assignment{agentID, out.AssignedTo, AssignedByRoundRobin}
		if agentID == nil {
			a.reason = AssignedToNobody
		}
	} else {
		err = tx.QueryRow(ctx, `INSERT INTO leads (`+insertLeadColumns+`)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
			RETURNING id, status, assigned_to`, append(values, a.email, a.agentID)...).
			Scan(&out.LeadID, &out.Status, &out.AssignedTo)
	}
	if err != nil {
		return LeadOutcome{}, fmt.Errorf("store: insert lead: %w", err)
	}
	out.Reason = a.reason
	b.Queue(`INSERT INTO lead_assignments (site_id, lead_id, agent_id, assigned_to, reason)
		VALUES ($1, $2, $3, $4, $5)`, nl.SiteID, out.LeadID, a.agentID, a.email, a.reason)
	return out, nil
}

// assignment is who a new lead goes to, and why.
type assignment struct {
	agentID *int64
	email   *string
	reason  string
}

// wrap adds context to a non-nil error.
func wrap(what string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("store: %s: %w", what, err)
}

func nullString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func nullInt(n int64) *int64 {
	if n == 0 {
		return nil
	}
	return &n
}

func nullInt32(n int32) *int32 {
	if n == 0 {
		return nil
	}
	return &n
}
