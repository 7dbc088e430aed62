package store_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/listgate/listgate/origin/store"
	"github.com/listgate/listgate/pkg/devdb/devdbtest"
)

// mustOpenAt opens a new database migrated up to version v.
func mustOpenAt(tb testing.TB, v int) *store.DB {
	tb.Helper()
	db := mustOpen(tb, devdbtest.NewDatabase(tb, nil))
	if _, err := db.MigrateTo(context.Background(), v); err != nil {
		tb.Fatal(err)
	}
	return db
}

func mustExec(tb testing.TB, db *store.DB, sql string, args ...any) {
	tb.Helper()
	if _, err := db.Pool.Exec(context.Background(), sql, args...); err != nil {
		tb.Fatalf("%s: %v", sql, err)
	}
}

// Migration 9 deletes the media and clears the agent photos stored, before
// the ingest checked them, with URLs clients may not be given, and tells
// the edges which sites changed.
func TestMigrationDropsUnservableMediaURLs(t *testing.T) {
	ctx := context.Background()
	db := mustOpenAt(t, 8)
	var site, clean string
	for _, dst := range []*string{&site, &clean} {
		if err := db.Pool.QueryRow(ctx, `INSERT INTO sites (name, plan) VALUES ('S', 'starter') RETURNING id`).Scan(dst); err != nil {
			t.Fatal(err)
		}
	}
	var ref, cleanRef int64
	for _, l := range []struct {
		site string
		ref  *int64
	}{{site, &ref}, {clean, &cleanRef}} {
		if err := db.Pool.QueryRow(ctx, `INSERT INTO listings (site_id, agency_id, unique_id, type, status, doc)
			VALUES ($1, 'AG', 'L1', 'residential', 'current', '{}') RETURNING ref`, l.site).Scan(l.ref); err != nil {
			t.Fatal(err)
		}
	}
	urls := map[string]bool{ // url: kept
		"https://cdn.example/a.jpg":         true,
		"HTTP://CDN.example:8080/b.jpg?v=1": true,
		"http://[2001:db8::1]/c.jpg":        true,
		"https://cdn.example":               true,
		"javascript:alert(1)":               false,
		"data:image/png;base64,AAAA":        false,
		"vbscript:msgbox(1)":                false,
		"file:///etc/passwd":                false,
		"8faa9763.jpg":                      false,
		"//cdn.example/d.jpg":               false,
		"https:///e.jpg":                    false,
		"https://:443/f.jpg":                false,
		"https://user:pw@cdn.example/g.jpg": false,
		"https://cdn.example/h\n.jpg":       false,
	}
	slot := 0
	for u := range urls {
		slot++
		mustExec(t, db, `INSERT INTO media (site_id, listing_ref, kind, slot, url, position) VALUES ($1, $2, 'image', $3, $4, 1)`,
			site, ref, fmt.Sprint(slot), u)
	}
	mustExec(t, db, `INSERT INTO media (site_id, listing_ref, kind, slot, url, position) VALUES ($1, $2, 'image', 'm', 'https://cdn.example/x.jpg', 1)`,
		clean, cleanRef)
	mustExec(t, db, `INSERT INTO agents (site_id, name, photo_url) VALUES ($1, 'Bad', 'javascript:x'), ($1, 'Good', 'https://cdn.example/p.jpg'), ($2, 'None', NULL)`,
		site, clean)

	if _, err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	rows, _ := db.Pool.Query(ctx, `SELECT url FROM media WHERE site_id = $1`, site)
	kept := map[string]bool{}
	for rows.Next() {
		var u string
		if err := rows.Scan(&u); err != nil {
			t.Fatal(err)
		}
		kept[u] = true
	}
	for u, want := range urls {
		if kept[u] != want {
			t.Errorf("%q kept %v, want %v", u, kept[u], want)
		}
	}
	var photos []*string
	rows, _ = db.Pool.Query(ctx, `SELECT photo_url FROM agents WHERE site_id = $1 ORDER BY name`, site)
	for rows.Next() {
		var p *string
		if err := rows.Scan(&p); err != nil {
			t.Fatal(err)
		}
		photos = append(photos, p)
	}
	if len(photos) != 2 || photos[0] != nil || photos[1] == nil || *photos[1] != "https://cdn.example/p.jpg" {
		t.Errorf("agent photos %v", photos)
	}
	var changed []string
	rows, _ = db.Pool.Query(ctx, `SELECT site_id::text FROM events WHERE type = 'site.content_changed'`)
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		changed = append(changed, s)
	}
	if !reflect.DeepEqual(changed, []string{site}) {
		t.Errorf("content_changed events for %v, want only %s", changed, site)
	}
}

// Migration 20 counts the listings stored before it (listing_facets), and
// the counts follow the listings' changes from there.
func TestMigrationCountsListings(t *testing.T) {
	ctx := context.Background()
	db := mustOpenAt(t, 19)
	var site string
	if err := db.Pool.QueryRow(ctx, `INSERT INTO sites (name, plan) VALUES ('S', 'starter') RETURNING id`).Scan(&site); err != nil {
		t.Fatal(err)
	}
	mustExec(t, db, `INSERT INTO listings (site_id, agency_id, unique_id, type, status, suburb, bedrooms, price, price_shown, doc)
		SELECT $1, 'AG', 'L' || i, (ARRAY['residential', 'rental'])[1 + i % 2], (ARRAY['current', 'sold', 'deleted'])[1 + i % 3],
			(ARRAY['Kew', 'Carlton', NULL])[1 + i % 3], i % 5, 100000 * i, i % 4 <> 0, '{}'
		FROM generate_series(1, 60) i`, site)
	if _, err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	mustExec(t, db, `UPDATE listings SET status = 'current' WHERE site_id = $1 AND status = 'sold' AND bedrooms = 2`, site)
	// Counted again from the listings: the same counts.
	var differ int
	if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM (
			(SELECT status, field, value, sum(n) FROM listing_facets WHERE site_id = $1 GROUP BY 1, 2, 3 HAVING sum(n) <> 0
			 EXCEPT ALL
			 SELECT v.status, v.field, v.value, sum(v.n) FROM listings r, listing_facet_values(r, 1) v WHERE r.site_id = $1 GROUP BY 1, 2, 3)
			UNION ALL
			(SELECT v.status, v.field, v.value, sum(v.n) FROM listings r, listing_facet_values(r, 1) v WHERE r.site_id = $1 GROUP BY 1, 2, 3
			 EXCEPT ALL
			 SELECT status, field, value, sum(n) FROM listing_facets WHERE site_id = $1 GROUP BY 1, 2, 3 HAVING sum(n) <> 0)) d`,
		site).Scan(&differ); err != nil || differ != 0 {
		t.Errorf("%d counts differ from the listings' (%v)", differ, err)
	}
	var current int
	if err := db.Pool.QueryRow(ctx, `SELECT sum(n) FROM listing_facets WHERE site_id = $1 AND status = 'current' AND field = 'type'`,
		site).Scan(&current); err != nil || current != 20+4 {
		t.Errorf("current listings counted: %d, want 24 (%v)", current, err)
	}
}
