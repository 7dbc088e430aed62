// Package pairinghttp serves the pairing flow (package pairing) over the
// origin's HTTP API, API.md "Pairing a WordPress site":
//
//   - POST /v1/pairing/device (no key) starts a pairing: 200 with the
//     codes; 415, 413 and 422 (the API's envelope) for a request it cannot
//     take; 429 when the client IP started too many.
//   - POST /v1/pairing/token (no key) polls: 200 with the key exactly once,
//     else 400 with an RFC 8628/6749 body {"error", "error_description"}:
//     authorization_pending, slow_down, access_denied, expired_token,
//     invalid_grant (unknown device code), invalid_request (a body it
//     cannot read), unsupported_grant_type. A body over 8 KiB is 413.
//   - DELETE /v1/pairing (the paired key, as the edge vouched for it)
//     revokes the key and disconnects its pairing: 204; 401 without an
//     identity, 403 for a key that pairing did not issue.
//
// Success and poll errors carry Cache-Control: no-store. Failures of the
// server are the API's envelope (500, 503) on every route.
package pairinghttp

import (
	"errors"
	"math"
	"mime"
	"net/http"
	"strings"

	"github.com/listgate/listgate/origin/api"
	"github.com/listgate/listgate/pairing"
	"github.com/listgate/listgate/pkg/apierror"
)

// MaxBodyBytes bounds the body of the start and poll requests, as the edge
// does.
const MaxBodyBytes = 8 << 10

// Config holds what New needs.
type Config struct {
	// Service runs the flow. Required.
	Service *pairing.Service
	// ClientIP names a request's client for the per-IP limit on starts.
	// Nil: api.ClientIP (the address the edge vouched for, else the peer).
	ClientIP func(*http.Request) string
}

// Handler serves the pairing routes. Safe for concurrent use.
type Handler struct {
	svc      *pairing.Service
	clientIP func(*http.Request) string
}

var _ api.Mounter = (*Handler)(nil)

// New returns the handler, or an error when cfg.Service is nil.
func New(cfg Config) (*Handler, error) {
	if cfg.Service == nil {
		return nil, errors.New("pairinghttp: Service is required")
	}
	if cfg.ClientIP == nil {
		cfg.ClientIP = api.ClientIP
	}
	return &Handler{svc: cfg.Service, clientIP: cfg.ClientIP}, nil
}

// Mount registers the three pairing routes.
func (h *Handler) Mount(handle func(pattern string, h api.HandlerFunc)) {
	handle("POST /v1/pairing/device", h.device)
	handle("POST /v1/pairing/token", h.token)
	handle("DELETE /v1/pairing", h.disconnect)
}

// deviceResponse is RFC 8628 §3.2's device authorization response.
type deviceResponse struct {
	DeviceCode              string `json:"device_code"`
	UserCode                string `json:"user_code"`
	VerificationURI         string `json:"verification_uri"`
	VerificationURIComplete string `json:"verification_uri_complete"`
	ExpiresIn               int64  `json:"expires_in"`
	Interval                int64  `json:"interval"`
}

// device is POST /v1/pairing/device. Checks run in the order a client
// fixes them: media type (415), size (413), body (422, every problem at
// once), then the per-IP limit (429).
func (h *Handler) device(w http.ResponseWriter, r *http.Request) error {
	if !isJSON(r.Header.Get("Content-Type")) {
		return apierror.UnsupportedMediaType("request body must be application/json")
	}
	body, err := api.ReadBody(w, r, MaxBodyBytes)
	if err != nil {
		return err
	}
	req, problems := decodeStart(body)
	if problems != nil {
		return apierror.Validation(problems)
	}
	req.ClientIP = h.clientIP(r)
	st, err := h.svc.Start(r.Context(), req)
	if err != nil {
		return apiError(err)
	}
	return writeNoStore(w, http.StatusOK, deviceResponse{DeviceCode: st.DeviceCode, UserCode: st.UserCode,
		VerificationURI: st.VerificationURI, VerificationURIComplete: st.VerificationURIComplete,
		ExpiresIn: int64(math.Ceil(st.ExpiresIn.Seconds())), Interval: int64(math.Ceil(st.Interval.Seconds()))})
}

// tokenResponse is the delivered key.
type tokenResponse struct {
	APIKey  string   `json:"api_key"`
	KeyID   string   `json:"key_id"`
	SiteID  string   `json:"site_id"`
	Scopes  []string `json:"scopes"`
	BaseURL string   `json:"base_url"`
	// BeaconID is the site's public beacon id (views:write only), which
	// the site's pages send with their listing view beacons.
	BeaconID string `json:"beacon_id"`
}

// token is POST /v1/pairing/token.
func (h *Handler) token(w http.ResponseWriter, r *http.Request) error {
	if !isJSON(r.Header.Get("Content-Type")) {
		return writeNoStore(w, http.StatusBadRequest, oauthError{errInvalidRequest, "the body must be application/json"})
	}
	body, err := api.ReadBody(w, r, MaxBodyBytes)
	if err != nil {
		if apierror.CodeOf(err) == apierror.CodePayloadTooLarge {
			return err
		}
		return writeNoStore(w, http.StatusBadRequest, oauthError{errInvalidRequest, "the body could not be read in full"})
	}
	deviceCode, oerr := decodeToken(body)
	if oerr != nil {
		return writeNoStore(w, http.StatusBadRequest, oerr)
	}
	d, err := h.svc.Poll(r.Context(), deviceCode)
	if pe, ok := errors.AsType[pairing.PollError](err); ok {
		return writeNoStore(w, http.StatusBadRequest, oauthError{string(pe), pe.Description()})
	}
	if err != nil {
		return err
	}
	w.Header().Set("Pragma", "no-cache")
	return writeNoStore(w, http.StatusOK, tokenResponse{APIKey: d.APIKey, KeyID: d.KeyID, SiteID: d.SiteID,
		Scopes: d.Scopes, BaseURL: d.BaseURL, BeaconID: d.BeaconID})
}

// disconnect is DELETE /v1/pairing.
func (h *Handler) disconnect(w http.ResponseWriter, r *http.Request) error {
	id, ok := api.IdentityFrom(r.Context())
	if !ok {
		return apierror.Unauthorized("")
	}
	err := h.svc.Disconnect(r.Context(), id.KeyID, id.SiteID)
	if errors.Is(err, pairing.ErrNotPairingKey) {
		return apierror.Forbidden("only a key issued by pairing can disconnect its WordPress site")
	}
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// apiError turns the service's client errors into the API's.
func apiError(err error) error {
	if ve, ok := errors.AsType[*pairing.ValidationError](err); ok {
		return apierror.Validation(ve.Problems)
	}
	if rl, ok := errors.AsType[*pairing.RateLimitError](err); ok {
		e := apierror.RateLimited(int(math.Ceil(rl.RetryAfter.Seconds())))
		e.Err = err
		return e
	}
	return err
}

// isJSON accepts application/json, with a UTF-8 charset or none.
func isJSON(ct string) bool {
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil || mt != "application/json" {
		return false
	}
	cs, ok := params["charset"]
	return !ok || strings.EqualFold(cs, "utf-8") || strings.EqualFold(cs, "utf8")
}

// writeNoStore writes v with status, not to be cached: every answer of
// these routes is for one client only.
func writeNoStore(w http.ResponseWriter, status int, v any) error {
	w.Header().Set("Cache-Control", "no-store")
	return api.WriteJSON(w, status, v)
}
