package views

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/listgate/listgate/origin/api"
	"github.com/listgate/listgate/origin/store"
	"github.com/listgate/listgate/origin/store/storetest"
	"github.com/listgate/listgate/pkg/devdb/devdbtest"
	"github.com/listgate/listgate/pkg/model"
)

func TestMain(m *testing.M) { os.Exit(devdbtest.RunTests(m)) }

const token = "0123456789abcdef0123456789abcdef-views"

func TestReport(t *testing.T) {
	ctx := context.Background()
	db := storetest.NewDB(t)
	now := time.Now()
	srv := api.New(api.Config{Ready: db.Ping, Unavailable: store.IsUnavailable, Metrics: db.WritePoolMetrics,
		InternalToken: token, Log: slog.New(slog.DiscardHandler),
		Mounts: []api.Mounter{New(Config{DB: db, Log: slog.New(slog.DiscardHandler), Now: func() time.Time { return now }})}})
	h := srv.Handler()
	post := func(body string, withToken bool) (int, string) {
		req := httptest.NewRequest("POST", Path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if withToken {
			req.Header.Set(api.HeaderInternalToken, token)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		b, _ := io.ReadAll(rec.Result().Body)
		return rec.Code, string(b)
	}
	site, err := db.CreateSite(ctx, "Views Realty", model.Starter, "")
	if err != nil {
		t.Fatal(err)
	}
	var ref int64
	if err := db.Pool.QueryRow(ctx, `INSERT INTO listings (site_id, agency_id, unique_id, type, status)
		VALUES ($1, 'A', 'U', 'residential', 'current') RETURNING ref`, site.ID).Scan(&ref); err != nil {
		t.Fatal(err)
	}
	today := now.UTC().Format(time.DateOnly)
	report := func(batch string, views, visitors int) string {
		return fmt.Sprintf(`{"batch_id": %q, "edge_id": "edge-a", "counts": [{"site_id": %q, "listing_ref": %d, "day": %q, "views": %d, "visitors": %d}]}`,
			batch, site.ID, ref, today, views, visitors)
	}
	const b1 = "6f1c2a8e-0000-4000-8000-000000000001"
	if code, body := post(report(b1, 5, 2), false); code != 401 {
		t.Fatalf("without the token: %d %s", code, body)
	}
	for range 3 { // the same report, retried: counted once
		if code, body := post(report(b1, 5, 2), true); code != 204 {
			t.Fatalf("report: %d %s", code, body)
		}
	}
	if code, body := post(report("6f1c2a8e-0000-4000-8000-000000000002", 1, 1), true); code != 204 {
		t.Fatalf("second report: %d %s", code, body)
	}
	var views, visitors int64
	if err := db.Pool.QueryRow(ctx, `SELECT views, visitors FROM listing_views WHERE site_id = $1`, site.ID).Scan(&views, &visitors); err != nil || views != 6 || visitors != 3 {
		t.Errorf("stored %d views, %d visitors (%v); want 6, 3", views, visitors, err)
	}

	old := now.UTC().AddDate(0, 0, -5).Format(time.DateOnly)
	for name, body := range map[string]string{
		"not json":         `{`,
		"trailing":         report(b1, 1, 1) + `{}`,
		"unknown field":    `{"batch_id": "6f1c2a8e-0000-4000-8000-000000000003", "edge_id": "e", "counts": [], "x": 1}`,
		"no batch":         `{"edge_id": "e", "counts": []}`,
		"batch not uuid":   `{"batch_id": "1", "edge_id": "e", "counts": []}`,
		"no edge":          `{"batch_id": "6f1c2a8e-0000-4000-8000-000000000003", "counts": []}`,
		"no counts":        `{"batch_id": "6f1c2a8e-0000-4000-8000-000000000003", "edge_id": "e"}`,
		"visitors > views": report("6f1c2a8e-0000-4000-8000-000000000003", 1, 2),
		"negative":         report("6f1c2a8e-0000-4000-8000-000000000003", -1, 0),
		"ref zero":         strings.Replace(report("6f1c2a8e-0000-4000-8000-000000000003", 1, 1), fmt.Sprintf(`"listing_ref": %d`, ref), `"listing_ref": 0`, 1),
		"old day":          strings.Replace(report("6f1c2a8e-0000-4000-8000-000000000003", 1, 1), today, old, 1),
		"site not uuid":    strings.Replace(report("6f1c2a8e-0000-4000-8000-000000000003", 1, 1), site.ID, "x", 1),
	} {
		if code, resp := post(body, true); code != 422 {
			t.Errorf("%s: %d %s, want 422", name, code, resp)
		}
	}
	big := `{"batch_id": "6f1c2a8e-0000-4000-8000-000000000004", "edge_id": "e", "counts": [` + strings.Repeat(`{}, `, MaxBody/4) + `{}]}`
	if code, _ := post(big, true); code != 413 {
		t.Errorf("oversized report: %d, want 413", code)
	}
	if err := db.Pool.QueryRow(ctx, `SELECT views FROM listing_views WHERE site_id = $1`, site.ID).Scan(&views); err != nil || views != 6 {
		t.Errorf("a refused report changed the counts: %d", views)
	}
}

func FuzzDecode(f *testing.F) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	f.Add(`{"batch_id": "6f1c2a8e-0000-4000-8000-000000000001", "edge_id": "e", "counts": [{"site_id": "6f1c2a8e-0000-4000-8000-000000000001", "listing_ref": 1, "day": "2026-11-26", "views": 2, "visitors": 1}]}`)
	f.Add(`{"batch_id": null}`)
	f.Add(`[]`)
	f.Fuzz(func(t *testing.T, body string) {
		b, err := Decode(strings.NewReader(body), now)
		if err != nil {
			return
		}
		for _, c := range b.Counts {
			if c.ListingRef <= 0 || c.Views < 0 || c.Visitors < 0 || c.Visitors > c.Views || c.Views > MaxViews {
				t.Fatalf("accepted %+v", c)
			}
		}
	})
}
