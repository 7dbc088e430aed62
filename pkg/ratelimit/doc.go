// Package ratelimit enforces the sites' plan rate limits for the edge
// (DESIGN.md §4): fixed 60-second windows aligned to the UTC minute, one
// counter per site shared by all of the site's keys and, with the Redis
// backend, by every edge.
//
// Two backends satisfy [Limiter]:
//
//   - [Local] counts in process memory. It is the default for a single edge,
//     costs no allocation on the hot path and is exact under concurrency.
//   - [Redis] counts in Redis with one atomic Lua script per request, so
//     every edge shares one count. When Redis is unreachable or slower than
//     its timeout, requests are decided by a local fallback limiter at
//     limit/ExpectedEdges until a background probe sees Redis answer again.
//
// [WindowLimiter] is of another kind: events per key (a client IP, an
// account) in windows that start at a key's first event, in memory, for the
// origin's abuse limits (pairing starts and code entries, failed OAuth
// client authentications). It is not a [Limiter] and has no metrics.
//
// # Semantics
//
// Of the plan limits ([Limiter]): a request that passed authentication is
// offered to [Limiter.Allow]. It is admitted while fewer than limit
// requests were admitted in the current window, and then counts; a
// rejected request (answered 429) does not count. So exactly limit requests
// are admitted per site and window, never more, whatever the concurrency
// and however many edges share a Redis.
//
// The limit comes with the caller's key and may change from one call to the
// next (a plan change takes effect at once): 0 means unlimited, and a
// negative limit is a programming error that fails closed (every request is
// rejected, nothing is counted).
//
// # Headers
//
// The edge writes the response headers from a [Decision]:
//
//	X-RateLimit-Limit      Decision.Limit
//	X-RateLimit-Remaining  Decision.Remaining
//	X-RateLimit-Reset      Decision.Reset.Unix()
//	Retry-After            Decision.RetryAfter (429 only)
//
// and none of them when Decision.Unlimited is set.
//
// # Metrics
//
// Both backends register their metrics in a [github.com/VictoriaMetrics/metrics.Set]
// (by default the process-wide one the edge's /metrics writes; the edge
// names them, docs/operations.md lists them):
//
//	listgate_edge_ratelimit_decisions_total{backend="local|redis|fallback",result="allowed|rejected"}
//	listgate_edge_ratelimit_fallbacks_total          times the Redis limiter fell back to local decisions
//	listgate_edge_ratelimit_fallback_active          1 while the Redis limiter decides locally
//	listgate_edge_ratelimit_redis_duration_seconds   latency of the Redis script, timeouts included
//	listgate_edge_ratelimit_redis_slow_calls_total   calls over the timeout decided locally alone
package ratelimit
