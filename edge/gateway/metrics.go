package gateway

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/valyala/fasthttp"
)

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
		offlineRejects: metrics.GetOrCreateCounter(`edge_key_offline_rejections_total`),
		originErrors:   metrics.GetOrCreateCounter(`edge_origin_errors_total`),
		authThrottled:  metrics.GetOrCreateCounter(`edge_auth_throttled_total`),
	}
	m.preflight = m.route("preflight")
	return m
}

// routeMetrics counts one route's responses by status and times them.
type routeMetrics struct {
	name     string
	statuses [600]atomic.Pointer[metrics.Counter]
	duration *metrics.Histogram
}

func (m *gatewayMetrics) route(name string) *routeMetrics {
	return &routeMetrics{name: name,
		duration: metrics.GetOrCreateHistogram(fmt.Sprintf(`edge_request_duration_seconds{route=%q}`, name))}
}

func (r *routeMetrics) observe(status int, start time.Time) {
	if status < 100 || status >= 600 {
		status = 599
	}
	c := r.statuses[status].Load()
	if c == nil {
		c = metrics.GetOrCreateCounter(fmt.Sprintf(`edge_requests_total{route=%q,status="%d"}`, r.name, status))
		r.statuses[status].Store(c)
	}
	c.Inc()
	r.duration.UpdateDuration(start)
}

// serveMetrics writes the Prometheus text exposition.
func (g *Gateway) serveMetrics(ctx *fasthttp.RequestCtx) {
	ctx.SetContentType("text/plain; version=0.0.4; charset=utf-8")
	ctx.Response.Header.Set("Cache-Control", "no-store")
	metrics.WritePrometheus(ctx, true)
}
