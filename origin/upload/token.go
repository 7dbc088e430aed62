package upload

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"errors"
	"fmt"
	"math"
	"mime"
	"net/http"
	"time"

	"github.com/listgate/listgate/origin/api"
	"github.com/listgate/listgate/origin/store"
	"github.com/listgate/listgate/pkg/apierror"
)

// maxTokenRequest bounds the token request body.
const maxTokenRequest = 8 << 10

// purgeEvery is how often (at most) a process deletes expired tokens, and
// purgeBatch how many at a time.
const (
	purgeEvery = time.Minute
	purgeBatch = 1000
)

// tokenResponse is a successful token response (RFC 6749 §5.1).
type tokenResponse struct {
	AccessToken string `json:"access_token"`
	TokenType   string `json:"token_type"`
	ExpiresIn   int64  `json:"expires_in"`
	Scope       string `json:"scope"`
}

// token is POST /v1/oauth/token: the client credentials grant. Its errors
// are RFC 6749 §5.2 responses, except 405, 429 and the server's own
// failures, which are the API's envelope.
func (s *Service) token(w http.ResponseWriter, r *http.Request) error {
	ip := s.cfg.ClientIP(r)
	if ok, wait := s.limiter.Allow(ip, s.cfg.Now()); !ok {
		return apierror.RateLimited(int(math.Ceil(wait.Seconds())))
	}
	req, oerr := s.readTokenRequest(w, r)
	if oerr != nil {
		return s.oauthFail(w, r, ip, oerr)
	}
	client, err := s.authenticate(r.Context(), req.clientID, req.clientSecret)
	if err != nil {
		var oe *oauthError
		if errors.As(err, &oe) {
			return s.oauthFail(w, r, ip, oe)
		}
		return err
	}
	if req.grantType != "client_credentials" {
		return s.oauthFail(w, r, ip, &oauthError{errUnsupportedGrantType, "only client_credentials is supported"})
	}
	if req.scope != "" && req.scope != ScopeFeedsWrite {
		return s.oauthFail(w, r, ip, &oauthError{errInvalidScope, "the only scope is feeds:write"})
	}

	tok, err := newCredential(rand.Reader, TokenPrefix, TokenLen-len(TokenPrefix))
	if err != nil {
		return err
	}
	now := s.cfg.Now()
	rec := store.OAuthToken{Hash: hashSecret(tok), ClientID: client.ClientID, Scope: ScopeFeedsWrite,
		ExpiresAt: now.Add(s.cfg.TokenTTL)}
	if err := s.db.CreateOAuthToken(r.Context(), &rec); err != nil {
		if apierror.CodeOf(err) == apierror.CodeNotFound { // revoked a moment ago
			return s.oauthFail(w, r, ip, &oauthError{errInvalidClient, "client authentication failed"})
		}
		return err
	}
	s.purgeTokens(r.Context())
	s.log.InfoContext(r.Context(), "access token issued", "client_id", client.ClientID, "site_id", client.SiteID,
		"request_id", api.RequestID(r.Context()))
	return writeTokenJSON(w, http.StatusOK, tokenResponse{AccessToken: tok, TokenType: "Bearer",
		ExpiresIn: int64(s.cfg.TokenTTL / time.Second), Scope: ScopeFeedsWrite})
}

// readTokenRequest checks the request's form and parses it.
func (s *Service) readTokenRequest(w http.ResponseWriter, r *http.Request) (tokenRequest, *oauthError) {
	if r.URL.RawQuery != "" {
		return tokenRequest{}, &oauthError{errInvalidRequest, "parameters must be sent in the request body"}
	}
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/x-www-form-urlencoded" {
		return tokenRequest{}, &oauthError{errInvalidRequest, "the body must be application/x-www-form-urlencoded"}
	}
	body, err := api.ReadBody(w, r, maxTokenRequest)
	if err != nil {
		return tokenRequest{}, &oauthError{errInvalidRequest, fmt.Sprintf("request body unreadable or over %d bytes", maxTokenRequest)}
	}
	return parseTokenRequest(r.Header.Values("Authorization"), string(body))
}

// dummyHash is compared against when a client id is unknown, so that the
// answer takes as long as for a known one.
var dummyHash = hashSecret("lgs_0000000000000000000000000000000000000000")

// authenticate returns the client whose id and secret these are, or an
// invalid_client *oauthError for a malformed, unknown or revoked client or a
// wrong secret; other errors are the database's.
func (s *Service) authenticate(ctx context.Context, id, secret string) (store.OAuthClient, error) {
	fail := &oauthError{errInvalidClient, "client authentication failed"}
	given := hashSecret(secret)
	if !wellFormed(id, ClientIDPrefix, ClientIDLen) {
		subtle.ConstantTimeCompare(given[:], dummyHash[:])
		return store.OAuthClient{}, fail
	}
	client, want, err := s.db.OAuthClientByID(ctx, id)
	known := err == nil
	if !known {
		if apierror.CodeOf(err) != apierror.CodeNotFound {
			return store.OAuthClient{}, err
		}
		want = dummyHash
	}
	if subtle.ConstantTimeCompare(given[:], want[:]) != 1 || !known || client.RevokedAt != nil {
		return store.OAuthClient{}, fail
	}
	return client, nil
}

// oauthFail writes e as the token endpoint's error response and counts a
// failed authentication against the client's IP.
func (s *Service) oauthFail(w http.ResponseWriter, r *http.Request, ip string, e *oauthError) error {
	status := http.StatusBadRequest
	if e.code == errInvalidClient {
		status = http.StatusUnauthorized
		w.Header().Set("WWW-Authenticate", `Basic realm="listgate"`)
		s.limiter.Add(ip, s.cfg.Now())
	}
	return writeTokenJSON(w, status, map[string]string{"error": e.code, "error_description": e.description})
}

// writeTokenJSON writes a token endpoint response, which must not be cached
// (RFC 6749 §5.1).
func writeTokenJSON(w http.ResponseWriter, status int, v any) error {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Pragma", "no-cache")
	return api.WriteJSON(w, status, v)
}

// purgeTokens deletes expired tokens when it was not done in the last
// minute. Failures are logged: tokens are checked for expiry anyway.
func (s *Service) purgeTokens(ctx context.Context) {
	now := s.cfg.Now()
	last := s.lastPurge.Load()
	if now.UnixNano()-last < int64(purgeEvery) || !s.lastPurge.CompareAndSwap(last, now.UnixNano()) {
		return
	}
	n, err := s.db.DeleteExpiredOAuthTokens(ctx, now, purgeBatch)
	if err != nil {
		s.log.WarnContext(ctx, "purge expired tokens", "err", err)
		return
	}
	if n > 0 {
		s.log.DebugContext(ctx, "purged expired tokens", "count", n)
	}
}
