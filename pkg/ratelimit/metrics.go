package ratelimit

import (
	"github.com/VictoriaMetrics/metrics"

	"github.com/listgate/listgate/pkg/promtext"
)

func init() {
	promtext.Describe("listgate_edge_ratelimit_decisions_total",
		"Rate-limit decisions (plan limits and the per-address limit of the routes without a key), by backend (local, redis, fallback: local while Redis is unreachable) and result (allowed, rejected).")
	promtext.Describe("listgate_edge_ratelimit_fallbacks_total",
		"Times the Redis limiter fell back to local decisions (Redis unreachable, or three calls in a row over the timeout).")
	promtext.Describe("listgate_edge_ratelimit_fallback_active",
		"1 while the Redis limiter decides locally (Redis unreachable), else 0.")
	promtext.Describe("listgate_edge_ratelimit_redis_duration_seconds",
		"Time of one call of the Redis rate-limit script, timeouts included.")
	promtext.Describe("listgate_edge_ratelimit_redis_slow_calls_total",
		"Redis calls over the timeout that were decided locally without falling back.")
}

// redisBuckets are the bounds of the Redis latency histogram: the calls
// have a timeout of milliseconds.
var redisBuckets = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1}

// Backend labels of listgate_edge_ratelimit_decisions_total.
const (
	backendLocal    = "local"
	backendRedis    = "redis"
	backendFallback = "fallback"
)

// decisionCounters counts one backend's decisions in
// listgate_edge_ratelimit_decisions_total.
type decisionCounters struct {
	allowed  *metrics.Counter
	rejected *metrics.Counter
}

func newDecisionCounters(set *metrics.Set, backend string) decisionCounters {
	return decisionCounters{
		allowed:  set.GetOrCreateCounter(`listgate_edge_ratelimit_decisions_total{backend="` + backend + `",result="allowed"}`),
		rejected: set.GetOrCreateCounter(`listgate_edge_ratelimit_decisions_total{backend="` + backend + `",result="rejected"}`),
	}
}

// count records d and returns it unchanged.
func (c decisionCounters) count(d Decision) Decision {
	if d.Allowed {
		c.allowed.Inc()
	} else {
		c.rejected.Inc()
	}
	return d
}

// redisMetrics are the Redis limiter's own metrics.
type redisMetrics struct {
	fallbacks      *metrics.Counter
	fallbackActive *metrics.Gauge
	latency        *metrics.PrometheusHistogram
	// slowCalls counts calls over the timeout that did not (yet) make the
	// limiter fall back; those requests were decided locally.
	slowCalls *metrics.Counter
}

func newRedisMetrics(set *metrics.Set) redisMetrics {
	return redisMetrics{
		fallbacks:      set.GetOrCreateCounter(`listgate_edge_ratelimit_fallbacks_total`),
		fallbackActive: set.GetOrCreateGauge(`listgate_edge_ratelimit_fallback_active`, nil),
		latency:        set.GetOrCreatePrometheusHistogramExt(`listgate_edge_ratelimit_redis_duration_seconds`, redisBuckets),
		slowCalls:      set.GetOrCreateCounter(`listgate_edge_ratelimit_redis_slow_calls_total`),
	}
}

func metricsSet(s *metrics.Set) *metrics.Set {
	if s == nil {
		return metrics.GetDefaultSet()
	}
	return s
}
