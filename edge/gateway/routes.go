package gateway

import "github.com/listgate/listgate/pkg/apikey"

// route is what the edge knows of one API route: the order of checks of
// DESIGN.md §2 reads it.
type route struct {
	method, path string
	// name labels metrics.
	name string
	// scope the key needs; 0 with public false means any valid key.
	scope apikey.Scope
	// public routes take no key: pairing, OAuth token, feeds, openapi.json.
	// They are forwarded as they are, behind the per-IP abuse limit.
	public bool
	// site is set when the path carries {site}, which must be the key's.
	site bool
	// cacheable reads may be served from the response cache.
	cacheable bool
	// maxBody bounds the request body; 0: the route takes none.
	maxBody int
	// upload is the feed upload: its body streams to the origin, up to
	// Config.MaxUploadBytes, when it carries a bearer token.
	upload bool
	// cors routes answer browsers on the origins the key's site allows
	// (cors.go).
	cors bool
	// beacon routes are the view beacons (beacon.go): answered at the edge
	// alone, outside the site's plan limit, from any origin.
	beacon bool
}

// Body limits of the routes. leadBodyLimit is API.md's 64 KiB; no route
// but the feed upload takes more than maxSmallBody.
const (
	leadBodyLimit = 64 << 10
	formBodyLimit = 8 << 10
	maxSmallBody  = 64 << 10
	dashBodyLimit = 64 << 10
)

// routes is the edge's route table: every /v1 route of API.md.
var routes = []route{
	{method: "GET", path: "/v1/sites/{site}/listings", name: "listings", scope: apikey.ListingsRead, site: true, cacheable: true, cors: true},
	{method: "GET", path: "/v1/sites/{site}/listings/search", name: "listings_search", scope: apikey.ListingsRead, site: true, cacheable: true, cors: true},
	{method: "GET", path: "/v1/sites/{site}/listings/featured", name: "listings_featured", scope: apikey.ListingsRead, site: true, cacheable: true, cors: true},
	{method: "GET", path: "/v1/sites/{site}/listings/{listing}", name: "listing", scope: apikey.ListingsRead, site: true, cacheable: true, cors: true},
	{method: "GET", path: "/v1/sites/{site}/fields", name: "fields", scope: apikey.ListingsRead, site: true, cacheable: true, cors: true},
	{method: "GET", path: "/v1/sites/{site}/media", name: "media", scope: apikey.ListingsRead, site: true, cacheable: true, cors: true},
	{method: "GET", path: "/v1/sites/{site}/media/{media_id}", name: "media_object", scope: apikey.ListingsRead, site: true, cacheable: true, cors: true},
	{method: "GET", path: "/v1/sites/{site}/agents", name: "agents", scope: apikey.AgentsRead, site: true, cacheable: true, cors: true},
	{method: "GET", path: "/v1/sites/{site}/agents/{agent_id}", name: "agent", scope: apikey.AgentsRead, site: true, cacheable: true, cors: true},
	{method: "GET", path: "/v1/sites/{site}/stats/summary", name: "stats", scope: apikey.StatsRead, site: true, cacheable: true, cors: true},
	{method: "GET", path: "/v1/sites/{site}/stats/listings", name: "stats_listings", scope: apikey.StatsRead, site: true, cacheable: true, cors: true},
	{method: "GET", path: "/v1/sites/{site}/stats/listings/{listing}", name: "stats_listing", scope: apikey.StatsRead, site: true, cacheable: true, cors: true},
	{method: "POST", path: "/v1/sites/{site}/views", name: "views", scope: apikey.ViewsWrite, site: true, maxBody: beaconBodyLimit, beacon: true},
	{method: "GET", path: "/v1/sites/{site}/views.gif", name: "views_gif", scope: apikey.ViewsWrite, site: true, beacon: true},
	{method: "POST", path: "/v1/leads", name: "leads", scope: apikey.LeadsWrite, maxBody: leadBodyLimit, cors: true},
	{method: "DELETE", path: "/v1/pairing", name: "pairing_disconnect"},

	{method: "POST", path: "/v1/pairing/device", name: "pairing_device", public: true, maxBody: formBodyLimit},
	{method: "POST", path: "/v1/pairing/token", name: "pairing_token", public: true, maxBody: formBodyLimit},
	{method: "POST", path: "/v1/oauth/token", name: "oauth_token", public: true, maxBody: formBodyLimit},
	{method: "POST", path: "/v1/feeds", name: "feeds_upload", public: true, upload: true},
	{method: "GET", path: "/v1/feeds/{feed_id}", name: "feed", public: true},
	{method: "GET", path: "/v1/openapi.json", name: "openapi", public: true},

	// The dashboard is the origin's (server-rendered, cookie sessions): it
	// is forwarded as it is, where verification_uri of pairing points.
	{method: "GET", path: "/dashboard", name: "dashboard", public: true},
	{method: "GET", path: "/dashboard/{path:*}", name: "dashboard", public: true},
	{method: "POST", path: "/dashboard/{path:*}", name: "dashboard", public: true, maxBody: dashBodyLimit},
}
