package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// claimIdempotencyKey claims a key ($1-$3) for a body ($4), for a TTL ($5)
// and a lease ($6) in seconds, owned by the liveness lock ($7, $8) or
// nobody ($8 NULL). It returns the new claim's id, or no row when the key
// is held.
//
// The owner is recorded only if its lock is held by some session right
// now, which pg_try_advisory_xact_lock failing shows; a process whose
// liveness connection has just died, before it noticed, records none. A
// row in flight is taken over when its owner's lock is free, which
// pg_try_advisory_xact_lock succeeding shows. Either try that succeeds
// holds the lock only until this statement's transaction commits, a moment
// later: it never outlives the statement (the claim always runs on a pool
// connection, in a transaction of its own), and it cannot succeed while an
// owner is alive, since a live owner holds its lock on a connection of its
// own, never one of the pool's (advisory locks are re-entrant within a
// session). The CASE keeps the try to rows in flight with an owner.
const claimIdempotencyKey = `INSERT INTO idempotency_keys AS k
		(site_id, key_id, idem_key, body_hash, state, claim_id, owner, created_at, expires_at)
	VALUES ($1, $2, $3, $4, 'in_flight', gen_random_uuid(),
		CASE WHEN NOT pg_try_advisory_xact_lock($7::int4, $8::int4) THEN $8::int4 END,
		now(), now() + make_interval(secs => $5))
	ON CONFLICT (site_id, key_id, idem_key) DO UPDATE SET
		body_hash = EXCLUDED.body_hash, state = 'in_flight', claim_id = EXCLUDED.claim_id, owner = EXCLUDED.owner,
		response_code = NULL, response_body = NULL,
		created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at
	WHERE k.expires_at <= now()
	   OR (k.state = 'in_flight' AND k.created_at <= now() - make_interval(secs => $6))
	   OR CASE WHEN k.state = 'in_flight' AND k.owner IS NOT NULL
	           THEN pg_try_advisory_xact_lock($7::int4, k.owner) ELSE false END
	RETURNING claim_id::text`

// IdempotencyRequest is a request carrying an Idempotency-Key, per site and
// API key.
type IdempotencyRequest struct {
	SiteID, KeyID, Key string
	// BodyHash fingerprints the request body.
	BodyHash []byte
	// TTL is how long the first response is kept and replayed.
	TTL time.Duration
	// Lease is how long a claim may stay in flight before it counts as
	// abandoned (its process died) and another request may take it over.
	// It must exceed the longest time a request holds a claim.
	Lease time.Duration
}

// IdempotencyClaim is a claim held on a key: the right to do the work and
// store its response.
type IdempotencyClaim struct {
	SiteID, KeyID, Key string
	ClaimID            string
}

// IdempotencyState is what ClaimIdempotencyKey found.
type IdempotencyState int

// The outcomes of ClaimIdempotencyKey.
const (
	// IdempotencyClaimed: the key was new, expired or abandoned, and is now
	// claimed by this request.
	IdempotencyClaimed IdempotencyState = iota + 1
	// IdempotencyReplay: the key has a stored response for the same body.
	IdempotencyReplay
	// IdempotencyInFlight: another request with the key and the same body
	// is being processed.
	IdempotencyInFlight
	// IdempotencyMismatch: the key was used with a different body.
	IdempotencyMismatch
)

// IdempotencyResult is the outcome of ClaimIdempotencyKey.
type IdempotencyResult struct {
	State IdempotencyState
	// Claim is set for IdempotencyClaimed.
	Claim *IdempotencyClaim
	// Status and Body are the stored response, for IdempotencyReplay.
	Status int
	Body   []byte
}

// ClaimIdempotencyKey claims a key, in a statement of its own that commits
// at once, or reports why it cannot: a stored response to replay, a request
// in flight, or a different body. Expired rows, claims in flight for longer
// than the lease, and claims in flight whose owner is gone are replaced. Of
// two requests racing for a new key, exactly one claims it.
//
// A claim's owner is the DB's liveness lock (Options.Liveness), recorded
// only while that lock is held: a claim whose owner's lock is free (the
// process exited, was killed or lost its connection) is taken over at once,
// a claim without an owner only after the lease. A claim taken over cannot
// be completed by its first request (SubmitLead fails with ErrClaimLost);
// one whose submission is being stored cannot be taken over: the request
// trying waits for the submission, then replays its answer.
//
// The claim commits before the work it stands for, so a process that dies
// in between leaves it in flight; and a claim the process sent just before
// it was killed may run after its liveness lock was freed, recording no
// owner, so that it holds the key for the whole lease (the rolling-deploy
// drill met this). SubmitLead with NewLead.Key claims a key in the lead's
// own transaction instead, which leaves nothing in flight.
func (db *DB) ClaimIdempotencyKey(ctx context.Context, req IdempotencyRequest) (IdempotencyResult, error) {
	for range 3 {
		var claimID string
		err := db.Pool.QueryRow(ctx, claimIdempotencyKey,
			req.SiteID, req.KeyID, req.Key, req.BodyHash, req.TTL.Seconds(), req.Lease.Seconds(),
			livenessClass, nullInt32(db.live.owner())).Scan(&claimID)
		if err == nil {
			return IdempotencyResult{State: IdempotencyClaimed, Claim: &IdempotencyClaim{
				SiteID: req.SiteID, KeyID: req.KeyID, Key: req.Key, ClaimID: claimID}}, nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return IdempotencyResult{}, fmt.Errorf("store: claim idempotency key: %w", err)
		}
		// A live row holds the key: say which kind.
		res, err := db.IdempotencyAnswer(ctx, req)
		if err != nil || res.State != 0 {
			return res, err
		}
		// Released or expired in between: try again.
	}
	// The key changed hands three times within this call: as good as busy.
	return IdempotencyResult{State: IdempotencyInFlight}, nil
}

// IdempotencyAnswer says what holds a key now, without claiming it:
// IdempotencyReplay with the stored response (same body),
// IdempotencyMismatch (another body), IdempotencyInFlight (a claim in
// flight), or a zero State when nothing live holds the key.
func (db *DB) IdempotencyAnswer(ctx context.Context, req IdempotencyRequest) (IdempotencyResult, error) {
	var hash []byte
	var state string
	var status *int32
	var body []byte
	err := db.Pool.QueryRow(ctx, `SELECT body_hash, state, response_code, response_body FROM idempotency_keys
		WHERE site_id = $1 AND key_id = $2 AND idem_key = $3 AND expires_at > now()`,
		req.SiteID, req.KeyID, req.Key).Scan(&hash, &state, &status, &body)
	if errors.Is(err, pgx.ErrNoRows) {
		return IdempotencyResult{}, nil
	}
	if err != nil {
		return IdempotencyResult{}, fmt.Errorf("store: read idempotency key: %w", err)
	}
	switch {
	case !bytes.Equal(hash, req.BodyHash):
		return IdempotencyResult{State: IdempotencyMismatch}, nil
	case state == "done" && status != nil:
		return IdempotencyResult{State: IdempotencyReplay, Status: int(*status), Body: body}, nil
	default:
		return IdempotencyResult{State: IdempotencyInFlight}, nil
	}
}

// ReleaseIdempotencyKey gives up a claim whose work failed, so that a retry
// can go ahead. Releasing a claim that was completed or taken over does
// nothing.
func (db *DB) ReleaseIdempotencyKey(ctx context.Context, c IdempotencyClaim) error {
	_, err := db.Pool.Exec(ctx, `DELETE FROM idempotency_keys
		WHERE site_id = $1 AND key_id = $2 AND idem_key = $3 AND claim_id = $4 AND state = 'in_flight'`,
		c.SiteID, c.KeyID, c.Key, c.ClaimID)
	if err != nil {
		return fmt.Errorf("store: release idempotency key: %w", err)
	}
	return nil
}
