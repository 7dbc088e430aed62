package gateway

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/listgate/listgate/pkg/promtext"
)

func init() {
	promtext.Describe("listgate_edge_requests_total", "Requests answered by the edge, by route (the API route's name; unmatched, preflight) and status.")
	promtext.Describe("listgate_edge_request_duration_seconds", "Time the edge took to answer a request, by route.")
	promtext.Describe("listgate_edge_key_offline_rejections_total", "Malformed keys (bad prefix, length or checksum) refused without a lookup.")
	promtext.Describe("listgate_edge_origin_errors_total", "Requests the origin could not answer (unreachable, timeout, 5xx on a lookup) that the edge answered with an error.")
	promtext.Describe("listgate_edge_auth_throttled_total", "Uncached keys refused without an origin call because their client address failed authentication too often.")
}

// durationBuckets are the bounds of the request duration histograms: a
// cached read takes tens of microseconds, a forwarded one milliseconds.
var durationBuckets = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}

// gatewayMetrics are the edge's counters, made once so the request path
// formats no metric names.
type gatewayMetrics struct {
	offlineRejects *metrics.Counter
	originErrors   *metrics.Counter
	// authThrottled counts uncached keys refused without an origin call
	// because their address failed too often.
	authThrottled *metrics.Counter
	// preflight times CORS preflights.
	preflight *routeMetrics
}

func newMetrics() *gatewayMetrics {
	m := &gatewayMetrics{
		offlineRejects: metrics.GetOrCreateCounter(`listgate_edge_key_offline_rejections_total`),
		originErrors:   metrics.GetOrCreateCounter(`listgate_edge_origin_errors_total`),
		authThrottled:  metrics.GetOrCreateCounter(`listgate_edge_auth_throttled_total`),
	}
	m.preflight = m.route("preflight")
	return m
}

// routeMetrics counts one route's responses by status and times them.
type routeMetrics struct {
	name     string
	statuses [600]atomic.Pointer[metrics.Counter]
	duration *metrics.PrometheusHistogram
}

func (m *gatewayMetrics) route(name string) *routeMetrics {
	return &routeMetrics{name: name,
		duration: metrics.GetOrCreatePrometheusHistogramExt(fmt.Sprintf(`listgate_edge_request_duration_seconds{route=%q}`, name),
			durationBuckets)}
}

func (r *routeMetrics) observe(status int, start time.Time) {
	if status < 100 || status >= 600 {
		status = 599
	}
	c := r.statuses[status].Load()
	if c == nil {
		c = metrics.GetOrCreateCounter(fmt.Sprintf(`listgate_edge_requests_total{route=%q,status="%d"}`, r.name, status))
		r.statuses[status].Store(c)
	}
	c.Inc()
	r.duration.UpdateDuration(start)
}
