package leads

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/listgate/listgate/origin/api"
	"github.com/listgate/listgate/origin/leads/rules"
	"github.com/listgate/listgate/origin/store"
	"github.com/listgate/listgate/pkg/apierror"
	"github.com/listgate/listgate/pkg/promtext"
)

var (
	leadsCreated    = metrics.NewCounter(`listgate_origin_leads_total{result="created"}`)
	leadsDuplicate  = metrics.NewCounter(`listgate_origin_leads_total{result="duplicate"}`)
	leadsReplayed   = metrics.NewCounter(`listgate_origin_leads_total{result="replayed"}`)
	errInFlight     = apierror.Conflict("a request with this Idempotency-Key is still in progress; retry later")
	errOtherBody    = apierror.InvalidField(IdempotencyHeader, "was used with a different request body")
	errSiteNotFound = apierror.Unauthorized("")
)

// releaseTimeout bounds giving up a claim after the request's work failed.
const releaseTimeout = 5 * time.Second

// request is what process needs of an HTTP request.
type request struct {
	id                   api.Identity
	requestID            string
	body                 []byte
	idemKey, idemProblem string
	hasIdemKey           bool
}

// result is the response to write.
type result struct {
	status   int
	body     []byte
	replayed bool
}

// process validates, resolves the references and stores the submission,
// claiming its Idempotency-Key in the lead's transaction. Its errors are
// *apierror.Error for the client's mistakes and store errors otherwise.
func (s *Service) process(ctx context.Context, req request) (result, error) {
	lead, problems := rules.Decode(req.body)
	if req.idemProblem != "" {
		if problems == nil {
			problems = rules.Problems{}
		}
		problems.Add(IdempotencyHeader, req.idemProblem)
	}
	if len(problems) > 0 {
		s.addRefProblems(ctx, req.id.SiteID, &lead, problems)
		return result{}, apierror.Validation(problems)
	}
	if !req.hasIdemKey {
		return s.save(ctx, req, &lead, nil, nil)
	}
	key := store.IdempotencyRequest{SiteID: req.id.SiteID, KeyID: req.id.KeyID,
		Key: req.idemKey, BodyHash: rules.BodyHash(req.body), TTL: rules.IdempotencyTTL, Lease: s.idempotencyLease()}
	res, err := s.save(ctx, req, &lead, &key, nil)
	if !errors.Is(err, errKeyHeld) {
		return res, err
	}
	// A request that claimed the key on its own (ClaimIdempotencyKey, as
	// origins of earlier versions do) holds it in flight: wait for it, or
	// take it over once its lease is over or its origin gone, as such
	// requests do.
	return s.processClaimed(ctx, req, &lead, key)
}

// errKeyHeld is save's error for a key claimed in flight by a live
// request of its own.
var errKeyHeld = errors.New("leads: Idempotency-Key held in flight")

// processClaimed claims the key in a statement of its own, waiting out a
// claim in flight for a moment, then stores the submission completing the
// claim, and gives the claim up when that fails.
func (s *Service) processClaimed(ctx context.Context, req request, lead *rules.Lead, key store.IdempotencyRequest) (result, error) {
	res, err := s.claim(ctx, key)
	if err != nil {
		return result{}, err
	}
	switch res.State {
	case store.IdempotencyReplay:
		leadsReplayed.Inc()
		return result{status: res.Status, body: res.Body, replayed: true}, nil
	case store.IdempotencyInFlight:
		return result{}, errInFlight
	case store.IdempotencyMismatch:
		return result{}, errOtherBody
	}
	out, err := s.save(ctx, req, lead, nil, res.Claim)
	if err != nil && !errors.Is(err, store.ErrClaimLost) {
		// Nothing was stored (or, if a lost COMMIT went through, the claim
		// is done and this does nothing): let a retry go ahead.
		s.release(ctx, *res.Claim)
	}
	return out, err
}

// save resolves the lead's references, if it has any, and stores it, with
// key claimed in the same transaction or completing claim (at most one of
// them). A lead without references is stored in one round trip: the store
// checks that the site exists, and claims the key, as it stores it. When
// the references fail, a key's stored answer comes first.
func (s *Service) save(ctx context.Context, req request, lead *rules.Lead, key *store.IdempotencyRequest,
	claim *store.IdempotencyClaim) (result, error) {
	var refs rules.Refs
	if hasRefs(lead) {
		facts, err := s.cfg.DB.LeadRefFacts(ctx, req.id.SiteID, refQuery(lead))
		if err != nil {
			return result{}, err
		}
		if !facts.SiteExists {
			return result{}, errSiteNotFound
		}
		var problems rules.Problems
		if refs, problems = rules.ResolveRefs(lead, facts); len(problems) > 0 {
			if key != nil {
				// A retry of a request that was stored replays its answer,
				// whatever became of the listing or agent since.
				if res, err := s.storedAnswer(ctx, *key); err != nil || res.body != nil {
					return res, err
				}
			}
			return result{}, apierror.Validation(problems)
		}
	}
	nl := s.newLead(req, lead, refs, claim)
	nl.Key = key
	out, err := s.cfg.DB.SubmitLead(ctx, nl)
	switch {
	case errors.Is(err, store.ErrClaimLost):
		return result{}, fmt.Errorf("%w (%w)", errInFlight, err) // the claim is someone else's now
	case errors.Is(err, store.ErrSiteGone):
		return result{}, errSiteNotFound
	case err != nil:
		return result{}, err
	}
	switch out.Key {
	case store.IdempotencyReplay:
		leadsReplayed.Inc()
		return result{status: out.ResponseStatus, body: out.Response, replayed: true}, nil
	case store.IdempotencyMismatch:
		return result{}, errOtherBody
	case store.IdempotencyInFlight:
		return result{}, errKeyHeld
	}
	if out.Duplicate {
		leadsDuplicate.Inc()
	} else {
		leadsCreated.Inc()
	}
	return result{status: rules.ResponseStatus, body: out.Response}, nil
}

// storedAnswer is the answer a key holds: its stored response (replayed),
// errOtherBody for another body, or none (a nil body).
func (s *Service) storedAnswer(ctx context.Context, key store.IdempotencyRequest) (result, error) {
	res, err := s.cfg.DB.IdempotencyAnswer(ctx, key)
	switch {
	case err != nil:
		return result{}, err
	case res.State == store.IdempotencyReplay:
		leadsReplayed.Inc()
		return result{status: res.Status, body: res.Body, replayed: true}, nil
	case res.State == store.IdempotencyMismatch:
		return result{}, errOtherBody
	}
	return result{}, nil
}

// hasRefs reports whether the lead names a listing or an agent, which the
// store must look up before the lead can be stored.
func hasRefs(l *rules.Lead) bool {
	return l.ListingRef != 0 || l.ListingID != "" || l.AgentEmail != ""
}

// addRefProblems adds the problems of the lead's well-formed references to
// a request that is already invalid, so the client learns them all at
// once. When the database cannot answer, the problems found so far stand.
func (s *Service) addRefProblems(ctx context.Context, site string, lead *rules.Lead, problems rules.Problems) {
	if !hasRefs(lead) {
		return
	}
	facts, err := s.cfg.DB.LeadRefFacts(ctx, site, refQuery(lead))
	if err != nil {
		return
	}
	_, more := rules.ResolveRefs(lead, facts)
	problems.Merge(more)
}

// release gives up a claim whose work failed, on a context of its own: the
// request's may be what ran out.
func (s *Service) release(ctx context.Context, c store.IdempotencyClaim) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
	defer cancel()
	if err := s.cfg.DB.ReleaseIdempotencyKey(rctx, c); err != nil {
		s.cfg.Log.WarnContext(ctx, "idempotency key not released; it frees itself after the lease",
			"err", err, "site_id", c.SiteID, "key_id", c.KeyID, "lease", s.idempotencyLease().String())
	}
}

// newLead is the store's form of a submission.
func (s *Service) newLead(req request, l *rules.Lead, refs rules.Refs, claim *store.IdempotencyClaim) store.NewLead {
	return store.NewLead{
		SiteID: req.id.SiteID, KeyID: req.id.KeyID, RequestID: req.requestID,
		ListingRef: refs.ListingRef, Type: string(l.Type), Priority: string(l.Priority), Name: l.Name,
		Email: l.Email, EmailNorm: l.EmailNorm, Phone: l.Phone, PhoneE164: l.PhoneE164,
		Mobile: l.Mobile, MobileE164: l.MobileE164, Message: l.Message, Phones: l.Phones(),
		Metadata: l.Metadata, Payload: l.Payload,
		LockKeys:        rules.LockKeys(req.id.SiteID, refs.ListingRef, l),
		DuplicateWindow: s.cfg.DuplicateWindow,
		AgentID:         refs.AgentID, AgentEmail: refs.AgentEmail,
		Idempotency: claim,
	}
}

func refQuery(l *rules.Lead) store.LeadRefQuery {
	q := store.LeadRefQuery{ListingRef: l.ListingRef, ListingID: l.ListingID, AgentEmail: l.AgentEmail}
	if agency, unique, ok := l.ListingIDParts(); ok {
		q.IDAgency, q.IDUnique = agency, unique
	}
	return q
}

// inFlightWaits are the pauses before claiming a key again that another
// request holds: a lead takes milliseconds, so a retry that arrives while
// the first request is still being stored (a client that timed out, an
// edge that sent the request again to another origin when the first
// origin died and its claim is being released) gets the stored answer
// instead of 409. About 0.8 s in all.
var inFlightWaits = []time.Duration{25 * time.Millisecond, 50 * time.Millisecond, 100 * time.Millisecond,
	200 * time.Millisecond, 400 * time.Millisecond}

// claim claims the key, waiting out a claim in flight for a moment.
func (s *Service) claim(ctx context.Context, req store.IdempotencyRequest) (store.IdempotencyResult, error) {
	for i := 0; ; i++ {
		res, err := s.cfg.DB.ClaimIdempotencyKey(ctx, req)
		if err != nil || res.State != store.IdempotencyInFlight || i == len(inFlightWaits) {
			return res, err
		}
		t := time.NewTimer(inFlightWaits[i])
		select {
		case <-ctx.Done():
			t.Stop()
			return res, nil
		case <-t.C:
		}
	}
}

func init() {
	promtext.Describe("listgate_origin_leads_total",
		"Lead submissions answered, by result: created (a new lead), duplicate (attached to an earlier lead), replayed (an Idempotency-Key's stored answer).")
}
