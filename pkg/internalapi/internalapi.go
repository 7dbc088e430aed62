// Package internalapi is the contract between the edge and the origin: the
// origin's internal routes (which only edges call, with the internal
// token), the headers the edge sets on the requests it forwards, and the
// wire types of both. Both programs use these declarations and nothing else
// for that seam; pkg/internalapi/contract runs the edge's client against
// the origin's handlers, so the two sides cannot drift apart.
package internalapi

import (
	"time"

	"github.com/listgate/listgate/pkg/model"
)

// Headers between the edge and the origin. The origin believes the
// identity headers only on a request carrying the internal token; the edge
// drops whatever a client sent under any name starting with HeaderPrefix.
const (
	// HeaderPrefix starts every header of this contract.
	HeaderPrefix = "X-Listgate-"
	// HeaderInternalToken carries the shared secret on every request of an
	// edge to an origin.
	HeaderInternalToken = "X-Listgate-Internal-Token"
	// HeaderSite, HeaderKeyID and HeaderScopes are the identity of the key
	// a forwarded request was authenticated with: its site, its id and its
	// scopes (canonical names, comma-separated).
	HeaderSite   = "X-Listgate-Site"
	HeaderKeyID  = "X-Listgate-Key-Id"
	HeaderScopes = "X-Listgate-Scopes"
	// HeaderClientIP is the client's address as the edge saw it.
	HeaderClientIP = "X-Listgate-Client-Ip"
)

// The origin's internal routes.
const (
	// PathIntrospect takes POST with IntrospectionRequest and answers
	// Introspection.
	PathIntrospect = "/internal/v1/keys/introspect"
	// PathEvents is the event stream (text/event-stream, GET).
	PathEvents = "/internal/v1/events"
	// PathUsage takes POST with UsageReport and answers 204.
	PathUsage = "/internal/v1/usage"
	// PathViews takes POST with ViewReport and answers 204, whether the
	// batch was applied now or before.
	PathViews = "/internal/v1/views"
	// PathSiteCORS answers GET with SiteCORS (404 for an unknown site);
	// SiteCORSPath fills it in.
	PathSiteCORS = "/internal/v1/sites/{site_id}/cors"
)

// SiteCORSPath is PathSiteCORS for one site; siteID must be a UUID (it is
// not escaped).
func SiteCORSPath(siteID string) string { return "/internal/v1/sites/" + siteID + "/cors" }

// UsageReport is the body of POST /internal/v1/usage: each site's
// authenticated requests per UTC minute, as one edge counted them.
type UsageReport struct {
	// ReportID (a UUID, optional) makes the report idempotent: the origin
	// applies each id once, so an edge that did not get the answer sends
	// the same report again with the same id.
	ReportID string       `json:"report_id,omitempty"`
	Counts   []UsageCount `json:"counts"`
}

// UsageCount is one site's requests in one minute.
type UsageCount struct {
	SiteID string `json:"site_id"`
	// Minute is the minute's start, UTC, RFC 3339 without seconds.
	Minute   time.Time `json:"minute"`
	Requests int64     `json:"requests"`
}

// ViewReport is the body of POST /internal/v1/views: listing views one
// edge counted since its previous report. BatchID (a UUID) identifies the
// report: the edge sends a report it got no answer to again with the same
// id, and the origin applies each id once.
type ViewReport struct {
	BatchID string `json:"batch_id"`
	// EdgeID names the edge process (informative, 1–64 bytes).
	EdgeID string      `json:"edge_id"`
	Counts []ViewCount `json:"counts"`
}

// ViewCount is what an edge counted for one listing and day.
type ViewCount struct {
	SiteID     string `json:"site_id"`
	ListingRef int64  `json:"listing_ref"`
	// Day is the date in the site's time zone, YYYY-MM-DD.
	Day   string `json:"day"`
	Views int64  `json:"views"`
	// Visitors are the visitors the edge had not counted on this listing
	// earlier that day; at most Views.
	Visitors int64 `json:"visitors"`
}

// Introspection is the answer of POST /internal/v1/keys/introspect. For an
// unknown or revoked key only Active (false) is set and every other field is
// omitted; the edge may cache that negative answer briefly.
type Introspection struct {
	Active bool   `json:"active"`
	KeyID  string `json:"key_id,omitempty"`
	SiteID string `json:"site_id,omitempty"`
	// Scopes are the key's scope names in canonical order, e.g.
	// ["listings:read", "agents:read"].
	Scopes []string   `json:"scopes,omitempty"`
	Plan   model.Plan `json:"plan,omitempty"`
	// Limit is the site's requests per minute (Plan.Limit); 0 means
	// unlimited. Present whenever Active is true.
	Limit *int `json:"limit,omitempty"`
	// TTLSeconds is how long the edge may cache this answer.
	TTLSeconds int `json:"ttl_seconds,omitempty"`
	// CORSOrigins are the browser origins the key's site allows, in the
	// form of pkg/cors.Normalize; none: browsers on other origins may not
	// read its answers.
	CORSOrigins []string `json:"cors_origins,omitempty"`
	// Timezone is the site's IANA time zone: the edge counts a site's
	// listing views per day in it. Present whenever Active is true.
	Timezone string `json:"timezone,omitempty"`
}

// SiteCORS is the answer of GET /internal/v1/sites/{site_id}/cors (404 for
// an unknown site) and the data of a site.cors_changed event: the
// origins the site allows, normalized (pkg/cors), [] for none. The edge
// answers CORS preflights from it without a key.
type SiteCORS struct {
	SiteID  string   `json:"site_id"`
	Origins []string `json:"origins"`
}

// IntrospectionRequest is the body of POST /internal/v1/keys/introspect:
// the hex SHA-256 of the key (64 characters). The edge never sends the key.
type IntrospectionRequest struct {
	KeyHash string `json:"key_hash"`
}

// Event types of GET /internal/v1/events (the SSE `event:` field). Every
// event's data is a JSON object with at least "site_id".
const (
	// EventKeyRevoked carries KeyRevoked: drop the key from the key cache.
	EventKeyRevoked = "key.revoked"
	// EventKeyChanged carries at least key_id and site_id: drop the key.
	EventKeyChanged = "key.changed"
	// EventPlanChanged carries PlanChanged: apply the new limit.
	EventPlanChanged = "site.plan_changed"
	// EventContentChanged carries ContentChanged: invalidate the site's
	// cached responses.
	EventContentChanged = "site.content_changed"
	// EventCORSChanged carries SiteCORS: the site's allowed origins, whole.
	EventCORSChanged = "site.cors_changed"
	// EventReset has no payload to act on: the stream could not continue
	// from the Last-Event-ID the client sent, so the client must purge
	// everything it cached from earlier events.
	EventReset = "reset"
)

// KeyRevoked is the data of a key.revoked event.
type KeyRevoked struct {
	KeyID  string `json:"key_id"`
	SiteID string `json:"site_id"`
	// KeyHash is the hex SHA-256 of the key, the edge's key cache index.
	KeyHash string `json:"key_hash"`
}

// PlanChanged is the data of a site.plan_changed event.
type PlanChanged struct {
	SiteID string     `json:"site_id"`
	Plan   model.Plan `json:"plan"`
	// Limit is the new requests per minute; 0 means unlimited.
	Limit int `json:"limit"`
}

// ContentChanged is the data of a site.content_changed event; other fields
// (reason, counts) are informative.
type ContentChanged struct {
	SiteID string `json:"site_id"`
	Reason string `json:"reason,omitempty"`
}
