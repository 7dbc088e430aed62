package store

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

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
	// Key, when not nil, is the request's Idempotency-Key (of the same site
	// and API key), claimed in the lead's transaction: a new, expired or
	// abandoned key is stored with the response (rules.ResponseStatus and
	// LeadOutcome.Response) if and only if the lead is, and is never seen in
	// flight by another request, which waits for the transaction instead;
	// a key with a stored response, in use with another body, or claimed in
	// flight by a live request of its own, stores nothing (LeadOutcome.Key).
	Key *IdempotencyRequest
	// Idempotency, when not nil (and Key nil), is a claim held for this
	// request, of the same site and API key (ClaimIdempotencyKey); it is
	// completed with the response in the lead's transaction, so the
	// response is stored if and only if the lead is.
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
	// Repeated is true when an earlier try of this SubmitLead, whose answer
	// the connection lost, had stored the submission: the outcome is that
	// try's, and nothing more was stored.
	Repeated bool
	// Response is the body of the submission's answer, rules.Response
	// encoded: the one stored with NewLead.Key or NewLead.Idempotency.
	Response []byte
	// Key is what became of NewLead.Key: IdempotencyClaimed when the lead
	// was stored with it (or an earlier try of this SubmitLead was);
	// IdempotencyReplay when the key has a response stored (Response and
	// ResponseStatus; the rest is zero); IdempotencyMismatch when it was
	// used with another body, IdempotencyInFlight when a live request
	// claimed it on its own (nothing stored). Zero without NewLead.Key.
	Key IdempotencyState
	// ResponseStatus is the HTTP status stored with a replayed response.
	ResponseStatus int
}

// ErrClaimLost is returned by SubmitLead when the request's idempotency
// claim was taken over (it had been held longer than the lease, or its
// owner's liveness lock was free) before the lead could be stored; nothing
// was stored.
var ErrClaimLost = errors.New("store: idempotency claim lost")

// ErrSiteGone is returned by SubmitLead when the submission's site does not
// exist (it was deleted after its key was checked); nothing was stored.
var ErrSiteGone = errors.New("store: the lead's site does not exist")

// SubmitLead stores a submission in one transaction, in one round trip: a
// call of submit_lead (migration 0013) outside any transaction block. It
// takes the submission's advisory locks, then looks for a lead of the same
// site, listing (or none) and type, with the same e-mail or one of the same
// numbers, created within the window. If there is one, the submission is
// attached to it (duplicate); otherwise a lead is created and assigned: the
// agent named by agent_email, else the listing's first listing agent with an
// e-mail, else the site's default recipient, else the next of the site's
// agents with an e-mail in round-robin order, else nobody; the assignment is
// recorded with its reason. Either way the submission and its outbox event
// are stored, and the Idempotency-Key (NewLead.Key) or the claim
// (NewLead.Idempotency), if any, completed with the response. Nothing is
// stored unless the call commits. It fails with ErrSiteGone or ErrClaimLost,
// having stored nothing, when the site is gone or the claim lost; a key
// that holds a response, another body or a live claim stores nothing and
// says so in LeadOutcome.Key.
//
// A call that fails because the connection died or the server gave up
// (IsUnavailable) is made once more on another connection, with the same
// attempt id: whether or not the first call committed before its answer was
// lost, the submission is stored once (the second call finds the first's,
// and returns its outcome with Repeated set).
//
// Submissions that arrive while others are being stored are stored with
// them, up to Options.LeadBatch in one transaction, each as if it came
// after the one before it had committed (leads_batch.go); a group that
// fails is made again submission by submission, as above.
func (db *DB) SubmitLead(ctx context.Context, nl NewLead) (LeadOutcome, error) {
	if c := nl.Idempotency; c != nil && (c.SiteID != nl.SiteID || c.KeyID != nl.KeyID || nl.Key != nil) {
		return LeadOutcome{}, fmt.Errorf("store: submit lead: the claim is another site's or key's, or comes with a key")
	}
	if k := nl.Key; k != nil && (k.SiteID != nl.SiteID || k.KeyID != nl.KeyID) {
		return LeadOutcome{}, fmt.Errorf("store: submit lead: the Idempotency-Key is another site's or key's")
	}
	attempt := pgtype.UUID{Valid: true}
	if _, err := rand.Read(attempt.Bytes[:]); err != nil {
		return LeadOutcome{}, fmt.Errorf("store: submit lead: attempt id: %w", err)
	}
	retry := false
	if db.leadGroups.max > 1 {
		r := db.submitGrouped(ctx, nl, attempt)
		if !r.alone {
			return r.out, r.err
		}
		retry = r.retry
	}
	return db.submitAlone(ctx, nl, attempt, retry)
}

// submitAlone stores nl in a call of its own, made again once when the
// database drops it; retry says whether an earlier call of the same
// attempt may have stored it.
func (db *DB) submitAlone(ctx context.Context, nl NewLead, attempt pgtype.UUID, retry bool) (LeadOutcome, error) {
	for try := 1; ; try++ {
		out, err := db.submitLead(ctx, nl, attempt, retry || try > 1)
		if err == nil || try == maxAttempts || !IsUnavailable(err) || ctx.Err() != nil {
			return out, err
		}
	}
}

// maxAttempts bounds the calls of a submission and of the reference
// look-up when the database drops them.
const maxAttempts = 2

// submitLeadCall calls submit_lead; see its comment in migration 0013.
const submitLeadCall = `SELECT r_outcome, r_lead_id, r_status, r_duplicate, r_assigned_to, r_reason, r_response,
		r_response_code
	FROM submit_lead($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19,
		$20, $21, $22, $23, $24, $25, $26, $27, $28, $29, $30)`

// submitLead makes one call of submit_lead; retry says whether an earlier
// call of the same attempt failed.
func (db *DB) submitLead(ctx context.Context, nl NewLead, attempt pgtype.UUID, retry bool) (LeadOutcome, error) {
	var r submitLeadRow
	if err := db.Pool.QueryRow(ctx, submitLeadCall, submitLeadArgs(nl, attempt, retry)...).Scan(r.dest()...); err != nil {
		return LeadOutcome{}, fmt.Errorf("store: submit lead: %w", err)
	}
	return r.result(nl)
}

// submitLeadArgs are the arguments of submitLeadCall for one submission.
func submitLeadArgs(nl NewLead, attempt pgtype.UUID, retry bool) []any {
	phones := nl.Phones
	if phones == nil {
		phones = []string{}
	}
	var (
		idemKey, claimID *string
		bodyHash         []byte
		ttl, lease       float64
	)
	if c := nl.Idempotency; c != nil {
		idemKey, claimID = &c.Key, &c.ClaimID
	}
	if k := nl.Key; k != nil {
		idemKey, bodyHash, ttl, lease = &k.Key, k.BodyHash, k.TTL.Seconds(), k.Lease.Seconds()
	}
	return []any{nl.SiteID, nullString(nl.KeyID), nullString(nl.RequestID), nullInt(nl.ListingRef),
		nl.Type, nl.Priority, nl.Name, nullString(nl.Email), nullString(nl.EmailNorm),
		nullString(nl.Phone), nullString(nl.PhoneE164), nullString(nl.Mobile), nullString(nl.MobileE164),
		nullString(nl.Message), phones, string(nl.Metadata), string(nl.Payload),
		nl.LockKeys, nl.DuplicateWindow.Seconds(), nullInt(nl.AgentID), nullString(nl.AgentEmail),
		idemKey, claimID, rules.ResponseStatus, bodyHash, ttl, lease, livenessClass, attempt, retry}
}

// submitLeadRow is the row submitLeadCall answers.
type submitLeadRow struct {
	outcome        string
	leadID         *int64
	status, reason *string
	duplicate      *bool
	assignedTo     *string
	response       []byte
	responseStatus *int32
}

func (r *submitLeadRow) dest() []any {
	return []any{&r.outcome, &r.leadID, &r.status, &r.duplicate, &r.assignedTo, &r.reason, &r.response, &r.responseStatus}
}

// result is what the row says became of nl.
func (r *submitLeadRow) result(nl NewLead) (LeadOutcome, error) {
	switch r.outcome {
	case "no_site":
		return LeadOutcome{}, ErrSiteGone
	case "claim_lost":
		return LeadOutcome{}, ErrClaimLost
	case "replay":
		if r.responseStatus == nil {
			return LeadOutcome{}, errors.New("store: submit lead: replay without its status")
		}
		return LeadOutcome{Key: IdempotencyReplay, Response: r.response, ResponseStatus: int(*r.responseStatus)}, nil
	case "mismatch":
		return LeadOutcome{Key: IdempotencyMismatch}, nil
	case "in_flight":
		return LeadOutcome{Key: IdempotencyInFlight}, nil
	case "created", "duplicate", "repeat":
	default:
		return LeadOutcome{}, fmt.Errorf("store: submit lead: unknown outcome %q", r.outcome)
	}
	var out LeadOutcome
	if nl.Key != nil {
		out.Key = IdempotencyClaimed
	}
	if r.leadID == nil || r.status == nil || r.duplicate == nil {
		return LeadOutcome{}, fmt.Errorf("store: submit lead: %s without its lead", r.outcome)
	}
	out.LeadID, out.Status, out.Duplicate, out.Repeated = *r.leadID, *r.status, *r.duplicate, r.outcome == "repeat"
	out.AssignedTo = r.assignedTo
	if r.reason != nil {
		out.Reason = *r.reason
	}
	out.Response = r.response
	if out.Response == nil {
		out.Response = rules.Response{LeadID: out.LeadID, Status: out.Status, Duplicate: out.Duplicate,
			AssignedTo: out.AssignedTo}.Encode()
	}
	return out, nil
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
