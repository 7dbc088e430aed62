package ingest_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/listgate/listgate/origin/ingest"
	"github.com/listgate/listgate/origin/store"
	"github.com/listgate/listgate/origin/store/storetest"
	"github.com/listgate/listgate/pkg/devdb/devdbtest"
	"github.com/listgate/listgate/pkg/model"
	"github.com/listgate/listgate/pkg/reaxml/reaxmlgen"
)

func TestMain(m *testing.M) { os.Exit(devdbtest.RunTests(m)) }

const samples = "../../../shared/testdata/reaxml"

type fixture struct {
	db   *store.DB
	im   *ingest.Importer
	site string
}

func newFixture(tb testing.TB) *fixture {
	tb.Helper()
	return newFixtureOn(tb, storetest.NewDB(tb))
}

// newFixtureOn makes a new site on db.
func newFixtureOn(tb testing.TB, db *store.DB) *fixture {
	tb.Helper()
	s, err := db.CreateSite(context.Background(), "Ingest Realty", model.Professional, "")
	if err != nil {
		tb.Fatal(err)
	}
	return &fixture{db: db, im: ingest.New(db, slog.New(slog.DiscardHandler)), site: s.ID}
}

func (f *fixture) mustImport(tb testing.TB, feed string) ingest.Result {
	tb.Helper()
	res, err := f.im.Import(context.Background(), f.site, strings.NewReader(feed), ingest.Options{})
	if err != nil {
		tb.Fatalf("import: %v (result %+v)", err, res)
	}
	return res
}

// snapshot is every row the site has in the ingest's tables, as JSON.
func (f *fixture) snapshot(tb testing.TB) string {
	tb.Helper()
	var b strings.Builder
	for _, q := range []string{
		`SELECT json_agg(t ORDER BY ref) FROM listings t WHERE site_id = $1`,
		`SELECT json_agg(t ORDER BY id) FROM agents t WHERE site_id = $1`,
		`SELECT json_agg(t ORDER BY listing_ref, position) FROM listing_agents t WHERE site_id = $1`,
		`SELECT json_agg(t ORDER BY id) FROM media t WHERE site_id = $1`,
		`SELECT json_agg(t ORDER BY listing_ref, starts_at) FROM inspections t WHERE site_id = $1`,
		`SELECT json_agg(t ORDER BY id) FROM events t WHERE site_id = $1`,
	} {
		var s *string
		if err := f.db.Pool.QueryRow(context.Background(), q, f.site).Scan(&s); err != nil {
			tb.Fatal(err)
		}
		if s != nil {
			b.WriteString(*s)
		}
		b.WriteString("\n")
	}
	return b.String()
}

func (f *fixture) scalar(tb testing.TB, dst any, q string, args ...any) {
	tb.Helper()
	if err := f.db.Pool.QueryRow(context.Background(), q, append([]any{f.site}, args...)...).Scan(dst); err != nil {
		tb.Fatalf("%s: %v", q, err)
	}
}

// Every sample feed imports without a database error, and importing it a
// second time leaves the database exactly as the first import did. (The
// public samples reuse one agentID/uniqueID across files, so each gets a
// site of its own.)
func TestSampleFeedsTwiceEqualsOnce(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(samples, "*.xml"))
	if len(files) < 10 {
		t.Fatalf("found %d sample feeds in %s", len(files), samples)
	}
	// Listings whose images are named by file (shipped beside the feed, not
	// hosted here) are stored without them, and reported.
	fileImages := map[string]int{"i4ucode_AABBCC_2015-02-15_11-03-51.xml": 2}
	db := storetest.NewDB(t)
	created := 0
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			f := newFixtureOn(t, db)
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			res := f.mustImport(t, string(b))
			skipped := 0
			for _, e := range res.Errors {
				if strings.HasPrefix(e.Message, "listing imported without image m file ") {
					skipped++
					continue
				}
				t.Errorf("listing %s line %d: %s", e.ListingID, e.Line, e.Message)
			}
			if skipped != fileImages[filepath.Base(file)] {
				t.Errorf("%d listings stored without their file images, want %d", skipped, fileImages[filepath.Base(file)])
			}
			created += res.Counts.Created
			once := f.snapshot(t)
			again := f.mustImport(t, string(b))
			if c := again.Counts; c.Created+c.Updated+c.Deleted+c.Errors != 0 {
				t.Errorf("second import: %+v, want nothing changed", c)
			}
			if twice := f.snapshot(t); twice != once {
				t.Errorf("second import changed the database:\nonce:  %.3000s\ntwice: %.3000s", once, twice)
			}
		})
	}
	if created < 25 {
		t.Errorf("created %d listings from %d samples", created, len(files))
	}
}

func TestSampleResidentialDetails(t *testing.T) {
	f := newFixture(t)
	b, err := os.ReadFile(filepath.Join(samples, "reasample_residential.xml"))
	if err != nil {
		t.Fatal(err)
	}
	res := f.mustImport(t, string(b))
	if res.Counts != (ingest.Counts{Created: 3}) {
		t.Fatalf("counts %+v errors %+v", res.Counts, res.Errors)
	}
	var row struct {
		Type, Status, Suburb, State, Headline string
		Price                                 float64
		Bedrooms, Bathrooms                   int
	}
	f.scalar(t, &row.Type, `SELECT type FROM listings WHERE site_id = $1 AND unique_id = 'ABCD1234'`)
	f.db.Pool.QueryRow(context.Background(), `SELECT status, suburb, state, headline, price, bedrooms, bathrooms
		FROM listings WHERE site_id = $1 AND unique_id = 'ABCD1234'`, f.site).
		Scan(&row.Status, &row.Suburb, &row.State, &row.Headline, &row.Price, &row.Bedrooms, &row.Bathrooms)
	if row.Type != "residential" || row.Status != "current" || row.Suburb != "RICHMOND" || row.State != "VIC" ||
		row.Price != 500000 || row.Bedrooms != 4 || row.Bathrooms != 2 || row.Headline != "SHOW STOPPER!!!" {
		t.Errorf("listing row %+v", row)
	}
	var images, floorplans, inspections, agents int
	f.scalar(t, &images, `SELECT count(*) FROM media WHERE site_id = $1 AND kind = 'image'`)
	f.scalar(t, &floorplans, `SELECT count(*) FROM media WHERE site_id = $1 AND kind = 'floorplan'`)
	f.scalar(t, &inspections, `SELECT count(*) FROM inspections WHERE site_id = $1`)
	f.scalar(t, &agents, `SELECT count(*) FROM listing_agents WHERE site_id = $1`)
	if images != 2 || floorplans != 2 || inspections != 2 || agents != 1 {
		t.Errorf("images %d floorplans %d inspections %d agents %d", images, floorplans, inspections, agents)
	}
	var start string
	f.scalar(t, &start, `SELECT to_char(min(starts_at) AT TIME ZONE 'Australia/Sydney', 'YYYY-MM-DD HH24:MI') FROM inspections WHERE site_id = $1`)
	if start != "2009-01-21 11:00" {
		t.Errorf("first inspection starts %s Sydney time, want 2009-01-21 11:00", start)
	}
	var vendor bool
	f.scalar(t, &vendor, `SELECT bool_or(doc::text LIKE '%vendorDetails%') FROM listings WHERE site_id = $1`)
	if vendor {
		t.Error("vendor details stored")
	}
}

const head = `<?xml version="1.0" encoding="UTF-8"?><propertyList date="2024-01-01-10:00:00" username="u" password="p">`

func TestModTimeOrderingAndPartialRecords(t *testing.T) {
	f := newFixture(t)
	f.mustImport(t, head+`<residential modTime="2024-02-01-10:00:00" status="current">
		<agentID>AG</agentID><uniqueID>L1</uniqueID>
		<headline>First headline</headline><description>Long description</description>
		<price display="yes">750000</price>
		<address display="yes"><streetNumber>1</streetNumber><street>Main Rd</street><suburb>Fitzroy</suburb><state>VIC</state><postcode>3065</postcode></address>
		<features><bedrooms>3</bedrooms><pool>yes</pool></features>
	</residential></propertyList>`)

	// Older: skipped.
	res := f.mustImport(t, head+`<residential modTime="2024-01-15-10:00:00"><agentID>AG</agentID><uniqueID>L1</uniqueID>
		<headline>Stale headline</headline></residential></propertyList>`)
	if res.Counts != (ingest.Counts{Skipped: 1}) {
		t.Fatalf("older record: %+v", res.Counts)
	}
	// Newer and partial: headline and one feature change, the rest stays.
	res = f.mustImport(t, head+`<residential modTime="2024-02-02-10:00:00"><agentID>AG</agentID><uniqueID>L1</uniqueID>
		<headline>New headline</headline><features><bathrooms>2</bathrooms></features>
		<address><suburb>Collingwood</suburb></address></residential></propertyList>`)
	if res.Counts != (ingest.Counts{Updated: 1}) {
		t.Fatalf("partial record: %+v", res.Counts)
	}
	var headline, description, suburb, street string
	var bedrooms, bathrooms int
	var pool bool
	var price float64
	f.db.Pool.QueryRow(context.Background(), `SELECT headline, description, suburb, doc->'address'->>'street',
		bedrooms, bathrooms, (doc->'features'->'flags'->>'pool')::boolean, price
		FROM listings WHERE site_id = $1 AND unique_id = 'L1'`, f.site).
		Scan(&headline, &description, &suburb, &street, &bedrooms, &bathrooms, &pool, &price)
	if headline != "New headline" || description != "Long description" || suburb != "Collingwood" ||
		street != "Main Rd" || bedrooms != 3 || bathrooms != 2 || !pool || price != 750000 {
		t.Errorf("after partial update: %q %q %q %q %d %d %v %v", headline, description, suburb, street, bedrooms, bathrooms, pool, price)
	}

	// A status stub changes the status and nothing else.
	res = f.mustImport(t, head+`<residential modTime="2024-02-03-10:00:00" status="withdrawn"><agentID>AG</agentID><uniqueID>L1</uniqueID></residential></propertyList>`)
	var status string
	f.scalar(t, &status, `SELECT status || '/' || headline FROM listings WHERE site_id = $1 AND unique_id = 'L1'`)
	if res.Counts != (ingest.Counts{Updated: 1}) || status != "withdrawn/New headline" {
		t.Errorf("withdrawn stub: %+v, %s", res.Counts, status)
	}
	// Deleted: counted as deleted, then unchanged; unknown deletes are skipped.
	del := head + `<residential modTime="2024-02-04-10:00:00" status="deleted"><agentID>AG</agentID><uniqueID>L1</uniqueID></residential>
		<residential modTime="2024-02-04-10:00:00" status="deleted"><agentID>AG</agentID><uniqueID>NEVER</uniqueID></residential></propertyList>`
	if res := f.mustImport(t, del); res.Counts != (ingest.Counts{Deleted: 1, Skipped: 1}) {
		t.Errorf("delete: %+v", res.Counts)
	}
	if res := f.mustImport(t, del); res.Counts != (ingest.Counts{Unchanged: 1, Skipped: 1}) {
		t.Errorf("delete again: %+v", res.Counts)
	}
	var n int
	f.scalar(t, &n, `SELECT count(*) FROM listings WHERE site_id = $1 AND unique_id = 'NEVER'`)
	if n != 0 {
		t.Error("a delete of an unknown listing created it")
	}
}

func TestMediaSlots(t *testing.T) {
	f := newFixture(t)
	f.mustImport(t, head+`<residential modTime="2024-02-01-10:00:00"><agentID>AG</agentID><uniqueID>M1</uniqueID>
		<images><img id="m" url="https://img.example/m.jpg" format="jpg"/><img id="a" url="https://img.example/a.jpg"/><img id="b" url="https://img.example/b.jpg"/></images>
		<objects><floorplan id="1" url="https://img.example/f1.gif"/></objects>
	</residential></propertyList>`)
	type slot struct {
		id       int64
		url, mod string
	}
	read := func() map[string]slot {
		rows, _ := f.db.Pool.Query(context.Background(), `SELECT kind || ':' || slot, id, url, modified_at::text FROM media WHERE site_id = $1`, f.site)
		out := map[string]slot{}
		for rows.Next() {
			var k string
			var s slot
			rows.Scan(&k, &s.id, &s.url, &s.mod)
			out[k] = s
		}
		return out
	}
	before := read()
	if len(before) != 4 {
		t.Fatalf("slots %v", before)
	}
	// b is cleared, a is replaced, c is new, m is not mentioned.
	f.mustImport(t, head+`<residential modTime="2024-02-05-10:00:00"><agentID>AG</agentID><uniqueID>M1</uniqueID>
		<images><img id="a" url="https://img.example/a2.jpg"/><img id="b"/><img id="c" url="https://img.example/c.jpg"/></images>
	</residential></propertyList>`)
	after := read()
	if _, ok := after["image:b"]; ok {
		t.Error("slot b not deleted")
	}
	if after["image:m"] != before["image:m"] {
		t.Errorf("unmentioned slot m changed: %v -> %v", before["image:m"], after["image:m"])
	}
	if a := after["image:a"]; a.id != before["image:a"].id || a.url != "https://img.example/a2.jpg" || a.mod == before["image:a"].mod {
		t.Errorf("replaced slot a: %v -> %v (id must stay, url and modified_at change)", before["image:a"], a)
	}
	if after["image:c"].url != "https://img.example/c.jpg" || after["floorplan:1"] != before["floorplan:1"] {
		t.Errorf("slots after update %v", after)
	}
}

func TestAgentsUpsertedAndOrdered(t *testing.T) {
	f := newFixture(t)
	f.mustImport(t, head+`
	<rental modTime="2024-02-01-10:00:00"><agentID>AG</agentID><uniqueID>R1</uniqueID>
		<listingAgent id="2"><name>Bea Second</name><email>bea@agency.example</email></listingAgent>
		<listingAgent id="1"><name>Al First</name><email>Al@Agency.example</email><telephone type="mobile">0412 345 678</telephone></listingAgent>
	</rental>
	<rental modTime="2024-02-01-10:00:00"><agentID>AG</agentID><uniqueID>R2</uniqueID>
		<listingAgent id="1"><name>Al First</name><email>al@agency.example</email><telephone type="BH">03 9000 0000</telephone></listingAgent>
	</rental></propertyList>`)
	var agents int
	f.scalar(t, &agents, `SELECT count(*) FROM agents WHERE site_id = $1`)
	if agents != 2 {
		t.Errorf("%d agents, want 2 (one row per e-mail, case-insensitive)", agents)
	}
	var order string
	f.scalar(t, &order, `SELECT string_agg(a.name, ',' ORDER BY la.position) FROM listing_agents la
		JOIN agents a ON a.site_id = la.site_id AND a.id = la.agent_id
		JOIN listings l ON l.site_id = la.site_id AND l.ref = la.listing_ref
		WHERE la.site_id = $1 AND l.unique_id = 'R1'`)
	if order != "Al First,Bea Second" {
		t.Errorf("agents of R1 in order: %s", order)
	}
	var mobile, office string
	f.db.Pool.QueryRow(context.Background(), `SELECT phone_mobile, phone_office FROM agents WHERE site_id = $1 AND lower(email) = 'al@agency.example'`, f.site).Scan(&mobile, &office)
	if mobile != "0412 345 678" {
		t.Errorf("agent phones %q %q", mobile, office)
	}
}

func TestBadListingsAreReportedAndTheRestGoesOn(t *testing.T) {
	f := newFixture(t)
	res := f.mustImport(t, head+`
	<residential modTime="2024-02-01-10:00:00"><agentID>AG</agentID><uniqueID>OK1</uniqueID><headline>fine</headline></residential>
	<residential modTime="not a date"><agentID>AG</agentID><uniqueID>BADDATE</uniqueID></residential>
	<residential modTime="2024-02-01-10:00:00"><agentID>AG</agentID><uniqueID>`+strings.Repeat("x", 200)+`</uniqueID></residential>
	<residential modTime="2024-02-01-10:00:00"><agentID>AG</agentID><uniqueID>OK2</uniqueID></residential>
	</propertyList>`)
	if res.Counts != (ingest.Counts{Created: 2, Errors: 2}) || len(res.Errors) != 2 {
		t.Fatalf("counts %+v errors %+v", res.Counts, res.Errors)
	}
	if e := res.Errors[0]; e.ListingID != "AG:BADDATE" || e.Line != 3 || !strings.Contains(e.Message, "modTime") {
		t.Errorf("parse error reported as %+v", e)
	}
	if e := res.Errors[1]; !strings.HasPrefix(e.ListingID, "AG:xxx") || e.Line != 4 {
		t.Errorf("database error reported as %+v", e)
	}
	var events int
	f.scalar(t, &events, `SELECT count(*) FROM events WHERE site_id = $1 AND type = 'site.content_changed'`)
	if events != 1 {
		t.Errorf("%d content_changed events for one batch, want 1", events)
	}
	// Nothing changed: no event.
	f.mustImport(t, head+`<residential modTime="2024-02-01-10:00:00"><agentID>AG</agentID><uniqueID>OK2</uniqueID></residential></propertyList>`)
	f.scalar(t, &events, `SELECT count(*) FROM events WHERE site_id = $1 AND type = 'site.content_changed'`)
	if events != 1 {
		t.Errorf("an unchanged import wrote an event (%d)", events)
	}
}

func TestBrokenFeedKeepsCommittedBatches(t *testing.T) {
	f := newFixture(t)
	var b strings.Builder
	if err := reaxmlgen.Generate(&b, reaxmlgen.Options{Seed: 1, Listings: ingest.BatchSize + 20}); err != nil {
		t.Fatal(err)
	}
	feed := b.String()
	cut := strings.LastIndex(feed, "<residential")
	res, err := f.im.Import(context.Background(), f.site, strings.NewReader(feed[:cut+40]), ingest.Options{})
	if err == nil {
		t.Fatal("truncated feed imported without an error")
	}
	var n int
	f.scalar(t, &n, `SELECT count(*) FROM listings WHERE site_id = $1`)
	if n == 0 || n != res.Counts.Created {
		t.Errorf("%d listings stored, result says %d created", n, res.Counts.Created)
	}
}

func TestGeneratedFeedProgressAndIdempotence(t *testing.T) {
	f := newFixture(t)
	var b strings.Builder
	if err := reaxmlgen.Generate(&b, reaxmlgen.Options{Seed: 7, Listings: 300}); err != nil {
		t.Fatal(err)
	}
	var calls int
	var last ingest.Counts
	res, err := f.im.Import(context.Background(), f.site, strings.NewReader(b.String()), ingest.Options{
		Progress:  func(c ingest.Counts, n int64) { calls++; last = c },
		BatchSize: 100,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Counts.Errors != 0 || res.Counts.Created == 0 || calls < 3 || last != res.Counts {
		t.Fatalf("counts %+v errors %v progress calls %d last %+v", res.Counts, res.Errors, calls, last)
	}
	again, err := f.im.Import(context.Background(), f.site, strings.NewReader(b.String()), ingest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := again.Counts
	if c.Created+c.Updated+c.Deleted+c.Errors != 0 || c.Unchanged+c.Skipped != res.Counts.Created+res.Counts.Updated+res.Counts.Deleted+res.Counts.Unchanged+res.Counts.Skipped {
		t.Errorf("second import %+v after %+v", c, res.Counts)
	}
}

// Imports into one site take turns: an import waits for the site's import
// lock, held here by another session as a running import holds it, and
// goes on once it is let go; the lock is free again when Import returns.
func TestImportsIntoOneSiteTakeTurns(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	holder, err := f.db.Pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Release()
	if _, err := holder.Exec(ctx, `SELECT pg_advisory_lock(hashtextextended($1, 7))`, f.site); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := reaxmlgen.Generate(&b, reaxmlgen.Options{Seed: 8, Listings: 30}); err != nil {
		t.Fatal(err)
	}
	done := importAsync(ctx, f.im, f.site, b.String())
	// Await the import's connection waiting for the site's lock.
	deadline := time.Now().Add(time.Minute)
	for waiting := false; !waiting; {
		if time.Now().After(deadline) {
			t.Fatal("the import never waited for the site's import lock")
		}
		if err := f.db.Pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted
			AND (classid::bigint << 32 | objid::bigint) = hashtextextended($1, 7))`, f.site).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		select {
		case o := <-done:
			t.Fatalf("the import ran while another held the site: %+v %v", o.res.Counts, o.err)
		default:
		}
	}
	var n int
	f.scalar(t, &n, `SELECT count(*) FROM listings WHERE site_id = $1`)
	if n != 0 {
		t.Fatalf("%d listings stored while another import held the site", n)
	}
	if _, err := holder.Exec(ctx, `SELECT pg_advisory_unlock(hashtextextended($1, 7))`, f.site); err != nil {
		t.Fatal(err)
	}
	o := <-done
	if o.err != nil || o.res.Counts.Created == 0 {
		t.Fatalf("import after the lock was let go: %+v %v", o.res.Counts, o.err)
	}
	var free bool
	if err := holder.QueryRow(ctx, `SELECT pg_try_advisory_lock(hashtextextended($1, 7))`, f.site).Scan(&free); err != nil || !free {
		t.Fatalf("the site's import lock is still held after Import returned (%v)", err)
	}
	if _, err := holder.Exec(ctx, `SELECT pg_advisory_unlock(hashtextextended($1, 7))`, f.site); err != nil {
		t.Fatal(err)
	}
}
