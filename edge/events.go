package main

import (
	"context"
	"log/slog"

	json "github.com/goccy/go-json"

	"github.com/listgate/listgate/edge/keycache"
	"github.com/listgate/listgate/edge/respcache"
	"github.com/listgate/listgate/edge/upstream"
	"github.com/listgate/listgate/pkg/eventstream"
	"github.com/listgate/listgate/pkg/internalapi"
)

// followEvents applies the origin's event stream to the edge's caches until
// ctx ends: revoked and changed keys are dropped, plan changes apply to
// every cached key of the site, and a stream that cannot say what was
// missed purges everything. A site's new browser origins apply to its
// cached keys and preflights at once.
func followEvents(ctx context.Context, origins *upstream.Origins, keys *keycache.Cache, cache *respcache.Cache, log *slog.Logger) (*eventstream.Stream, error) {
	return eventstream.Subscribe(ctx, eventstream.Options{
		Next:          func() string { return origins.Pick().URL + internalapi.PathEvents },
		InternalToken: origins.InternalToken(),
		Wake:          origins.Back(),
		Log:           log,
		OnReset: func() {
			keys.Purge()
			cache.InvalidateAll()
			log.Info("event stream reset: caches purged")
		},
		OnEvent: func(ev eventstream.Event) { applyEvent(ev, keys, cache, log) },
	})
}

func applyEvent(ev eventstream.Event, keys *keycache.Cache, cache *respcache.Cache, log *slog.Logger) {
	switch ev.Type {
	case internalapi.EventContentChanged:
		var c internalapi.ContentChanged
		if err := json.Unmarshal(ev.Data, &c); err != nil || c.SiteID == "" {
			log.Warn("bad content event", "id", ev.ID)
			cache.InvalidateAll()
			return
		}
		cache.Invalidate(c.SiteID)
	case internalapi.EventKeyRevoked, internalapi.EventKeyChanged:
		var k internalapi.KeyRevoked
		if err := json.Unmarshal(ev.Data, &k); err != nil || k.KeyHash == "" {
			keys.Purge() // cannot tell which key: forget them all
			return
		}
		if err := keys.Revoke(k.KeyHash); err != nil {
			log.Warn("bad key event", "id", ev.ID, "err", err)
			keys.Purge()
		}
	case internalapi.EventPlanChanged:
		var p internalapi.PlanChanged
		if err := json.Unmarshal(ev.Data, &p); err != nil || p.SiteID == "" {
			log.Warn("bad plan event", "id", ev.ID)
			keys.Purge()
			return
		}
		keys.SetPlanLimit(p.SiteID, p.Limit)
	case internalapi.EventCORSChanged:
		var c internalapi.SiteCORS
		if err := json.Unmarshal(ev.Data, &c); err != nil || c.SiteID == "" {
			log.Warn("bad site origins event", "id", ev.ID)
			keys.Purge()
			return
		}
		keys.SetCORS(c.SiteID, c.Origins)
	}
}
