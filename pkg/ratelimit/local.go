package ratelimit

import (
	"context"
	"hash/maphash"
	"math/bits"
	"strings"
	"sync"
	"time"

	"github.com/VictoriaMetrics/metrics"
)

// LocalOptions configures [NewLocal]. The zero value is ready to use.
type LocalOptions struct {
	// Shards is the number of independently locked maps the sites are
	// spread over, rounded up to a power of two. Default 256; at most 65536.
	Shards int
	// Metrics is where listgate_edge_ratelimit_decisions_total{backend="local"} is
	// registered. Default: the process-wide set (metrics.GetDefaultSet()).
	Metrics *metrics.Set
}

const (
	defaultShards = 256
	maxShards     = 1 << 16
)

// Local is an in-process [Limiter]: exact for one edge, shared by nothing
// else. Sites are spread over sharded maps, each behind its own mutex, so
// unrelated sites rarely contend and one site's count is exact under any
// concurrency.
//
// After a site's first request in a window, Allow allocates nothing. Counters
// of sites idle for a whole window are removed lazily: the first request that
// reaches a shard in a new window sweeps that shard, so memory holds the
// sites active in the current and the previous window (plus, in shards no
// request has reached since, what was active then). Local starts no
// goroutine and needs no Close.
//
// A Local is safe for concurrent use; create it with [NewLocal].
type Local struct {
	seed     maphash.Seed
	mask     uint64
	shards   []shard
	decision decisionCounters
}

// shard is one lock and the counters of the sites hashed to it, padded to a
// cache line so neighbouring shards' locks do not share one.
type shard struct {
	mu       sync.Mutex
	counters map[string]*counter
	latest   int64 // newest window start seen here; a newer one triggers a sweep
	_        [40]byte
}

// counter is one site's count in the window starting at window.
type counter struct {
	window int64
	n      int
}

// NewLocal returns an in-process limiter configured by opts (see
// [LocalOptions] for the defaults). It does not fail.
func NewLocal(opts LocalOptions) *Local {
	return newLocal(opts, backendLocal)
}

func newLocal(opts LocalOptions, backend string) *Local {
	n := opts.Shards
	if n <= 0 {
		n = defaultShards
	}
	n = min(n, maxShards)
	n = 1 << bits.Len(uint(n-1)) // next power of two
	l := &Local{
		seed:     maphash.MakeSeed(),
		mask:     uint64(n - 1),
		shards:   make([]shard, n),
		decision: newDecisionCounters(metricsSet(opts.Metrics), backend),
	}
	for i := range l.shards {
		l.shards[i].counters = make(map[string]*counter)
	}
	return l
}

// Allow decides one request of site against limit in the window holding now
// (see [Limiter]). ctx is not used: a local decision does not wait.
//
// site is copied when it is first stored, so a caller may pass a string that
// aliases a reused buffer. A now earlier than the newest window this site
// has seen counts against that newest window, so a clock stepping back
// cannot reset a count.
func (l *Local) Allow(_ context.Context, site string, limit int, now time.Time) Decision {
	switch {
	case limit == 0:
		return l.decision.count(unlimited())
	case limit < 0:
		return l.decision.count(rejected(limit, windowStart(now), now))
	}
	return l.decision.count(l.allow(site, limit, now))
}

func (l *Local) allow(site string, limit int, now time.Time) Decision {
	ws := windowStart(now)
	sh := &l.shards[l.shardIndex(site)]
	sh.mu.Lock()
	if ws > sh.latest {
		sh.sweep(ws)
	}
	c := sh.counters[site]
	switch {
	case c == nil:
		c = &counter{window: ws}
		sh.counters[strings.Clone(site)] = c
	case ws > c.window:
		c.window, c.n = ws, 0
	case ws < c.window:
		ws = c.window
	}
	if c.n >= limit {
		sh.mu.Unlock()
		return rejected(limit, ws, now)
	}
	c.n++
	n := c.n
	sh.mu.Unlock()
	return admitted(limit, n, ws)
}

// Used returns how many requests key has had admitted in now's window,
// without counting one: a check before work that only its failure counts
// (the edge's failed authentications per client address).
func (l *Local) Used(key string, now time.Time) int {
	ws := windowStart(now)
	sh := &l.shards[l.shardIndex(key)]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if c := sh.counters[key]; c != nil && c.window >= ws {
		return c.n
	}
	return 0
}

// shardIndex is the shard holding site's counter.
func (l *Local) shardIndex(site string) uint64 {
	return maphash.String(l.seed, site) & l.mask
}

// sweep records ws as the shard's newest window and removes the counters
// not used in it or in the window before. The caller holds s.mu.
func (s *shard) sweep(ws int64) {
	s.latest = ws
	for site, c := range s.counters {
		if c.window < ws-windowSeconds {
			delete(s.counters, site)
		}
	}
}

// len is the number of counters held, for tests.
func (l *Local) len() int {
	n := 0
	for i := range l.shards {
		sh := &l.shards[i]
		sh.mu.Lock()
		n += len(sh.counters)
		sh.mu.Unlock()
	}
	return n
}
