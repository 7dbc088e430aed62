// Package respcache is the edge's response cache for listing reads
// (DESIGN.md §3). Entries are keyed by site, the site's content generation,
// path and canonical query; each holds the origin's body as sent and, made
// on the first request that asks for them, gzip- and brotli-compressed
// copies, with its ETag and freshness from the origin's Cache-Control. A site.content_changed event bumps the site's generation,
// which makes every older entry of that site unreachable at once.
//
// The package does no JSON work: the gateway asks it for entries and hands
// it origin responses.
package respcache

import (
	"bytes"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/dgraph-io/ristretto/v2"
	"github.com/klauspost/compress/gzip"
	"github.com/valyala/fasthttp"

	"github.com/listgate/listgate/edge/target"
)

// Entry is one cached response. Its fields are immutable once stored; its
// compressed copies are made once each, by the first request that wants
// them (Gzip, Brotli), so a miss pays for no compression its client does
// not ask for.
type Entry struct {
	Status      int
	ContentType []byte
	// CacheControl is the origin's header, passed on to clients.
	CacheControl []byte
	ETag         []byte
	// Lines are ETag and Cache-Control as the response's header lines
	// ("Etag: …\r\nCache-Control: …\r\n", the names as fasthttp writes
	// them, a CR or LF in a value as a space), made once when stored.
	Lines []byte
	Body  []byte
	// Message is a cached 404's error message (its body is rebuilt for
	// each request, with that request's id).
	Message  string
	StoredAt time.Time
	// Fresh, SWR and SIE are max-age, stale-while-revalidate and
	// stale-if-error.
	Fresh, SWR, SIE time.Duration
	refreshing      atomic.Bool

	// compress is set when Body is long enough to be worth compressing.
	compress         bool
	gzipOnce, brOnce sync.Once
	gzipBody, brBody []byte
}

// Gzip returns Body gzip-compressed, or nil when that does not pay (a
// short body, or one that shrinks by less than a tenth). The first call
// compresses; later and concurrent calls share its result.
func (e *Entry) Gzip() []byte {
	if !e.compress {
		return nil
	}
	e.gzipOnce.Do(func() { e.gzipBody = gzipped(e.Body) })
	return e.gzipBody
}

// Brotli returns Body brotli-compressed at level 5, or nil when that does
// not pay, made once like Gzip. On a 60 KB listing page it is a fifth
// smaller than gzip for about 3 ms of work once per entry.
func (e *Entry) Brotli() []byte {
	if !e.compress {
		return nil
	}
	e.brOnce.Do(func() { e.brBody = brotlied(e.Body) })
	return e.brBody
}

// State is what an entry is worth at a given time.
type State int

const (
	// Fresh entries are served as they are.
	Fresh State = iota
	// Stale entries within stale-while-revalidate are served while one
	// background refresh runs.
	Stale
	// Expired entries may only be served when the origin fails, within
	// stale-if-error.
	Expired
	// Dead entries are not served at all.
	Dead
)

// State returns the entry's state at now.
func (e *Entry) State(now time.Time) State {
	age := now.Sub(e.StoredAt)
	switch {
	case age < e.Fresh:
		return Fresh
	case age < e.Fresh+e.SWR:
		return Stale
	case age < e.Fresh+e.SIE:
		return Expired
	default:
		return Dead
	}
}

// StartRefresh reports whether the caller is the one to refresh a stale
// entry: true exactly once per entry.
func (e *Entry) StartRefresh() bool { return e.refreshing.CompareAndSwap(false, true) }

// Options tune New.
type Options struct {
	// MaxBytes bounds the bodies held. Default 256 MiB.
	MaxBytes int64
	// NotFoundTTL is how long a 404 is cached. Default 10 s.
	NotFoundTTL time.Duration
	// MinGzip is the smallest body worth compressing. Default 512 bytes.
	MinGzip int
}

// Cache is safe for concurrent use.
type Cache struct {
	c           *ristretto.Cache[string, *Entry]
	gens        sync.Map // site id → *atomic.Uint64
	notFoundTTL time.Duration
	minGzip     int

	mu      sync.Mutex
	flights map[string]*Flight

	hits, misses, stale atomic.Uint64
}

// New returns an empty cache.
func New(opts Options) (*Cache, error) {
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = 256 << 20
	}
	if opts.NotFoundTTL <= 0 {
		opts.NotFoundTTL = 10 * time.Second
	}
	if opts.MinGzip <= 0 {
		opts.MinGzip = 512
	}
	c, err := ristretto.NewCache(&ristretto.Config[string, *Entry]{
		// About one counter per 100 bytes of budget: plenty for pages of
		// a few KB.
		NumCounters: max(opts.MaxBytes/100, 10_000),
		MaxCost:     opts.MaxBytes,
		BufferItems: 64,
	})
	if err != nil {
		return nil, err
	}
	return &Cache{c: c, notFoundTTL: opts.NotFoundTTL, minGzip: opts.MinGzip, flights: map[string]*Flight{}}, nil
}

// Close releases the cache.
func (c *Cache) Close() { c.c.Close() }

// generation returns the site's content generation counter.
func (c *Cache) generation(site []byte) *atomic.Uint64 {
	if g, ok := c.gens.Load(b2s(site)); ok {
		return g.(*atomic.Uint64)
	}
	g, _ := c.gens.LoadOrStore(string(site), new(atomic.Uint64))
	return g.(*atomic.Uint64)
}

// Invalidate makes every cached response of the site unreachable.
func (c *Cache) Invalidate(site string) { c.generation([]byte(site)).Add(1) }

// InvalidateAll makes every cached response unreachable.
func (c *Cache) InvalidateAll() { c.c.Clear() }

// AppendKey appends the cache key of a request to dst: site, generation,
// canonical path and the canonical form of the raw query (see
// target.AppendCanonicalQuery, whose errors it returns). The query's canonical form
// ends the key, after the last '?': forward that, so that what is fetched is
// what is keyed. It allocates nothing when dst has room.
func (c *Cache) AppendKey(dst, site, path, rawQuery []byte) ([]byte, error) {
	dst = append(dst, site...)
	dst = append(dst, '|')
	dst = strconv.AppendUint(dst, c.generation(site).Load(), 10)
	dst = append(dst, '|')
	dst = append(dst, path...)
	return target.AppendCanonicalQuery(append(dst, '?'), rawQuery)
}

// Get returns the entry stored under key.
func (c *Cache) Get(key []byte) (*Entry, bool) {
	e, ok := c.c.Get(b2s(key))
	if ok {
		c.hits.Add(1)
	} else {
		c.misses.Add(1)
	}
	return e, ok
}

// Stored is Get without counting a hit or a miss: a second look after a
// Get that missed.
func (c *Cache) Stored(key []byte) (*Entry, bool) {
	return c.c.Get(b2s(key))
}

// Put stores a response the origin gave for key if it may be cached: a 200
// with a max-age. It returns the entry, or nil when nothing was stored. The
// byte slices are copied.
func (c *Cache) Put(key []byte, status int, contentType, cacheControl, etag, body []byte, now time.Time) *Entry {
	e := &Entry{Status: status, StoredAt: now}
	switch status {
	case 200:
		cc := ParseCacheControl(cacheControl)
		if cc.NoStore || cc.MaxAge <= 0 {
			return nil
		}
		e.Fresh, e.SWR, e.SIE = cc.MaxAge, cc.SWR, cc.SIE
	default:
		return nil
	}
	e.ContentType = bytes.Clone(contentType)
	e.CacheControl = bytes.Clone(cacheControl)
	e.ETag = bytes.Clone(etag)
	if len(etag) > 0 {
		e.Lines = AppendHeaderLine(e.Lines, "Etag", etag)
	}
	e.Lines = AppendHeaderLine(e.Lines, "Cache-Control", cacheControl)
	e.Body = bytes.Clone(body)
	e.compress = len(body) >= c.minGzip
	// The cost counts the compressed copies before they exist, at half the
	// body for both (JSON pages compress to well under a quarter each).
	cost := int64(len(e.Body)+len(key)) + 256
	if e.compress {
		cost += int64(len(e.Body) / 2)
	}
	c.c.SetWithTTL(string(key), e, cost, e.Fresh+max(e.SWR, e.SIE))
	c.c.Wait()
	return e
}

// PutNotFound caches a 404 for NotFoundTTL: the resource's absence, with
// the origin's message.
func (c *Cache) PutNotFound(key []byte, message string, now time.Time) *Entry {
	e := &Entry{Status: 404, StoredAt: now, Fresh: c.notFoundTTL, Message: message}
	c.c.SetWithTTL(string(key), e, int64(len(key)+len(message))+256, e.Fresh)
	c.c.Wait()
	return e
}

var gzipWriters = sync.Pool{New: func() any {
	w, _ := gzip.NewWriterLevel(nil, gzip.DefaultCompression)
	return w
}}

// gzipped compresses b, or returns nil when that saves under a tenth.
func gzipped(b []byte) []byte {
	var buf bytes.Buffer
	buf.Grow(len(b) / 3)
	w := gzipWriters.Get().(*gzip.Writer)
	w.Reset(&buf)
	w.Write(b)
	w.Close()
	gzipWriters.Put(w)
	if buf.Len() > len(b)*9/10 {
		return nil
	}
	return buf.Bytes()
}

// brotlied compresses b, or returns nil when that saves under a tenth.
func brotlied(b []byte) []byte {
	out := fasthttp.AppendBrotliBytesLevel(make([]byte, 0, len(b)/4), b, 5)
	if len(out) > len(b)*9/10 {
		return nil
	}
	return out
}

// Stats returns hits, misses and stale serves since the cache was made.
func (c *Cache) Stats() (hits, misses, stale uint64) {
	return c.hits.Load(), c.misses.Load(), c.stale.Load()
}

// CountStale counts a stale serve.
func (c *Cache) CountStale() { c.stale.Add(1) }

func b2s(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// AppendHeaderLine appends "name: value\r\n", a CR or LF in value written
// as a space (as fasthttp does with the header values it is given).
func AppendHeaderLine(dst []byte, name string, value []byte) []byte {
	dst = append(dst, name...)
	dst = append(dst, ": "...)
	start := len(dst)
	dst = append(dst, value...)
	if bytes.IndexByte(value, '\r') >= 0 || bytes.IndexByte(value, '\n') >= 0 {
		for i := start; i < len(dst); i++ {
			if dst[i] == '\r' || dst[i] == '\n' {
				dst[i] = ' '
			}
		}
	}
	return append(dst, "\r\n"...)
}
