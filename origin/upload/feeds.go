package upload

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	json "github.com/goccy/go-json"

	"github.com/listgate/listgate/origin/api"
	"github.com/listgate/listgate/origin/ingest"
	"github.com/listgate/listgate/origin/store"
	"github.com/listgate/listgate/pkg/apierror"
)

// bearer authenticates a request by its access token. Every failure is
// UNAUTHORIZED with WWW-Authenticate: Bearer error="invalid_token".
func (s *Service) bearer(w http.ResponseWriter, r *http.Request) (store.OAuthToken, error) {
	unauthorized := func(msg string) error {
		w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
		return apierror.Unauthorized(msg)
	}
	vals := r.Header.Values("Authorization")
	if len(vals) != 1 {
		return store.OAuthToken{}, unauthorized("an access token is required (Authorization: Bearer <token>)")
	}
	scheme, tok, _ := strings.Cut(vals[0], " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return store.OAuthToken{}, unauthorized("an access token is required (Authorization: Bearer <token>)")
	}
	tok = strings.TrimSpace(tok)
	if !wellFormed(tok, TokenPrefix, TokenLen) {
		return store.OAuthToken{}, unauthorized("invalid or expired access token")
	}
	t, err := s.db.OAuthTokenByHash(r.Context(), hashSecret(tok), s.cfg.Now())
	if apierror.CodeOf(err) == apierror.CodeNotFound {
		return store.OAuthToken{}, unauthorized("invalid or expired access token")
	}
	if err != nil {
		return store.OAuthToken{}, err
	}
	if t.Scope != ScopeFeedsWrite {
		return store.OAuthToken{}, apierror.MissingScope(ScopeFeedsWrite)
	}
	return t, nil
}

// feedQueued is the 202 answer to an upload.
type feedQueued struct {
	FeedID string `json:"feed_id"`
	Status string `json:"status"`
}

// uploadFeed is POST /v1/feeds: it stores the feed, redacted and compressed,
// as a queued job and wakes a worker.
func (s *Service) uploadFeed(w http.ResponseWriter, r *http.Request) error {
	tok, err := s.bearer(w, r)
	if err != nil {
		return err
	}
	if err := checkFeedContentType(r.Header.Get("Content-Type")); err != nil {
		return err
	}
	gzipped, err := feedEncoding(r.Header.Values("Content-Encoding"))
	if err != nil {
		return err
	}
	limit := s.cfg.MaxFeedBytes
	if r.ContentLength > limit {
		return apierror.PayloadTooLarge(limit)
	}
	// A large feed may take longer to send than the server's read timeout.
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(s.cfg.BodyReadTimeout))
	body, size, err := readFeed(http.MaxBytesReader(w, r.Body, limit), gzipped, limit)
	if err != nil {
		return err
	}
	job, err := s.db.InsertFeedJob(r.Context(), store.NewFeedJob{SiteID: tok.SiteID, ClientID: tok.ClientID,
		Body: body, BodySize: size})
	if err != nil {
		return err
	}
	s.wakeWorkers()
	s.log.InfoContext(r.Context(), "feed queued", "feed_id", job.ID, "site_id", tok.SiteID,
		"client_id", tok.ClientID, "bytes", size, "stored_bytes", len(body), "request_id", api.RequestID(r.Context()))
	w.Header().Set("Location", "/v1/feeds/"+job.ID)
	return api.WriteJSON(w, http.StatusAccepted, feedQueued{FeedID: job.ID, Status: store.FeedQueued})
}

// feedStatus is the answer to GET /v1/feeds/{feed_id}.
type feedStatus struct {
	FeedID     string                `json:"feed_id"`
	Status     string                `json:"status"`
	Counts     ingest.Counts         `json:"counts"`
	Errors     []ingest.ListingError `json:"errors"`
	CreatedAt  time.Time             `json:"created_at"`
	StartedAt  *time.Time            `json:"started_at"`
	FinishedAt *time.Time            `json:"finished_at"`
}

// getFeed is GET /v1/feeds/{feed_id}: a feed of the token's site. Another
// site's feed, an unknown or malformed id are all NOT_FOUND.
func (s *Service) getFeed(w http.ResponseWriter, r *http.Request) error {
	tok, err := s.bearer(w, r)
	if err != nil {
		return err
	}
	job, err := s.db.GetFeedJob(r.Context(), tok.SiteID, r.PathValue("feed_id"))
	if err != nil {
		return err
	}
	out := feedStatus{FeedID: job.ID, Status: job.Status, Errors: []ingest.ListingError{},
		CreatedAt: job.CreatedAt, StartedAt: job.StartedAt, FinishedAt: job.FinishedAt}
	if err := json.Unmarshal(job.Counts, &out.Counts); err != nil {
		return fmt.Errorf("upload: feed %s counts: %w", job.ID, err)
	}
	if err := json.Unmarshal(job.Errors, &out.Errors); err != nil {
		return fmt.Errorf("upload: feed %s errors: %w", job.ID, err)
	}
	if out.Errors == nil {
		out.Errors = []ingest.ListingError{}
	}
	w.Header().Set("Cache-Control", "no-store")
	return api.WriteJSON(w, http.StatusOK, out)
}
