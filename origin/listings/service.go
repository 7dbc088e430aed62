// Package listings is the origin's read API: listings (list, search,
// featured, single), fields, media, agents and the stats summary of a site,
// as the edge forwards them. Every response applies the feed's privacy
// rules, carries a strong ETag and a Cache-Control chosen per route, and
// answers If-None-Match with 304.
package listings

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	json "github.com/goccy/go-json"

	"github.com/listgate/listgate/origin/api"
	"github.com/listgate/listgate/origin/store"
	"github.com/listgate/listgate/pkg/apierror"
	"github.com/listgate/listgate/pkg/apikey"
)

// CacheControl holds the Cache-Control value of each kind of response. The
// edge's response cache takes its freshness from them.
type CacheControl struct {
	// Listings covers listings, search, featured, single listings, fields,
	// media and agents. Default "private, max-age=60,
	// stale-while-revalidate=300, stale-if-error=86400".
	Listings string
	// Stats covers the stats summary and the listing performance routes
	// (views, visitors, leads). Default "private, max-age=30,
	// stale-while-revalidate=60, stale-if-error=3600".
	Stats string
}

// DefaultCacheControl returns the defaults documented on CacheControl.
func DefaultCacheControl() CacheControl {
	return CacheControl{
		Listings: "private, max-age=60, stale-while-revalidate=300, stale-if-error=86400",
		Stats:    "private, max-age=30, stale-while-revalidate=60, stale-if-error=3600",
	}
}

// Config holds what New needs.
type Config struct {
	DB *store.DB
	// CacheControl empty fields take the defaults.
	CacheControl CacheControl
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Service serves the read API. Safe for concurrent use.
type Service struct {
	db    *store.DB
	cc    CacheControl
	now   func() time.Time
	zones sync.Map // site id → *time.Location
}

// New returns the read API service.
func New(cfg Config) *Service {
	s := &Service{db: cfg.DB, cc: cfg.CacheControl, now: cfg.Now}
	def := DefaultCacheControl()
	if s.cc.Listings == "" {
		s.cc.Listings = def.Listings
	}
	if s.cc.Stats == "" {
		s.cc.Stats = def.Stats
	}
	if s.now == nil {
		s.now = time.Now
	}
	return s
}

var _ api.Mounter = (*Service)(nil)

// Mount registers the read routes of API.md.
func (s *Service) Mount(handle func(string, api.HandlerFunc)) {
	handle("GET /v1/sites/{site}/listings", s.authed(apikey.ListingsRead, s.list))
	handle("GET /v1/sites/{site}/listings/search", s.authed(apikey.ListingsRead, s.search))
	handle("GET /v1/sites/{site}/listings/featured", s.authed(apikey.ListingsRead, s.featured))
	handle("GET /v1/sites/{site}/listings/{listing}", s.authed(apikey.ListingsRead, s.one))
	handle("GET /v1/sites/{site}/fields", s.authed(apikey.ListingsRead, s.fields))
	handle("GET /v1/sites/{site}/media", s.authed(apikey.ListingsRead, s.mediaList))
	handle("GET /v1/sites/{site}/media/{media_id}", s.authed(apikey.ListingsRead, s.mediaOne))
	handle("GET /v1/sites/{site}/agents", s.authed(apikey.AgentsRead, s.agentList))
	handle("GET /v1/sites/{site}/agents/{agent_id}", s.authed(apikey.AgentsRead, s.agentOne))
	handle("GET /v1/sites/{site}/stats/summary", s.authed(apikey.StatsRead, s.stats))
	handle("GET /v1/sites/{site}/stats/listings", s.authed(apikey.StatsRead, s.topListings))
	handle("GET /v1/sites/{site}/stats/listings/{listing}", s.authed(apikey.StatsRead, s.listingViews))
}

// site is the request's site, as the handlers need it.
type site struct {
	id  string
	loc *time.Location
}

type handler func(w http.ResponseWriter, r *http.Request, st site) error

// authed checks, in DESIGN.md's order, that the edge vouched for a key, that
// the key's site is the path's site, and that it has the scope; then that
// the client accepts JSON.
func (s *Service) authed(scope apikey.Scope, h handler) api.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, ok := api.IdentityFrom(r.Context())
		if !ok {
			return apierror.Unauthorized("")
		}
		if r.PathValue("site") != id.SiteID {
			return apierror.Forbidden("this key cannot access that site")
		}
		if !id.Scopes.Has(scope) {
			return apierror.MissingScope(scope.String())
		}
		if !acceptsJSON(r.Header.Get("Accept")) {
			return apierror.NotAcceptable()
		}
		loc, err := s.zone(r.Context(), id.SiteID)
		if err != nil {
			return err
		}
		return h(w, r, site{id: id.SiteID, loc: loc})
	}
}

// zone returns the site's time zone, cached: a site's zone rarely changes
// and every response needs it.
func (s *Service) zone(ctx context.Context, siteID string) (*time.Location, error) {
	if loc, ok := s.zones.Load(siteID); ok {
		return loc.(*time.Location), nil
	}
	st, err := s.db.GetSite(ctx, siteID)
	if err != nil {
		return nil, dbErr(err)
	}
	loc, err := time.LoadLocation(st.Timezone)
	if err != nil {
		loc = time.UTC
	}
	s.zones.Store(siteID, loc)
	return loc, nil
}

// acceptsJSON reports whether an Accept header admits application/json.
func acceptsJSON(accept string) bool {
	if strings.TrimSpace(accept) == "" {
		return true
	}
	for _, part := range strings.Split(accept, ",") {
		mt, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		mt = strings.ToLower(strings.TrimSpace(mt))
		if refused(params) {
			continue
		}
		switch mt {
		case "application/json", "application/*", "*/*":
			return true
		}
	}
	return false
}

// refused reports whether media-type parameters carry q=0.
func refused(params string) bool {
	for _, p := range strings.Split(params, ";") {
		k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
		if strings.EqualFold(k, "q") {
			q, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return err == nil && q == 0
		}
	}
	return false
}

// dbErr maps a database failure the client may retry (connection lost,
// server shutting down or out of resources, timeout) to 503; anything else
// passes through (a failing query is a bug: 500).
func dbErr(err error) error {
	if store.IsUnavailable(err) && !errors.Is(err, context.Canceled) {
		return apierror.Unavailable(2, err)
	}
	return err
}

// respond writes v as JSON with a strong ETag and cacheControl, or 304 when
// the client's If-None-Match names the same ETag.
func respond(w http.ResponseWriter, r *http.Request, cacheControl string, v any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode response: %w", err)
	}
	sum := sha256.Sum256(body)
	etag := `"` + base64.RawURLEncoding.EncodeToString(sum[:18]) + `"`
	h := w.Header()
	h.Set("ETag", etag)
	h.Set("Cache-Control", cacheControl)
	h.Set("Vary", "Accept-Encoding")
	if api.ETagMatch(r.Header.Get("If-None-Match"), etag) {
		w.WriteHeader(http.StatusNotModified)
		return nil
	}
	h.Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, err = w.Write(body)
	}
	return err
}
