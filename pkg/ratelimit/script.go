package ratelimit

import (
	"strconv"

	"github.com/redis/rueidis"
)

// allowScript decides one request atomically in Redis.
//
//	KEYS[1]  the window's counter, lg:rl:{site}:{window start, Unix seconds}
//	ARGV[1]  limit, at least 1 (0 is used by the probe: it never writes)
//	ARGV[2]  expiry of a new counter in seconds
//
// It returns the count after this request when the request is admitted
// (1…limit), and 0 when it is rejected; a rejected request is not counted.
// The expiry is set with the first increment only, so a counter lives
// counterTTL seconds from its window's first request: past the window's end
// whatever the edges' clock skew, and never forever.
const allowScript = `local n = tonumber(redis.call('GET', KEYS[1]) or '0')
if n >= tonumber(ARGV[1]) then
  return 0
end
n = redis.call('INCR', KEYS[1])
if n == 1 then
  redis.call('EXPIRE', KEYS[1], ARGV[2])
end
return n
`

// counterTTL is the expiry of a window's counter: two windows.
const counterTTL = "120"

// keyPrefix namespaces the counters. The site sits in braces, a Redis
// Cluster hash tag, so all of a site's windows live on one node.
const keyPrefix = "lg:rl:{"

// counterKey is the Redis key of site's counter in the window starting at
// ws (Unix seconds).
func counterKey(site string, ws int64) string {
	b := make([]byte, 0, len(keyPrefix)+len(site)+2+20)
	b = append(b, keyPrefix...)
	b = append(b, site...)
	b = append(b, "}:"...)
	b = strconv.AppendInt(b, ws, 10)
	return string(b)
}

// newAllowScript wraps allowScript in rueidis' helper, which sends EVALSHA
// and, when Redis does not know the script yet (NOSCRIPT: first use, or a
// restarted server), EVAL.
func newAllowScript() *rueidis.Lua {
	return rueidis.NewLuaScript(allowScript)
}
