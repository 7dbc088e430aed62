package ingest_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/listgate/listgate/origin/ingest"
	"github.com/listgate/listgate/origin/store/storetest"
	"github.com/listgate/listgate/pkg/reaxml/reaxmlgen"
)

// edgeCases is a feed of what batching must get right: a listing twice in
// one feed (the second record applies over the first), partial records,
// media slots deleted and repeated, links replaced, inspections repeated,
// agents known by e-mail in two cases and by name, a status stub, a delete,
// a stale record and one the database refuses.
var edgeCases = head + `
<residential modTime="2024-03-01-10:00:00" status="current"><agentID>AG</agentID><uniqueID>E1</uniqueID>
	<headline>First</headline><price display="yes">500000</price>
	<address display="yes"><streetNumber>2</streetNumber><street>High St</street><suburb>Carlton</suburb><state>VIC</state><postcode>3053</postcode></address>
	<listingAgent id="1"><name>Cy Case</name><email>Cy@Agency.example</email></listingAgent>
	<listingAgent id="2"><name>No Mail</name></listingAgent>
	<images><img id="m" url="https://img.example/e1m.jpg"/><img id="a" url="https://img.example/e1a.jpg"/><img id="a" url="https://img.example/e1a2.jpg"/></images>
	<videoLink href="https://video.example/1"/>
	<inspectionTimes><inspection>21-Mar-2024 11:00am to 11:30am</inspection><inspection>21-Mar-2024 11:00am to 11:30am</inspection></inspectionTimes>
</residential>
<residential modTime="2024-03-02-10:00:00"><agentID>AG</agentID><uniqueID>E1</uniqueID>
	<headline>Second</headline><features><bedrooms>4</bedrooms></features>
	<listingAgent id="1"><name>Cy Case</name><email>cy@agency.example</email><telephone type="mobile">0400 000 001</telephone></listingAgent>
	<images><img id="a"/><img id="b" url="https://img.example/e1b.jpg"/></images>
</residential>
<rental modTime="2024-03-01-10:00:00"><agentID>AG</agentID><uniqueID>E2</uniqueID>
	<headline>Flat</headline><rent period="week" display="yes">650</rent>
	<listingAgent id="1"><name>No Mail</name><telephone type="BH">03 9000 0002</telephone></listingAgent>
</rental>
<rental modTime="2024-02-01-10:00:00"><agentID>AG</agentID><uniqueID>E2</uniqueID><headline>Stale</headline></rental>
<residential modTime="2024-03-01-10:00:00"><agentID>AG</agentID><uniqueID>` + "TOOLONG" + strings.Repeat("x", 200) + `</uniqueID></residential>
<land modTime="2024-03-01-10:00:00" status="current"><agentID>AG</agentID><uniqueID>E3</uniqueID><headline>Block</headline></land>
<land modTime="2024-03-03-10:00:00" status="sold"><agentID>AG</agentID><uniqueID>E3</uniqueID></land>
<residential modTime="2024-03-03-10:00:00" status="deleted"><agentID>AG</agentID><uniqueID>E1</uniqueID></residential>
<residential modTime="2024-03-04-10:00:00" status="current"><agentID>AG</agentID><uniqueID>E1</uniqueID><headline>Back</headline>
	<videoLink href="https://video.example/2"/></residential>
</propertyList>`

// Importing the same feeds in batches of one, seven or the default, with
// one writer or two, gives the same rows: batching changes how many
// statements an import sends, not what it stores, and two writers never
// apply two records of one listing out of the feed's order (the edge
// cases repeat listings in consecutive batches of one and of seven).
func TestBatchSizesAgree(t *testing.T) {
	var first, update strings.Builder
	if err := reaxmlgen.Generate(&first, reaxmlgen.Options{Seed: 5, Listings: 700}); err != nil {
		t.Fatal(err)
	}
	if err := reaxmlgen.Generate(&update, reaxmlgen.Options{Seed: 5, Listings: 700, Revision: 1, Changed: 0.2}); err != nil {
		t.Fatal(err)
	}
	feeds := []string{first.String(), edgeCases, update.String()}
	files, _ := filepath.Glob(filepath.Join(samples, "*.xml"))
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		feeds = append(feeds, string(b))
	}
	feeds = append(feeds, edgeCases)

	db := storetest.NewDB(t)
	var want string
	var wantResults []ingest.Result
	for _, run := range []struct{ size, writers int }{{ingest.BatchSize, 2}, {7, 2}, {1, 2}, {7, 1}} {
		size := run.size
		f := newFixtureOn(t, db)
		var results []ingest.Result
		for _, feed := range feeds {
			res, err := f.im.Import(context.Background(), f.site, strings.NewReader(feed), ingest.Options{BatchSize: size, Writers: run.writers})
			if err != nil {
				t.Fatalf("batch size %d: %v", size, err)
			}
			sort.Slice(res.Errors, func(i, j int) bool { return res.Errors[i].Line < res.Errors[j].Line })
			results = append(results, res)
		}
		got := f.normalized(t)
		if want == "" {
			want, wantResults = got, results
			if !strings.Contains(got, "e1b.jpg") || !strings.Contains(got, `"slot":"m"`) {
				t.Fatalf("the edge cases did not apply: %+v", results[1])
			}
			continue
		}
		if got != want {
			t.Errorf("batch size %d with %d writers stored other rows than batch size %d:\n%s", size, run.writers, ingest.BatchSize, firstDiff(want, got))
		}
		for i := range results {
			if a, b := wantResults[i], results[i]; a.Counts != b.Counts || len(a.Errors) != len(b.Errors) {
				t.Errorf("feed %d, batch size %d: %+v (%d errors), batch size %d: %+v (%d errors)",
					i, ingest.BatchSize, a.Counts, len(a.Errors), size, b.Counts, len(b.Errors))
			}
		}
	}
	// The edge cases' own outcome: E1 created and updated by its second
	// record, E2 created then its stale record skipped, one refused.
	if c := wantResults[1].Counts; c != (ingest.Counts{Created: 3, Updated: 3, Deleted: 1, Skipped: 1, Errors: 1}) {
		t.Errorf("edge cases: %+v %+v", c, wantResults[1].Errors)
	}
}

// normalized is every row the site has in the ingest's tables, without
// the ids and times a database assigns, as JSON.
func (f *fixture) normalized(tb testing.TB) string {
	tb.Helper()
	var b strings.Builder
	for _, q := range []string{
		`SELECT json_agg(t ORDER BY agency_id, unique_id) FROM (SELECT agency_id, unique_id, type, status,
			under_offer, featured, category, headline, description, suburb, state, postcode, search_address,
			price, price_shown, bedrooms, bathrooms, car_spaces, search, doc, feed_mod_time, feed_hash
			FROM listings WHERE site_id = $1) t`,
		`SELECT json_agg(t ORDER BY email, name) FROM (SELECT name, email, phone_mobile, phone_office, phone_ah,
			photo_url, links FROM agents WHERE site_id = $1) t`,
		`SELECT json_agg(t ORDER BY unique_id, position) FROM (SELECT l.unique_id, la.position, a.name, a.email
			FROM listing_agents la JOIN listings l ON l.site_id = la.site_id AND l.ref = la.listing_ref
			JOIN agents a ON a.site_id = la.site_id AND a.id = la.agent_id WHERE la.site_id = $1) t`,
		`SELECT json_agg(t ORDER BY unique_id, kind, slot) FROM (SELECT l.unique_id, m.kind, m.slot, m.url, m.format,
			m.position, CASE WHEN m.modified_at < now() - interval '1 hour' THEN m.modified_at END AS modified_at
			FROM media m JOIN listings l ON l.site_id = m.site_id AND l.ref = m.listing_ref WHERE m.site_id = $1) t`,
		`SELECT json_agg(t ORDER BY unique_id, starts_at) FROM (SELECT l.unique_id, i.starts_at, i.ends_at
			FROM inspections i JOIN listings l ON l.site_id = i.site_id AND l.ref = i.listing_ref WHERE i.site_id = $1) t`,
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

// firstDiff shows where two long strings part.
func firstDiff(a, b string) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	from := max(i-300, 0)
	return "want …" + a[from:min(len(a), i+300)] + "\ngot  …" + b[from:min(len(b), i+300)]
}

// guardedReader fails the test when it is read after closed is set.
type guardedReader struct {
	t      *testing.T
	r      *strings.Reader
	closed atomic.Bool
}

func (g *guardedReader) Read(p []byte) (int, error) {
	if g.closed.Load() {
		g.t.Error("the feed was read after Import returned")
	}
	return g.r.Read(p[:min(len(p), 512)])
}

// An import that ends early (here its context) returns only once it has
// stopped reading the feed, which is the caller's again.
func TestImportStopsReadingWhenItReturns(t *testing.T) {
	f := newFixture(t)
	var b strings.Builder
	if err := reaxmlgen.Generate(&b, reaxmlgen.Options{Seed: 2, Listings: 400}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	feed := &guardedReader{t: t, r: strings.NewReader(b.String())}
	res, err := f.im.Import(ctx, f.site, feed, ingest.Options{BatchSize: 20, Progress: func(ingest.Counts, int64) { cancel() }})
	feed.closed.Store(true)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("import after cancel: %v %+v", err, res.Counts)
	}
	if feed.r.Len() == 0 {
		t.Error("the whole feed was read although the import was cancelled after its first batch")
	}
	var n int
	f.scalar(t, &n, `SELECT count(*) FROM listings WHERE site_id = $1`)
	if n != res.Counts.Created {
		t.Errorf("%d listings stored, result says %d created", n, res.Counts.Created)
	}
}
