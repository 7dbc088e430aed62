package contract_test

import (
	"context"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"net/netip"
	"os"
	"slices"
	"testing"
	"time"

	json "github.com/goccy/go-json"

	"github.com/listgate/listgate/edge/keycache"
	"github.com/listgate/listgate/edge/upstream"
	"github.com/listgate/listgate/edge/usage"
	edgeviews "github.com/listgate/listgate/edge/views"
	"github.com/listgate/listgate/origin/api"
	"github.com/listgate/listgate/origin/events"
	"github.com/listgate/listgate/origin/introspect"
	"github.com/listgate/listgate/origin/store"
	"github.com/listgate/listgate/origin/store/storetest"
	originusage "github.com/listgate/listgate/origin/usage"
	originviews "github.com/listgate/listgate/origin/views"
	"github.com/listgate/listgate/pkg/apikey"
	"github.com/listgate/listgate/pkg/devdb/devdbtest"
	"github.com/listgate/listgate/pkg/eventstream"
	"github.com/listgate/listgate/pkg/internalapi"
	"github.com/listgate/listgate/pkg/model"
)

func TestMain(m *testing.M) { os.Exit(devdbtest.RunTests(m)) }

const token = "contract-internal-token-0123456789abcdef"

// The edge's clients and the origin's handlers agree on every message of
// the internal API: what the edge reads of an introspection, a site's
// origins and the events is what the origin meant, and the origin takes
// the edge's usage reports.
func TestEdgeAndOriginAgree(t *testing.T) {
	ctx := context.Background()
	db := storetest.NewDB(t)
	log := slog.New(slog.DiscardHandler)
	hub, err := events.New(events.Config{DB: db, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	hctx, stop := context.WithCancel(ctx)
	defer stop()
	go hub.Run(hctx)
	srv := httptest.NewServer(api.New(api.Config{Ready: db.Ping, Unavailable: store.IsUnavailable,
		Metrics: db.WritePoolMetrics, Log: log, InternalToken: token, Mounts: []api.Mounter{
			introspect.New(introspect.Config{DB: db, TTL: 7 * time.Second}), originusage.New(originusage.Config{DB: db}), hub,
			originviews.New(originviews.Config{DB: db, Log: log}),
		}}).Handler())
	defer srv.Close()
	origins, err := upstream.New(upstream.Options{URLs: []string{srv.URL}, InternalToken: token, Log: log})
	if err != nil {
		t.Fatal(err)
	}

	site, err := db.CreateSite(ctx, "Contract Realty", model.Professional, "")
	if err != nil {
		t.Fatal(err)
	}
	allowed := []string{"https://bayside.example", "http://localhost:3000"}
	if _, err := db.SetCORS(ctx, site.ID, allowed); err != nil {
		t.Fatal(err)
	}
	key, secret, err := db.CreateKey(ctx, store.NewKey{SiteID: site.ID, Name: "k", Scopes: apikey.ListingsRead | apikey.AgentsRead,
		Source: store.SourceCLI})
	if err != nil {
		t.Fatal(err)
	}

	t.Run("introspection", func(t *testing.T) {
		introspectKey := keycache.OriginIntrospector(origins, 0)
		info, err := introspectKey(ctx, apikey.Hash(secret))
		want := keycache.Info{Active: true, KeyID: key.ID, SiteID: site.ID, Scopes: apikey.ListingsRead | apikey.AgentsRead,
			Limit: model.Professional.Limit(), CORS: allowed, TTL: 7 * time.Second}
		if err != nil || info.Active != want.Active || info.KeyID != want.KeyID || info.SiteID != want.SiteID ||
			info.Scopes != want.Scopes || info.Limit != want.Limit || !slices.Equal(info.CORS, want.CORS) || info.TTL != want.TTL {
			t.Errorf("the edge read\n%+v, %v\nthe origin meant\n%+v", info, err, want)
		}
		if info, err := introspectKey(ctx, apikey.Hash("lgk_unknown")); err != nil || info.Active {
			t.Errorf("unknown key: %+v %v", info, err)
		}
	})

	t.Run("site origins", func(t *testing.T) {
		fetch := keycache.OriginCORSFetcher(origins, 0)
		got, found, err := fetch(ctx, site.ID)
		if err != nil || !found || !slices.Equal(got, allowed) {
			t.Errorf("site origins: %q %v %v, want %q", got, found, err, allowed)
		}
		if _, found, err := fetch(ctx, "6f1c2a8e-0000-4000-8000-0000000000cc"); err != nil || found {
			t.Errorf("unknown site: found %v, %v", found, err)
		}
	})

	t.Run("usage report", func(t *testing.T) {
		r := usage.New(origins, time.Hour, log)
		now := time.Now().UTC()
		for range 3 {
			r.Count(site.ID, now)
		}
		if err := r.Flush(ctx); err != nil {
			t.Fatalf("the origin refused the edge's report: %v", err)
		}
		counts, err := db.UsageLastHour(ctx, site.ID, now)
		if err != nil {
			t.Fatal(err)
		}
		var total int64
		for _, c := range counts {
			total += c.Requests
		}
		if total != 3 {
			t.Errorf("the origin stored %d requests of the 3 reported (%+v)", total, counts)
		}
	})

	t.Run("view report", func(t *testing.T) {
		var ref int64
		if err := db.Pool.QueryRow(ctx, `INSERT INTO listings (site_id, agency_id, unique_id, type, status)
			VALUES ($1, 'A', 'V', 'residential', 'current') RETURNING ref`, site.ID).Scan(&ref); err != nil {
			t.Fatal(err)
		}
		syd, _ := time.LoadLocation("Australia/Sydney")
		c := edgeviews.New(edgeviews.OriginSender(origins), edgeviews.Options{Interval: time.Hour}, log)
		now := time.Now()
		for i := range 3 {
			c.CountView(site.ID, syd, ref, netip.MustParseAddr("192.0.2.1"), []byte(fmt.Sprint("Mozilla/5.0 Chrome ", i%2)), false, now)
		}
		if err := c.Flush(ctx); err != nil || c.Pending() != 0 {
			t.Fatalf("the origin refused the edge's view report: %v (%d pending)", err, c.Pending())
		}
		var views, visitors int64
		var day time.Time
		if err := db.Pool.QueryRow(ctx, `SELECT views, visitors, day FROM listing_views WHERE site_id = $1 AND listing_ref = $2`,
			site.ID, ref).Scan(&views, &visitors, &day); err != nil {
			t.Fatal(err)
		}
		if views != 3 || visitors != 2 || day.Format(time.DateOnly) != now.In(syd).Format(time.DateOnly) {
			t.Errorf("the origin stored %d views, %d visitors on %s; want 3, 2 on %s", views, visitors, day.Format(time.DateOnly), now.In(syd).Format(time.DateOnly))
		}
	})

	t.Run("events", func(t *testing.T) {
		got := make(chan eventstream.Event, 16)
		sctx, cancel := context.WithCancel(ctx)
		defer cancel()
		stream, err := eventstream.Subscribe(sctx, eventstream.Options{
			Next: func() string { return origins.Pick().URL + internalapi.PathEvents }, InternalToken: token, Log: log,
			OnEvent: func(ev eventstream.Event) { got <- ev }})
		if err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(10 * time.Second); !stream.Connected(); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the edge's stream did not connect")
			}
		}
		if _, err := db.SetCORS(ctx, site.ID, allowed[:1]); err != nil {
			t.Fatal(err)
		}
		if err := db.SetPlan(ctx, site.ID, model.Starter); err != nil {
			t.Fatal(err)
		}
		if _, err := db.RevokeKey(ctx, key.ID); err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for len(seen) < 3 {
			var ev eventstream.Event
			select {
			case ev = <-got:
			case <-time.After(10 * time.Second):
				t.Fatalf("events seen: %v", seen)
			}
			switch ev.Type {
			case internalapi.EventCORSChanged:
				var c internalapi.SiteCORS
				if json.Unmarshal(ev.Data, &c) != nil || c.SiteID != site.ID || !slices.Equal(c.Origins, allowed[:1]) {
					t.Errorf("site.cors_changed: %s", ev.Data)
				}
			case internalapi.EventPlanChanged:
				var p internalapi.PlanChanged
				if json.Unmarshal(ev.Data, &p) != nil || p.SiteID != site.ID || p.Limit != model.Starter.Limit() {
					t.Errorf("site.plan_changed: %s", ev.Data)
				}
			case internalapi.EventKeyRevoked:
				var k internalapi.KeyRevoked
				hash := apikey.Hash(secret)
				if json.Unmarshal(ev.Data, &k) != nil || k.KeyID != key.ID || k.KeyHash != hex.EncodeToString(hash[:]) {
					t.Errorf("key.revoked: %s", ev.Data)
				}
			default:
				continue
			}
			seen[ev.Type] = true
		}
	})
}
