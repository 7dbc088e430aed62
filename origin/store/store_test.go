package store_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/listgate/listgate/origin/store"
	"github.com/listgate/listgate/origin/store/storetest"
	"github.com/listgate/listgate/pkg/apierror"
	"github.com/listgate/listgate/pkg/apikey"
	"github.com/listgate/listgate/pkg/devdb/devdbtest"
	"github.com/listgate/listgate/pkg/model"
)

func TestMain(m *testing.M) { os.Exit(devdbtest.RunTests(m)) }

func mustOpen(tb testing.TB, url string) *store.DB {
	tb.Helper()
	db, err := store.Open(context.Background(), url, store.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(db.Close)
	return db
}

func mustSite(tb testing.TB, db *store.DB, plan model.Plan) store.Site {
	tb.Helper()
	s, err := db.CreateSite(context.Background(), "Test Realty", plan, "")
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

func TestMigrateEmptyDatabase(t *testing.T) {
	ctx := context.Background()
	db := mustOpen(t, devdbtest.NewDatabase(t, nil))
	ms, err := store.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	applied, err := db.Migrate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(applied) != len(ms) || len(ms) == 0 {
		t.Fatalf("applied %d of %d migrations", len(applied), len(ms))
	}
	v, err := db.SchemaVersion(ctx)
	if err != nil || v != len(ms) {
		t.Fatalf("schema version %d, %v; want %d", v, err, len(ms))
	}
	again, err := db.Migrate(ctx)
	if err != nil || len(again) != 0 {
		t.Fatalf("second migrate applied %d, %v; want none", len(again), err)
	}
	for _, table := range []string{"sites", "api_keys", "agents", "listings", "listing_agents", "media",
		"inspections", "leads", "lead_submissions", "lead_assignments", "idempotency_keys", "pairings",
		"oauth_clients", "oauth_tokens", "feed_jobs", "events"} {
		var exists bool
		if err := db.Pool.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, table).Scan(&exists); err != nil || !exists {
			t.Errorf("table %s missing after migrate (%v)", table, err)
		}
	}
	// Every tenant table's primary key leads with site_id.
	rows, _ := db.Pool.Query(ctx, `
		SELECT c.conrelid::regclass::text, a.attname
		FROM pg_constraint c JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]
		WHERE c.contype = 'p' AND c.connamespace = 'public'::regnamespace`)
	for rows.Next() {
		var table, first string
		if err := rows.Scan(&table, &first); err != nil {
			t.Fatal(err)
		}
		switch table {
		case "sites", "pairings", "oauth_tokens", "events", "schema_migrations":
			continue // not keyed by a site, or the site itself
		case "accounts", "users", "dashboard_sessions":
			continue // the dashboard's: above sites (an account owns sites)
		case "limit_windows":
			continue // abuse limits per client IP or e-mail, before any site
		case "view_batches", "usage_reports":
			continue // the ids of edges' view and usage reports, which span sites (like events)
		}
		if first != "site_id" {
			t.Errorf("primary key of %s starts with %s, want site_id", table, first)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
}

func TestMigrateRefusesChangedHistory(t *testing.T) {
	ctx := context.Background()
	db := storetest.NewDB(t)
	if _, err := db.Pool.Exec(ctx, `UPDATE schema_migrations SET sum = 'x' WHERE version = 1`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Migrate(ctx); err == nil || !strings.Contains(err.Error(), "changed") {
		t.Fatalf("migrate over a changed migration: %v", err)
	}
	if _, err := db.Pool.Exec(ctx, `INSERT INTO schema_migrations (version, name, sum) VALUES (9999, 'future', '')`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Migrate(ctx); err == nil || !strings.Contains(err.Error(), "newer") {
		t.Fatalf("migrate under a newer schema: %v", err)
	}
}

func TestSchemaConstraints(t *testing.T) {
	ctx := context.Background()
	db := storetest.NewDB(t)
	site := mustSite(t, db, model.Starter)
	for name, sql := range map[string]string{
		"unknown plan":     `INSERT INTO sites (name, plan) VALUES ('x', 'gold')`,
		"blank site name":  `INSERT INTO sites (name, plan) VALUES ('  ', 'starter')`,
		"unknown scope":    `INSERT INTO api_keys (site_id, key_hash, hint, name, scopes, source) VALUES ($1, sha256('a'), 'abcd', 'k', '{admin}', 'cli')`,
		"no scopes":        `INSERT INTO api_keys (site_id, key_hash, hint, name, scopes, source) VALUES ($1, sha256('b'), 'abcd', 'k', '{}', 'cli')`,
		"short hash":       `INSERT INTO api_keys (site_id, key_hash, hint, name, scopes, source) VALUES ($1, 'ab', 'abcd', 'k', '{leads:write}', 'cli')`,
		"lead no contact":  `INSERT INTO leads (site_id, type, priority, name) VALUES ($1, 'general', 'warm', 'Ann')`,
		"lead bad status":  `INSERT INTO leads (site_id, type, priority, status, name, email) VALUES ($1, 'general', 'warm', 'lost', 'Ann', 'a@b.c')`,
		"listing bad type": `INSERT INTO listings (site_id, agency_id, unique_id, type, status) VALUES ($1, 'A', 'U', 'castle', 'current')`,
		"event bad type":   `INSERT INTO events (site_id, type) VALUES ($1, 'site.exploded')`,
	} {
		t.Run(name, func(t *testing.T) {
			args := []any{site.ID}
			if !strings.Contains(sql, "$1") {
				args = nil
			}
			if _, err := db.Pool.Exec(ctx, sql, args...); err == nil {
				t.Errorf("accepted: %s", sql)
			}
		})
	}
	// The key hash is unique across all sites.
	other := mustSite(t, db, model.Starter)
	q := `INSERT INTO api_keys (site_id, key_hash, hint, name, scopes, source) VALUES ($1, sha256('same'), 'abcd', 'k', '{leads:write}', 'cli')`
	if _, err := db.Pool.Exec(ctx, q, site.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Pool.Exec(ctx, q, other.ID); err == nil {
		t.Error("two keys with one hash")
	}
}

func TestSites(t *testing.T) {
	ctx := context.Background()
	db := storetest.NewDB(t)
	s, err := db.CreateSite(ctx, "  Harbour Realty ", model.Professional, "Australia/Perth")
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "Harbour Realty" || s.Plan != model.Professional || s.Timezone != "Australia/Perth" || len(s.ID) != 36 {
		t.Errorf("created %+v", s)
	}
	for name, tc := range map[string]struct {
		name, tz string
		plan     model.Plan
	}{
		"blank name":   {" ", "", model.Starter},
		"bad plan":     {"x", "", "gold"},
		"bad timezone": {"x", "Mars/Olympus", model.Starter},
	} {
		if _, err := db.CreateSite(ctx, tc.name, tc.plan, tc.tz); apierror.CodeOf(err) != apierror.CodeValidationError {
			t.Errorf("%s: err = %v, want VALIDATION_ERROR", name, err)
		}
	}
	if err := db.SetPlan(ctx, s.ID, model.Enterprise); err != nil {
		t.Fatal(err)
	}
	got, err := db.GetSite(ctx, s.ID)
	if err != nil || got.Plan != model.Enterprise {
		t.Fatalf("after set-plan: %+v, %v", got, err)
	}
	var events int
	db.Pool.QueryRow(ctx, `SELECT count(*) FROM events WHERE type = 'site.plan_changed' AND site_id = $1 AND payload->>'plan' = 'enterprise'`, s.ID).Scan(&events)
	if events != 1 {
		t.Errorf("%d plan_changed events, want 1", events)
	}
	for _, id := range []string{"not-a-uuid", "6f1c2a8e-0000-4000-8000-000000000000"} {
		if _, err := db.GetSite(ctx, id); apierror.CodeOf(err) != apierror.CodeNotFound {
			t.Errorf("GetSite(%q) = %v, want NOT_FOUND", id, err)
		}
		if err := db.SetPlan(ctx, id, model.Starter); apierror.CodeOf(err) != apierror.CodeNotFound {
			t.Errorf("SetPlan(%q) = %v, want NOT_FOUND", id, err)
		}
	}
}

func TestKeysLifecycle(t *testing.T) {
	ctx := context.Background()
	db := storetest.NewDB(t)
	site := mustSite(t, db, model.Starter)
	k, secret, err := db.CreateKey(ctx, store.NewKey{SiteID: site.ID, Name: "WordPress", Scopes: apikey.ReadOnly, Source: store.SourceCLI})
	if err != nil {
		t.Fatal(err)
	}
	if err := apikey.Check(secret); err != nil {
		t.Fatalf("secret %q is not a valid key: %v", secret, err)
	}
	if k.Hint != secret[36:] || k.Scopes != apikey.ReadOnly {
		t.Errorf("key record %+v", k)
	}
	// Only the hash is stored: the secret appears in no column.
	var leaked bool
	db.Pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM api_keys k WHERE position($1 in k::text) > 0)`, secret).Scan(&leaked)
	if leaked {
		t.Fatal("the secret is stored in clear")
	}
	got, err := db.KeyByHash(ctx, apikey.Hash(secret))
	if err != nil || got.ID != k.ID || got.SiteID != site.ID || got.RevokedAt != nil {
		t.Fatalf("KeyByHash = %+v, %v", got, err)
	}
	revoked, err := db.RevokeKey(ctx, k.ID)
	if err != nil || revoked.RevokedAt == nil {
		t.Fatalf("revoke: %+v, %v", revoked, err)
	}
	if _, err := db.RevokeKey(ctx, k.ID); err != nil {
		t.Fatalf("second revoke: %v", err)
	}
	var events int
	db.Pool.QueryRow(ctx, `SELECT count(*) FROM events WHERE type = 'key.revoked' AND payload->>'key_id' = $1`, k.ID).Scan(&events)
	if events != 1 {
		t.Errorf("%d key.revoked events, want exactly 1", events)
	}
	keys, err := db.ListKeys(ctx, site.ID)
	if err != nil || len(keys) != 1 || keys[0].RevokedAt == nil {
		t.Fatalf("ListKeys = %+v, %v", keys, err)
	}
	for name, nk := range map[string]store.NewKey{
		"no scopes":    {SiteID: site.ID, Name: "x", Source: store.SourceCLI},
		"blank name":   {SiteID: site.ID, Name: " ", Scopes: apikey.LeadsWrite, Source: store.SourceCLI},
		"unknown site": {SiteID: "6f1c2a8e-0000-4000-8000-000000000000", Name: "x", Scopes: apikey.LeadsWrite, Source: store.SourceCLI},
	} {
		if _, _, err := db.CreateKey(ctx, nk); err == nil {
			t.Errorf("%s: created", name)
		} else if var_ := new(*apierror.Error); !errors.As(err, var_) {
			t.Errorf("%s: %v is not an API error", name, err)
		}
	}
	if _, err := db.RevokeKey(ctx, "nope"); apierror.CodeOf(err) != apierror.CodeNotFound {
		t.Errorf("revoke unknown: %v", err)
	}
}
