package keycache

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"
)

// siteState is what the edge holds of a site, for every key of it.
type siteState struct {
	limit atomic.Int64
	cors  atomic.Pointer[corsEntry]
}

// corsEntry is a site's allowed origins as last heard, and until when a
// preflight may use them without asking the origin again.
type corsEntry struct {
	origins []string
	until   time.Time
}

type corsFlight struct {
	done    chan struct{}
	origins []string
	found   bool
	err     error
}

// site returns the state of siteID, made on first use: call it only for
// a site the origin vouched for.
func (c *Cache) site(siteID string) *siteState {
	if st, ok := c.sites.Load(siteID); ok {
		return st.(*siteState)
	}
	st, _ := c.sites.LoadOrStore(siteID, new(siteState))
	return st.(*siteState)
}

// SetCORS records a site's allowed browser origins (the site.cors_changed
// event, or an introspection); every cached key of the site and every
// preflight use them from now on.
func (c *Cache) SetCORS(siteID string, origins []string) {
	c.site(siteID).cors.Store(&corsEntry{origins: origins, until: time.Now().Add(c.corsTTL)})
}

// CachedCORS returns a site's allowed origins when the cache holds them
// (ok false: SiteCORS would ask the origin).
func (c *Cache) CachedCORS(siteID string) (origins []string, ok bool) {
	st, found := c.sites.Load(siteID)
	if !found {
		return nil, false
	}
	e := st.(*siteState).cors.Load()
	if e == nil || time.Now().After(e.until) {
		return nil, false
	}
	return e.origins, true
}

// SiteCORS returns a site's allowed origins, from the cache or by asking
// the origin (one call per site at a time). found is false for a site the
// origin does not know; such answers are not cached, so that made-up site
// ids cannot fill the cache: the caller limits who may ask.
func (c *Cache) SiteCORS(ctx context.Context, siteID string) (origins []string, found bool, err error) {
	if o, ok := c.CachedCORS(siteID); ok {
		return o, true, nil
	}
	if c.fetchCORS == nil {
		return nil, false, nil
	}
	c.corsMu.Lock()
	f, ok := c.corsFlights[siteID]
	if !ok {
		f = &corsFlight{done: make(chan struct{})}
		c.corsFlights[siteID] = f
		c.corsMu.Unlock()
		epoch := c.epoch.Load()
		f.origins, f.found, f.err = c.fetchCORS(ctx, siteID)
		if f.err == nil && f.found && c.epoch.Load() == epoch {
			c.SetCORS(siteID, f.origins)
		}
		c.corsMu.Lock()
		delete(c.corsFlights, siteID)
		c.corsMu.Unlock()
		close(f.done)
	} else {
		c.corsMu.Unlock()
		select {
		case <-f.done:
		case <-ctx.Done():
			return nil, false, fmt.Errorf("%w: %v", ErrUnavailable, ctx.Err())
		}
	}
	if f.err != nil {
		return nil, false, fmt.Errorf("%w: %v", ErrUnavailable, f.err)
	}
	return f.origins, f.found, nil
}
