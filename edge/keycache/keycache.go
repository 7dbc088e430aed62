// Package keycache is the edge's cache of API keys: SHA-256 of a key →
// the key's id, site, scopes and the site's plan limit and browser origins,
// held in ristretto and filled by asking the origin (introspection) on a
// miss; and of each site's plan limit and origins, which preflights read.
// Concurrent misses for one key make one origin call; unknown and revoked
// keys are cached briefly as negative entries; every entry expires after
// the origin's TTL, and the origin's event stream revokes keys and changes
// plans and origins sooner.
package keycache

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/dgraph-io/ristretto/v2"

	"github.com/listgate/listgate/pkg/apikey"
)

// Info is what the edge knows of a key.
type Info struct {
	// Active is false for an unknown or revoked key.
	Active bool
	KeyID  string
	SiteID string
	Scopes apikey.Scope
	// Limit is the site's requests per minute; 0 means unlimited.
	Limit int
	// CORS are the browser origins the site allows (pkg/cors form).
	CORS []string
	// Zone is the site's time zone (listing views are counted per day in
	// it); nil when the origin did not say: UTC.
	Zone *time.Location
	// TTL is how long the origin lets the edge cache this answer
	// (ttl_seconds); 0: Options.TTL.
	TTL time.Duration
}

// Introspector asks the origin about a key by its hash. An error means the
// origin could not answer (it is down, or timed out); an unknown key is
// Info{Active: false} and a nil error.
type Introspector func(ctx context.Context, hash [32]byte) (Info, error)

// ErrUnavailable wraps introspection failures: the key is not cached and the
// origin cannot say what it is. The edge answers 503, never 401.
var ErrUnavailable = errors.New("keycache: origin unavailable")

// Options tune New.
type Options struct {
	// TTL bounds how long a key's answer is cached: the origin's ttl_seconds,
	// at most this (which also applies when the origin sends none).
	// Default 30 s.
	TTL time.Duration
	// NegativeTTL bounds how long an unknown key is cached. Default 5 s.
	NegativeTTL time.Duration
	// MaxKeys bounds the number of cached keys. Default 1,000,000.
	MaxKeys int64
	// FetchCORS asks the origin for a site's allowed browser origins, for
	// a preflight of a site no cached key belongs to. Nil: such preflights
	// find no site.
	FetchCORS CORSFetcher
	// CORSTTL bounds how long a site's origins stay cached; changes arrive
	// sooner through the event stream. Default 5 min.
	CORSTTL time.Duration
}

// CORSFetcher asks the origin for a site's allowed browser origins; found
// is false for an unknown site, and an error means the origin could not
// answer.
type CORSFetcher func(ctx context.Context, siteID string) (origins []string, found bool, err error)

// Cache is safe for concurrent use.
type Cache struct {
	c          *ristretto.Cache[string, *Info]
	introspect Introspector
	ttl, neg   time.Duration

	// epoch changes on every invalidation; an introspection that started
	// before one is not cached, so a revocation cannot be undone by an
	// answer that was already on its way.
	epoch atomic.Uint64

	mu      sync.Mutex
	flights map[[32]byte]*flight

	// sites holds each site's plan limit and browser origins as last
	// heard, so a change reaches every cached key of the site at once.
	// Only sites the origin vouched for are held (an introspected key's, or
	// one FetchCORS found), so their number is that of real sites.
	sites       sync.Map // site id → *siteState
	fetchCORS   CORSFetcher
	corsTTL     time.Duration
	corsMu      sync.Mutex
	corsFlights map[string]*corsFlight

	hits, misses atomic.Uint64

	// known holds the hashes of keys the origin answered active in the
	// last day, long after their entries expire: an address failing many
	// authentications is not refused these (Known).
	known *ristretto.Cache[string, struct{}]
}

type flight struct {
	done chan struct{}
	info Info
	err  error
}

// New returns a cache that fills itself with introspect.
func New(introspect Introspector, opts Options) (*Cache, error) {
	if opts.TTL <= 0 {
		opts.TTL = 30 * time.Second
	}
	if opts.NegativeTTL <= 0 {
		opts.NegativeTTL = 5 * time.Second
	}
	if opts.MaxKeys <= 0 {
		opts.MaxKeys = 1_000_000
	}
	c, err := ristretto.NewCache(&ristretto.Config[string, *Info]{
		NumCounters: opts.MaxKeys * 10,
		MaxCost:     opts.MaxKeys,
		BufferItems: 64,
	})
	if err != nil {
		return nil, fmt.Errorf("keycache: %w", err)
	}
	known, err := ristretto.NewCache(&ristretto.Config[string, struct{}]{
		NumCounters: opts.MaxKeys * 10,
		MaxCost:     opts.MaxKeys,
		BufferItems: 64,
	})
	if err != nil {
		return nil, fmt.Errorf("keycache: %w", err)
	}
	if opts.CORSTTL <= 0 {
		opts.CORSTTL = 5 * time.Minute
	}
	return &Cache{c: c, introspect: introspect, ttl: opts.TTL, neg: opts.NegativeTTL,
		flights: map[[32]byte]*flight{}, known: known, fetchCORS: opts.FetchCORS, corsTTL: opts.CORSTTL,
		corsFlights: map[string]*corsFlight{}}, nil
}

// keyOf views a hash as a string without copying; ristretto keeps only
// hashes of its keys, never the string.
func keyOf(h *[32]byte) string { return unsafe.String(&h[0], len(h)) }

// Lookup returns what is known of the key with this hash, asking the origin
// on a miss (one call per key at a time). It returns ErrUnavailable when the
// key is not cached and the origin cannot answer.
func (c *Cache) Lookup(ctx context.Context, hash [32]byte) (Info, error) {
	if info, ok := c.c.Get(keyOf(&hash)); ok {
		c.hits.Add(1)
		return c.withSite(*info), nil
	}
	c.misses.Add(1)
	c.mu.Lock()
	f, ok := c.flights[hash]
	if !ok {
		// A flight that ended between the Get above and the lock has
		// stored its answer (fill waits for the set) before leaving the map.
		if info, ok := c.c.Get(keyOf(&hash)); ok {
			c.mu.Unlock()
			return c.withSite(*info), nil
		}
		f = &flight{done: make(chan struct{})}
		c.flights[hash] = f
		c.mu.Unlock()
		f.info, f.err = c.fill(ctx, hash)
		c.mu.Lock()
		delete(c.flights, hash)
		c.mu.Unlock()
		close(f.done)
	} else {
		c.mu.Unlock()
		select {
		case <-f.done:
		case <-ctx.Done():
			return Info{}, fmt.Errorf("%w: %v", ErrUnavailable, ctx.Err())
		}
	}
	if f.err != nil {
		return Info{}, f.err
	}
	return c.withSite(f.info), nil
}

// Cached returns what the cache holds of the key with this hash, an unknown
// key's negative answer included, without asking the origin: ok is false
// when Lookup would have to ask.
//
// hash is a pointer: ristretto's hashing is called through a function
// value, so a key on the caller's stack would be moved to the heap.
func (c *Cache) Cached(hash *[32]byte) (info Info, ok bool) {
	p, ok := c.c.Get(keyOf(hash))
	if !ok {
		return Info{}, false
	}
	c.hits.Add(1)
	return c.withSite(*p), true
}

// knownTTL is how long a key the origin answered active stays Known.
const knownTTL = 24 * time.Hour

// Known reports whether the origin answered the key with this hash active
// in the last day. A revoked key may still be Known: Known only spares a
// key the per-address failure limit, and the origin refuses it (once, then
// the negative entry does).
func (c *Cache) Known(hash [32]byte) bool {
	_, ok := c.known.Get(keyOf(&hash))
	return ok
}

// fill introspects and caches the answer, unless an invalidation happened
// meanwhile, in which case it asks again (at most three times).
func (c *Cache) fill(ctx context.Context, hash [32]byte) (Info, error) {
	for try := 0; ; try++ {
		epoch := c.epoch.Load()
		info, err := c.introspect(ctx, hash)
		if err != nil {
			return Info{}, fmt.Errorf("%w: %v", ErrUnavailable, err)
		}
		if c.epoch.Load() != epoch && try < 2 {
			continue
		}
		ttl := c.ttl
		if info.TTL > 0 {
			ttl = min(info.TTL, c.ttl)
		}
		if !info.Active {
			ttl = c.neg
		} else {
			c.SetPlanLimit(info.SiteID, info.Limit)
			c.SetCORS(info.SiteID, info.CORS)
			c.known.SetWithTTL(keyOf(&hash), struct{}{}, 1, knownTTL)
		}
		stored := info
		c.c.SetWithTTL(keyOf(&hash), &stored, 1, ttl)
		c.c.Wait()
		return info, nil
	}
}

func (c *Cache) withSite(info Info) Info {
	if info.Active {
		if st, ok := c.sites.Load(info.SiteID); ok {
			st := st.(*siteState)
			info.Limit = int(st.limit.Load())
			if e := st.cors.Load(); e != nil {
				info.CORS = e.origins
			}
		}
	}
	return info
}

// SetPlanLimit records a site's plan limit (0: unlimited); every cached key
// of the site uses it from now on.
func (c *Cache) SetPlanLimit(siteID string, limit int) {
	c.site(siteID).limit.Store(int64(limit))
}

// Revoke forgets a key by the hex SHA-256 the origin's key.revoked event
// carries, so the next request with it asks the origin (which refuses it).
func (c *Cache) Revoke(hashHex string) error {
	var h [32]byte
	if n, err := hex.Decode(h[:], []byte(hashHex)); err != nil || n != 32 {
		return fmt.Errorf("keycache: bad key hash %q", hashHex)
	}
	c.epoch.Add(1)
	c.c.Del(keyOf(&h))
	c.c.Wait()
	return nil
}

// Purge forgets every key, plan limit and site's origins, for when the event stream cannot
// tell what was missed.
func (c *Cache) Purge() {
	c.epoch.Add(1)
	c.c.Clear()
	c.sites.Clear()
}

// Stats returns the cache's hits and misses since it was made.
func (c *Cache) Stats() (hits, misses uint64) { return c.hits.Load(), c.misses.Load() }

// Close releases the cache's goroutines.
func (c *Cache) Close() {
	c.c.Close()
	c.known.Close()
}
