package gateway

import (
	"bytes"
	"strings"

	"github.com/valyala/fasthttp"
)

// siteRoutes finds the GET routes of one site whose path is
// /v1/sites/{site} and a fixed rest (/listings, /agents, /stats/summary…)
// without the router: a map look-up of the rest, the site taken from the
// path as the router would take it, and no allocation (the router copies
// each parameter and boxes it into the request's user values). Only a
// request the router would give the same route and {site} is taken here
// (FuzzSiteRoutes holds it to the router); anything else goes to the router.
type siteRoutes map[string]siteRoute

type siteRoute struct {
	rt *route
	m  *routeMetrics
}

const sitePrefix = "/v1/sites/"

// add indexes rt when it is a GET route that takes {site} and nothing else
// from the path, served by serve (not a beacon).
func (s siteRoutes) add(rt *route, m *routeMetrics) {
	rest, ok := strings.CutPrefix(rt.path, sitePrefix+"{site}")
	if !ok || rt.method != fasthttp.MethodGet || rt.beacon || strings.Contains(rest, "{") {
		return
	}
	s[rest] = siteRoute{rt: rt, m: m}
}

// match returns the route of a GET or HEAD of path, and its {site}.
func (s siteRoutes) match(method, path []byte) (siteRoute, []byte, bool) {
	if string(method) != fasthttp.MethodGet && string(method) != fasthttp.MethodHead {
		return siteRoute{}, nil, false
	}
	if !bytes.HasPrefix(path, []byte(sitePrefix)) {
		return siteRoute{}, nil, false
	}
	p := path[len(sitePrefix):]
	i := bytes.IndexByte(p, '/')
	if i <= 0 {
		return siteRoute{}, nil, false
	}
	sr, ok := s[string(p[i:])]
	return sr, p[:i], ok
}
