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

// TestUsageRollup: every report adds to the minutes and to their UTC hour
// in the same statement; a report with an id is applied once however many
// times it is sent; buckets sum the hours.
func TestUsageRollup(t *testing.T) {
	ctx := context.Background()
	db := storetest.NewDB(t)
	a := mustSite(t, db, model.Starter)
	h := time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)
	// A minute given in another zone lands in its UTC hour.
	kolkata, err := time.LoadLocation("Asia/Kolkata")
	if err != nil {
		t.Fatal(err)
	}
	report := []store.UsageCount{
		{SiteID: a.ID, Minute: h.Add(5 * time.Minute), Requests: 5},
		{SiteID: a.ID, Minute: h.Add(59 * time.Minute).In(kolkata), Requests: 2},
		{SiteID: a.ID, Minute: h.Add(60 * time.Minute), Requests: 1},
	}
	const id = "6f1c1d57-7a0e-4c35-9a0c-1f6a1b0c2d3e"
	for i := range 3 { // sent three times: applied once
		applied, err := db.AddUsageReport(ctx, id, report)
		if err != nil || applied != (i == 0) {
			t.Fatalf("send %d: applied %v, %v", i, applied, err)
		}
	}
	// Without an id, reports add up (as before ids).
	if err := db.AddUsage(ctx, report[:1]); err != nil {
		t.Fatal(err)
	}
	hours := func() map[string]int64 {
		rows, err := db.Pool.Query(ctx, `SELECT hour, requests FROM usage_hours WHERE site_id = $1`, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		out := map[string]int64{}
		for rows.Next() {
			var hr time.Time
			var n int64
			if err := rows.Scan(&hr, &n); err != nil {
				t.Fatal(err)
			}
			out[hr.UTC().Format("15:04")] = n
		}
		return out
	}
	if got := hours(); len(got) != 2 || got["10:00"] != 12 || got["11:00"] != 1 {
		t.Fatalf("hours %v, want 10:00 12, 11:00 1", got)
	}
	var minutes int64
	if err := db.Pool.QueryRow(ctx, `SELECT sum(requests) FROM usage_minutes WHERE site_id = $1`, a.ID).Scan(&minutes); err != nil || minutes != 13 {
		t.Fatalf("minutes sum %d, %v; want 13 (the hours' sum)", minutes, err)
	}
	// The hours outlive the minutes' sweep.
	if _, err := db.Sweep(ctx, h.Add(72*time.Hour), 48*time.Hour); err != nil {
		t.Fatal(err)
	}
	if got := hours(); got["10:00"] != 12 {
		t.Fatalf("after the sweep: %v", got)
	}
	buckets, err := db.UsageBuckets(ctx, a.ID, []time.Time{h.Add(-time.Hour), h, h.Add(time.Hour)}, h.Add(2*time.Hour))
	if err != nil || len(buckets) != 3 || buckets[0] != 0 || buckets[1] != 12 || buckets[2] != 1 {
		t.Fatalf("buckets %v, %v", buckets, err)
	}
	if _, err := db.UsageBuckets(ctx, "not-a-uuid", []time.Time{h}, h.Add(time.Hour)); apierror.CodeOf(err) != apierror.CodeNotFound {
		t.Fatalf("bad site: %v", err)
	}
	if _, err := db.AddUsageReport(ctx, "not-a-uuid", report); apierror.CodeOf(err) != apierror.CodeValidationError {
		t.Fatalf("bad report id: %v", err)
	}
	// Report ids are forgotten after UsageReportRetention; hours after
	// UsageHourRetention.
	swept, err := db.Sweep(ctx, time.Now().Add(store.UsageHourRetention+time.Hour), 48*time.Hour)
	if err != nil || swept.UsageReports != 1 || swept.UsageHours != 2 {
		t.Fatalf("swept %+v, %v", swept, err)
	}
}

// BenchmarkUsageBuckets: the dashboard's 12 months of a site with a year
// of hourly usage (and another site's beside it).
func BenchmarkUsageBuckets(b *testing.B) {
	ctx := context.Background()
	db := storetest.NewDB(b)
	end := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	var starts []time.Time
	for i := 12; i > 0; i-- {
		starts = append(starts, end.AddDate(0, -i, 0))
	}
	var site string
	for range 2 {
		s := mustSite(b, db, model.Starter)
		site = s.ID
		var counts []store.UsageCount
		for h := end.AddDate(-1, 0, 0); h.Before(end); h = h.Add(time.Hour) {
			counts = append(counts, store.UsageCount{SiteID: s.ID, Minute: h, Requests: 100})
		}
		if err := db.AddUsage(ctx, counts); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := db.Pool.Exec(ctx, `ANALYZE usage_hours`); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		got, err := db.UsageBuckets(ctx, site, starts, end)
		if err != nil || len(got) != 12 || got[11] != 100*31*24 {
			b.Fatalf("%v %v", got, err)
		}
	}
}
