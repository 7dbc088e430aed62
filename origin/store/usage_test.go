package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/listgate/listgate/origin/store"
	"github.com/listgate/listgate/origin/store/storetest"
	"github.com/listgate/listgate/pkg/apierror"
	"github.com/listgate/listgate/pkg/model"
)

func TestUsage(t *testing.T) {
	ctx := context.Background()
	db := storetest.NewDB(t)
	a, b := mustSite(t, db, model.Starter), mustSite(t, db, model.Starter)
	now := time.Date(2026, 3, 4, 10, 30, 42, 0, time.UTC)
	m := now.Truncate(time.Minute)
	unknown := "00000000-0000-4000-8000-000000000000"

	// The same site and minute twice in one batch, and again in a second
	// call: they add up. An unknown site is skipped.
	if err := db.AddUsage(ctx, []store.UsageCount{
		{SiteID: a.ID, Minute: m, Requests: 5},
		{SiteID: a.ID, Minute: m, Requests: 2},
		{SiteID: a.ID, Minute: m.Add(-59 * time.Minute), Requests: 1},
		{SiteID: a.ID, Minute: m.Add(-60 * time.Minute), Requests: 100}, // outside the hour
		{SiteID: b.ID, Minute: m.Add(-time.Minute), Requests: 9},
		{SiteID: unknown, Minute: m, Requests: 3},
	}); err != nil {
		t.Fatal(err)
	}
	if err := db.AddUsage(ctx, []store.UsageCount{{SiteID: a.ID, Minute: m, Requests: 10}}); err != nil {
		t.Fatal(err)
	}
	var rows int
	if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM usage_minutes WHERE site_id = $1`, unknown).Scan(&rows); err != nil || rows != 0 {
		t.Fatalf("unknown site: %d rows, %v", rows, err)
	}

	got, err := db.UsageLastHour(ctx, a.ID, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 60 {
		t.Fatalf("%d minutes, want 60", len(got))
	}
	var total int64
	for i, c := range got {
		if want := m.Add(time.Duration(i-59) * time.Minute); !c.Minute.Equal(want) || c.Minute.Location() != time.UTC {
			t.Errorf("minute %d is %v, want %v", i, c.Minute, want)
		}
		if c.SiteID != a.ID {
			t.Errorf("minute %d: site %s", i, c.SiteID)
		}
		total += c.Requests
	}
	if got[0].Requests != 1 || got[59].Requests != 17 || got[58].Requests != 0 || total != 18 {
		t.Fatalf("first %d, last %d, 58th %d, total %d; want 1, 17, 0, 18",
			got[0].Requests, got[59].Requests, got[58].Requests, total)
	}

	// A site without counts: sixty zeros.
	c := mustSite(t, db, model.Starter)
	empty, err := db.UsageLastHour(ctx, c.ID, now)
	if err != nil || len(empty) != 60 {
		t.Fatalf("%d minutes, %v", len(empty), err)
	}
	for _, u := range empty {
		if u.Requests != 0 {
			t.Fatalf("empty site: %+v", u)
		}
	}
	if _, err := db.UsageLastHour(ctx, "not-a-uuid", now); apierror.CodeOf(err) != apierror.CodeNotFound {
		t.Fatalf("bad id: %v", err)
	}

	// Invalid counts are refused whole.
	for name, bad := range map[string]store.UsageCount{
		"seconds":  {SiteID: a.ID, Minute: now, Requests: 1},
		"negative": {SiteID: a.ID, Minute: m, Requests: -1},
		"bad id":   {SiteID: "x", Minute: m, Requests: 1},
	} {
		if err := db.AddUsage(ctx, []store.UsageCount{bad}); apierror.CodeOf(err) != apierror.CodeValidationError {
			t.Errorf("%s: %v", name, err)
		}
	}

	swept, err := db.Sweep(ctx, m, 59*time.Minute)
	if err != nil || swept.Usage != 1 {
		t.Fatalf("swept %+v, %v; want 1 usage row", swept, err)
	}
	if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM usage_minutes`).Scan(&rows); err != nil || rows != 3 {
		t.Fatalf("%d rows left, %v; want 3", rows, err)
	}
}
