// Package introspect is the origin's key introspection endpoint, POST
// /internal/v1/keys/introspect: the edge sends the SHA-256 of an API key it
// has not cached and learns whether the key is live, its key and site ids,
// scopes, the site's plan and rate limit, the browser origins the site
// allows (cors_origins, left out when none), and how long it may cache the
// answer. Only the edge may call it (internal token, see api.RequireEdge).
//
// Introspection also records that a key is in use: last_used_at is written at
// most once a minute per key, by a guarded UPDATE in the same statement as
// the look-up.
//
// The package also serves what the edge needs of a site without a key: GET
// /internal/v1/sites/{site_id}/cors, the browser origins the site allows
// (internalapi.SiteCORS), from which the edge answers CORS preflights.
package introspect

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	json "github.com/goccy/go-json"

	"github.com/listgate/listgate/origin/api"
	"github.com/listgate/listgate/origin/store"
	"github.com/listgate/listgate/pkg/apierror"
	"github.com/listgate/listgate/pkg/apikey"
	"github.com/listgate/listgate/pkg/internalapi"
	"github.com/listgate/listgate/pkg/model"
)

// Path is the route the service mounts.
const Path = internalapi.PathIntrospect

// maxBody bounds the request body; a valid one is under 100 bytes.
const maxBody = 4 << 10

// Config holds what New needs.
type Config struct {
	DB *store.DB
	// TTL is how long the edge may cache an answer (ttl_seconds), positive
	// or negative. Zero: 30 s. Revocations reach edges faster through the
	// event stream; the TTL bounds staleness when the stream is down.
	TTL time.Duration
}

// Service answers introspection requests. Safe for concurrent use.
type Service struct {
	db  *store.DB
	ttl int
}

var _ api.Mounter = (*Service)(nil)

// New returns the introspection service.
func New(cfg Config) *Service {
	ttl := cfg.TTL
	if ttl <= 0 {
		ttl = 30 * time.Second
	}
	return &Service{db: cfg.DB, ttl: max(1, int(ttl/time.Second))}
}

// Mount registers POST /internal/v1/keys/introspect and GET
// /internal/v1/sites/{site_id}/cors.
func (s *Service) Mount(handle func(pattern string, h api.HandlerFunc)) {
	handle("POST "+Path, s.introspect)
	handle("GET "+SiteCORSPattern, s.siteCORS)
}

// introspect answers 200 with internalapi.Introspection for a well-formed request
// from the edge: active for a live key, {"active": false} for an unknown or
// revoked one. 401 without the internal token, 422 for a malformed body.
func (s *Service) introspect(w http.ResponseWriter, r *http.Request) error {
	if err := api.RequireEdge(r); err != nil {
		return err
	}
	hash, err := decodeRequest(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		return err
	}
	k, err := s.db.KeyForEdge(r.Context(), hash)
	switch {
	case store.IsNotFound(err):
		return writeAnswer(w, internalapi.Introspection{Active: false})
	case err != nil:
		return fmt.Errorf("introspect: %w", err)
	case k.Revoked:
		return writeAnswer(w, internalapi.Introspection{Active: false})
	}
	out := internalapi.Introspection{KeyID: k.ID, SiteID: k.SiteID, CORSOrigins: k.CORSOrigins, Timezone: k.Timezone}
	scopes, plan := k.ScopeNames, k.Plan
	sc, err := apikey.ParseScopeList(scopes)
	if err != nil {
		return fmt.Errorf("introspect: key %s: %w", out.KeyID, err)
	}
	p, err := model.ParsePlan(plan)
	if err != nil {
		return fmt.Errorf("introspect: site %s: %w", out.SiteID, err)
	}
	limit := p.Limit()
	out.Active, out.Scopes, out.Plan, out.Limit, out.TTLSeconds = true, sc.Names(), p, &limit, s.ttl
	return writeAnswer(w, out)
}

// decodeRequest reads {"key_hash": "<64 hex>"} strictly: one JSON object,
// no other field, nothing after it.
func decodeRequest(body io.Reader) ([32]byte, error) {
	var hash [32]byte
	var req struct {
		KeyHash *string `json:"key_hash"`
	}
	if err := api.DecodeStrict(body, &req); err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return hash, err
		}
		if errors.Is(err, api.ErrTrailingData) {
			return hash, apierror.InvalidField("body", "unexpected data after the JSON object")
		}
		if te, ok := errors.AsType[*json.UnmarshalTypeError](err); ok && te.Field == "key_hash" {
			return hash, apierror.InvalidField("key_hash", "must be a string")
		}
		return hash, apierror.InvalidField("body", "malformed JSON, or a field other than key_hash")
	}
	if req.KeyHash == nil {
		return hash, apierror.InvalidField("key_hash", "required")
	}
	if len(*req.KeyHash) != 2*len(hash) {
		return hash, apierror.InvalidField("key_hash", "must be 64 hexadecimal characters (the SHA-256 of the key)")
	}
	if _, err := hex.Decode(hash[:], []byte(*req.KeyHash)); err != nil {
		return hash, apierror.InvalidField("key_hash", "must be 64 hexadecimal characters (the SHA-256 of the key)")
	}
	return hash, nil
}

// writeAnswer writes a 200 that no cache between origin and edge may keep.
func writeAnswer(w http.ResponseWriter, v any) error {
	w.Header().Set("Cache-Control", "no-store")
	return api.WriteJSON(w, http.StatusOK, v)
}
