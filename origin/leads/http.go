package leads

import (
	"context"
	"errors"
	"log/slog"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/listgate/listgate/origin/api"
	"github.com/listgate/listgate/origin/leads/rules"
	"github.com/listgate/listgate/origin/store"
	"github.com/listgate/listgate/pkg/apierror"
	"github.com/listgate/listgate/pkg/apikey"
)

// IdempotencyHeader is the request header that makes a submission
// idempotent (its value: rules.CheckIdempotencyKey).
const IdempotencyHeader = "Idempotency-Key"

// MaxBodyBytes bounds the request body; more is a 413.
const MaxBodyBytes = 64 << 10

// Store is what the handler needs of the database; *store.DB has it.
type Store interface {
	LeadRefFacts(ctx context.Context, siteID string, q store.LeadRefQuery) (rules.RefFacts, error)
	SubmitLead(ctx context.Context, nl store.NewLead) (store.LeadOutcome, error)
	ClaimIdempotencyKey(ctx context.Context, req store.IdempotencyRequest) (store.IdempotencyResult, error)
	IdempotencyAnswer(ctx context.Context, req store.IdempotencyRequest) (store.IdempotencyResult, error)
	ReleaseIdempotencyKey(ctx context.Context, c store.IdempotencyClaim) error
}

var (
	_ Store       = (*store.DB)(nil)
	_ api.Mounter = (*Service)(nil)
)

// Config configures a Service. Zero fields take their defaults.
type Config struct {
	// DB stores leads. Required.
	DB Store
	// Log receives what goes wrong outside a request's error (a claim that
	// could not be released). Nil: slog.Default().
	Log *slog.Logger
	// DuplicateWindow is how far back a submission is compared with earlier
	// leads. Zero or negative: rules.DefaultDuplicateWindow (24 h).
	DuplicateWindow time.Duration
	// Timeout bounds the database work of one submission, which goes on
	// when the client leaves: a lead the client sent in full is stored.
	// Zero or negative: 10 s.
	Timeout time.Duration
	// RetryAfter is the Retry-After of a 503, in seconds. Zero: 2.
	RetryAfter int
}

// Service serves POST /v1/leads. Safe for concurrent use.
type Service struct {
	cfg Config
}

// New returns the service, with defaults filled in.
func New(cfg Config) *Service {
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.DuplicateWindow <= 0 {
		cfg.DuplicateWindow = rules.DefaultDuplicateWindow
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Second
	}
	if cfg.RetryAfter <= 0 {
		cfg.RetryAfter = 2
	}
	return &Service{cfg: cfg}
}

// Mount registers POST /v1/leads.
func (s *Service) Mount(handle func(pattern string, h api.HandlerFunc)) {
	handle("POST /v1/leads", s.submit)
}

// idempotencyLease is how long an in-flight Idempotency-Key claim blocks
// retries (409) before it counts as abandoned: a little beyond
// Config.Timeout, which bounds the work of a live request. A claim whose
// origin is gone is taken over at once when the origin held its liveness
// lock (store.Options.Liveness); one without an owner frees itself after
// the lease, so a client retrying after an outage is not kept waiting long.
// A request that lost its claim either way cannot store its lead, because
// the claim is checked in the lead's transaction.
func (s *Service) idempotencyLease() time.Duration { return s.cfg.Timeout + 5*time.Second }

// submit checks the request in the order of the errors a client would fix
// first: identity (401), scope (403), media type (415), size (413), then
// the body and the Idempotency-Key (422, every problem at once).
func (s *Service) submit(w http.ResponseWriter, r *http.Request) error {
	id, ok := api.IdentityFrom(r.Context())
	if !ok || !api.IsUUID(id.SiteID) || !api.IsUUID(id.KeyID) {
		return apierror.Unauthorized("")
	}
	if !id.Scopes.Has(apikey.LeadsWrite) {
		return apierror.MissingScope("leads:write")
	}
	if err := checkContentType(r.Header.Get("Content-Type")); err != nil {
		return err
	}
	body, err := api.ReadBody(w, r, MaxBodyBytes)
	if err != nil {
		return err
	}
	idemKey, idemProblem, hasIdemKey := idempotencyKey(r.Header)

	// The work below is not cut short by the client leaving.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), s.cfg.Timeout)
	defer cancel()
	req := request{id: id, requestID: api.RequestID(r.Context()), body: body,
		idemKey: idemKey, idemProblem: idemProblem, hasIdemKey: hasIdemKey}
	res, err := s.process(ctx, req)
	if err != nil {
		return s.dbError(err)
	}
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	if res.replayed {
		h.Set("Idempotent-Replayed", "true")
	}
	h.Set("Content-Length", strconv.Itoa(len(res.body)))
	w.WriteHeader(res.status)
	_, _ = w.Write(res.body)
	return nil
}

// dbError turns an error of the database into the API's: a database that
// is unreachable, timed out or shut down is a 503 with Retry-After; an
// *apierror.Error is kept; anything else is a bug (500).
func (s *Service) dbError(err error) error {
	if _, ok := errors.AsType[*apierror.Error](err); ok {
		return err
	}
	if store.IsUnavailable(err) || errors.Is(err, context.Canceled) {
		return apierror.Unavailable(s.cfg.RetryAfter, err)
	}
	return err
}

// checkContentType accepts application/json, with a UTF-8 charset or none.
func checkContentType(ct string) error {
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil || mt != "application/json" {
		return apierror.UnsupportedMediaType("request body must be application/json")
	}
	if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") && !strings.EqualFold(cs, "utf8") {
		return apierror.UnsupportedMediaType("request body must be application/json in UTF-8")
	}
	return nil
}

// idempotencyKey returns the Idempotency-Key header, what is wrong with it
// ("" when nothing), and whether one was sent at all (an empty one counts
// as sent, and is wrong).
func idempotencyKey(h http.Header) (key, problem string, sent bool) {
	v := h.Values(IdempotencyHeader)
	switch len(v) {
	case 0:
		return "", "", false
	case 1:
		return v[0], rules.CheckIdempotencyKey(v[0]), true
	}
	return "", "must be sent once", true
}
