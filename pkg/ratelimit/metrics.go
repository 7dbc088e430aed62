package ratelimit

import "github.com/VictoriaMetrics/metrics"

// Backend labels of ratelimit_decisions_total.
const (
	backendLocal    = "local"
	backendRedis    = "redis"
	backendFallback = "fallback"
)

// decisionCounters counts one backend's decisions in
// ratelimit_decisions_total.
type decisionCounters struct {
	allowed  *metrics.Counter
	rejected *metrics.Counter
}

func newDecisionCounters(set *metrics.Set, backend string) decisionCounters {
	return decisionCounters{
		allowed:  set.GetOrCreateCounter(`ratelimit_decisions_total{backend="` + backend + `",result="allowed"}`),
		rejected: set.GetOrCreateCounter(`ratelimit_decisions_total{backend="` + backend + `",result="rejected"}`),
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
	latency        *metrics.Histogram
	// slowCalls counts calls over the timeout that did not (yet) make the
	// limiter fall back; those requests were decided locally.
	slowCalls *metrics.Counter
}

func newRedisMetrics(set *metrics.Set) redisMetrics {
	return redisMetrics{
		fallbacks:      set.GetOrCreateCounter(`ratelimit_fallback_total`),
		fallbackActive: set.GetOrCreateGauge(`ratelimit_fallback_active`, nil),
		latency:        set.GetOrCreateHistogram(`ratelimit_redis_duration_seconds`),
		slowCalls:      set.GetOrCreateCounter(`ratelimit_redis_slow_calls_total`),
	}
}

func metricsSet(s *metrics.Set) *metrics.Set {
	if s == nil {
		return metrics.GetDefaultSet()
	}
	return s
}
