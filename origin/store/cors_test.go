package store_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	json "github.com/goccy/go-json"

	"github.com/listgate/listgate/origin/store"
	"github.com/listgate/listgate/origin/store/storetest"
	"github.com/listgate/listgate/pkg/apierror"
	"github.com/listgate/listgate/pkg/cors"
	"github.com/listgate/listgate/pkg/internalapi"
	"github.com/listgate/listgate/pkg/model"
)

// corsEvents returns the data of the site's site.cors_changed events, in
// order.
func corsEvents(tb testing.TB, db *store.DB, siteID string) []internalapi.SiteCORS {
	tb.Helper()
	rows, _ := db.Pool.Query(context.Background(), `SELECT payload::text FROM events
		WHERE type = $1 AND site_id = $2 ORDER BY id`, store.EventCORSChanged, siteID)
	var out []internalapi.SiteCORS
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			tb.Fatal(err)
		}
		var sc internalapi.SiteCORS
		if err := json.Unmarshal([]byte(p), &sc); err != nil {
			tb.Fatalf("event payload %s: %v", p, err)
		}
		out = append(out, sc)
	}
	if err := rows.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}

func TestSetCORS(t *testing.T) {
	ctx := context.Background()
	db := storetest.NewDB(t)
	s := mustSite(t, db, model.Starter)
	other := mustSite(t, db, model.Starter)
	if store.EventCORSChanged != internalapi.EventCORSChanged {
		t.Fatalf("store.EventCORSChanged %q, the edge reads %q", store.EventCORSChanged, internalapi.EventCORSChanged)
	}
	if s.CORSOrigins == nil || len(s.CORSOrigins) != 0 {
		t.Fatalf("new site's origins %#v, want []", s.CORSOrigins)
	}

	got, err := db.SetCORS(ctx, s.ID, []string{"https://Bayside.Example/", " http://localhost:3000 ", "https://bayside.example:443"})
	want := []string{"https://bayside.example", "http://localhost:3000"}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("SetCORS = %q, %v; want %q", got, err, want)
	}
	site, err := db.GetSite(ctx, s.ID)
	if err != nil || !reflect.DeepEqual(site.CORSOrigins, want) {
		t.Fatalf("GetSite after SetCORS: %q, %v", site.CORSOrigins, err)
	}
	sites, err := db.ListSites(ctx)
	if err != nil || len(sites) != 2 || !reflect.DeepEqual(sites[0].CORSOrigins, want) || len(sites[1].CORSOrigins) != 0 ||
		sites[1].CORSOrigins == nil {
		t.Fatalf("ListSites: %+v, %v", sites, err)
	}
	// The event, written with the change, names the site in its stored form
	// whatever form the caller gave.
	if _, err := db.SetCORS(ctx, strings.ToUpper(s.ID), nil); err != nil {
		t.Fatal(err)
	}
	events := corsEvents(t, db, s.ID)
	wantEvents := []internalapi.SiteCORS{{SiteID: s.ID, Origins: want}, {SiteID: s.ID, Origins: []string{}}}
	if !reflect.DeepEqual(events, wantEvents) {
		t.Fatalf("events %+v, want %+v", events, wantEvents)
	}
	var raw string
	_ = db.Pool.QueryRow(ctx, `SELECT payload::text FROM events WHERE type = $1 ORDER BY id DESC LIMIT 1`,
		store.EventCORSChanged).Scan(&raw)
	if !strings.Contains(raw, `"origins": []`) {
		t.Errorf("a cleared list's event %s, want origins []", raw)
	}
	if site, _ := db.GetSite(ctx, s.ID); site.CORSOrigins == nil || len(site.CORSOrigins) != 0 {
		t.Errorf("cleared: %#v", site.CORSOrigins)
	}

	tooMany := make([]string, cors.MaxOrigins+1)
	for i := range tooMany {
		tooMany[i] = fmt.Sprintf("https://s%d.example", i)
	}
	if got, err := db.SetCORS(ctx, s.ID, tooMany[:cors.MaxOrigins]); err != nil || len(got) != cors.MaxOrigins {
		t.Fatalf("%d origins: %d, %v", cors.MaxOrigins, len(got), err)
	}
	before := len(corsEvents(t, db, s.ID))
	for name, origins := range map[string][]string{
		"wildcard":   {"https://*.bayside.example"},
		"star":       {"*"},
		"path":       {"https://bayside.example/app"},
		"no scheme":  {"bayside.example"},
		"one bad":    {"https://ok.example", "ftp://bayside.example"},
		"too many":   tooMany,
		"empty line": {""},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := db.SetCORS(ctx, s.ID, origins)
			ae, ok := errors.AsType[*apierror.Error](err)
			if !ok || ae.Code != apierror.CodeValidationError || ae.Details["origins"] == "" {
				t.Fatalf("err = %v, want VALIDATION_ERROR on origins", err)
			}
		})
	}
	if site, _ := db.GetSite(ctx, s.ID); len(site.CORSOrigins) != cors.MaxOrigins || len(corsEvents(t, db, s.ID)) != before {
		t.Errorf("a refused list changed the site (%d origins) or wrote an event", len(site.CORSOrigins))
	}
	for _, id := range []string{"not-a-uuid", "6f1c2a8e-0000-4000-8000-000000000000", ""} {
		if _, err := db.SetCORS(ctx, id, []string{"https://a.example"}); apierror.CodeOf(err) != apierror.CodeNotFound {
			t.Errorf("SetCORS(%q) = %v, want NOT_FOUND", id, err)
		}
	}
	if o, _ := db.GetSite(ctx, other.ID); len(o.CORSOrigins) != 0 || len(corsEvents(t, db, other.ID)) != 0 {
		t.Errorf("the other site changed: %q", o.CORSOrigins)
	}
}

// Migration 10 gives existing sites no origins and lets the outbox hold
// site.cors_changed events.
func TestMigrationSiteCORS(t *testing.T) {
	ctx := context.Background()
	db := mustOpenAt(t, 9)
	var site string
	if err := db.Pool.QueryRow(ctx, `INSERT INTO sites (name, plan) VALUES ('S', 'starter') RETURNING id`).Scan(&site); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Pool.Exec(ctx, `INSERT INTO events (site_id, type) VALUES ($1, 'site.cors_changed')`, site); err == nil {
		t.Fatal("version 9 accepts site.cors_changed")
	}
	if _, err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	s, err := db.GetSite(ctx, site)
	if err != nil || s.CORSOrigins == nil || len(s.CORSOrigins) != 0 {
		t.Fatalf("existing site after migrating: %#v, %v", s.CORSOrigins, err)
	}
	mustExec(t, db, `INSERT INTO events (site_id, type) VALUES ($1, 'site.cors_changed')`, site)
	for _, typ := range []string{"key.revoked", "key.changed", "site.plan_changed", "site.content_changed"} {
		mustExec(t, db, `INSERT INTO events (site_id, type) VALUES ($1, $2)`, site, typ)
	}
	if _, err := db.Pool.Exec(ctx, `INSERT INTO events (site_id, type) VALUES ($1, 'site.exploded')`, site); err == nil {
		t.Error("an unknown event type accepted")
	}
	if _, err := db.Pool.Exec(ctx, `UPDATE sites SET cors_origins = array_fill('https://a.example'::text, ARRAY[21]) WHERE id = $1`,
		site); err == nil {
		t.Error("21 origins accepted")
	}
	if _, err := db.Pool.Exec(ctx, `UPDATE sites SET cors_origins = NULL WHERE id = $1`, site); err == nil {
		t.Error("NULL origins accepted")
	}
}
