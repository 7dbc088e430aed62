package e2e

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const feedHead = `<?xml version="1.0" encoding="UTF-8"?><propertyList date="2024-01-01-10:00:00">`

func feed(modTime, headline string) string {
	return feedHead + `<residential modTime="` + modTime + `" status="current"><agentID>AG</agentID><uniqueID>HOUSE1</uniqueID>
		<headline>` + headline + `</headline><description>` + strings.Repeat("A light and bright family home. ", 40) + `</description>
		<address display="yes"><streetNumber>1</streetNumber><street>Main Road</street><suburb>Richmond</suburb><state>VIC</state><postcode>3121</postcode></address>
		</residential></propertyList>`
}

func (s *system) importFeed(site, body string) {
	s.tb.Helper()
	path := filepath.Join(s.tb.TempDir(), "feed.xml")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		s.tb.Fatal(err)
	}
	var counts map[string]any
	s.cli(&counts, "import", "reaxml", "--site", site, "--json", path)
}

func TestEdgeResponseCache(t *testing.T) {
	// Pages stay fresh throughout: only the import's event can make the
	// edge show a new page, and site B's entry is still a hit after it
	// however long the import takes (with max-age=2, a slow import left
	// it STALE).
	s := newSystem(t, `cache_control_listings: "private, max-age=60, stale-while-revalidate=1, stale-if-error=120"`)
	site, other := s.site("enterprise"), s.site("enterprise")
	key, otherKey := s.key(site, "listings:read"), s.key(other, "listings:read")
	s.importFeed(site, feed("2024-02-01-10:00:00", "First headline"))
	s.importFeed(other, feed("2024-02-01-10:00:00", "Other site"))
	// Started after the imports: an import's event reaching the edge after
	// the first read below would drop the page it cached.
	edge := s.startEdge(edgeOpts{})
	url := edge.url() + "/v1/sites/" + site + "/listings"
	otherURL := edge.url() + "/v1/sites/" + other + "/listings"

	miss := do(t, "GET", url, nil, bearer(key.Key))
	hit := do(t, "GET", url+"?page=1&per_page=20", nil, bearer(key.Key)) // canonically the same page
	if miss.status != 200 || miss.header.Get("X-Cache") != "MISS" || hit.header.Get("X-Cache") != "HIT" {
		t.Fatalf("first %d %s, second %s", miss.status, miss.header.Get("X-Cache"), hit.header.Get("X-Cache"))
	}
	if !bytes.Equal(miss.body, hit.body) || miss.header.Get("ETag") == "" || hit.header.Get("ETag") != miss.header.Get("ETag") {
		t.Fatal("hit differs from the miss")
	}
	if hit.header.Get("Vary") != "Accept-Encoding, Origin" || hit.header.Get("X-RateLimit-Limit") != "" {
		t.Errorf("hit headers %v", hit.header)
	}
	notMod := do(t, "GET", url, nil, map[string]string{"Authorization": "Bearer " + key.Key, "If-None-Match": miss.header.Get("ETag")})
	if notMod.status != 304 || len(notMod.body) != 0 {
		t.Errorf("If-None-Match: %d", notMod.status)
	}
	gz := do(t, "GET", url, nil, map[string]string{"Authorization": "Bearer " + key.Key, "Accept-Encoding": "gzip"})
	if gz.header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("no gzip variant: %v", gz.header)
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz.body))
	if err != nil {
		t.Fatal(err)
	}
	if plain, _ := io.ReadAll(zr); !bytes.Equal(plain, miss.body) {
		t.Error("gzip variant is not the page")
	}
	// Another key of the site gets the cached page; a key of another site does not.
	if r := do(t, "GET", otherURL, nil, bearer(key.Key)); r.status != 403 {
		t.Errorf("site A's key on site B's cached route: %d", r.status)
	}
	do(t, "GET", otherURL, nil, bearer(otherKey.Key))
	if r := do(t, "GET", otherURL, nil, bearer(otherKey.Key)); r.header.Get("X-Cache") != "HIT" {
		t.Fatalf("other site not cached: %s", r.header.Get("X-Cache"))
	}

	// A REAXML import shows through the edge (its event drops the site's
	// entries: the page is fresh for a minute, so nothing else could show
	// it; the 5 s bound is no measure of speed, only a bound on the
	// wait); the other site's entries stay.
	s.importFeed(site, feed("2024-02-02-10:00:00", "Updated headline"))
	imported := time.Now()
	for {
		r := do(t, "GET", url, nil, bearer(key.Key))
		if bytes.Contains(r.body, []byte("Updated headline")) {
			t.Logf("import visible through the edge after %v", time.Since(imported).Round(time.Millisecond))
			break
		}
		if time.Since(imported) > 5*time.Second {
			t.Fatalf("import not visible through the edge after 5 s (X-Cache %s)", r.header.Get("X-Cache"))
		}
		time.Sleep(20 * time.Millisecond)
	}
	if r := do(t, "GET", otherURL, nil, bearer(otherKey.Key)); r.header.Get("X-Cache") != "HIT" {
		t.Errorf("site B's entry was invalidated by site A's import: %s", r.header.Get("X-Cache"))
	}
}

// With the origin down, cached pages keep being served, stale once
// expired (within stale-if-error); an uncached page is 503.
func TestEdgeServesStaleWithTheOriginDown(t *testing.T) {
	s := newSystem(t, `cache_control_listings: "private, max-age=2, stale-while-revalidate=1, stale-if-error=120"`)
	site := s.site("enterprise")
	key := s.key(site, "listings:read")
	// Imported before the edge follows the event stream: the import's
	// event, arriving after the page was cached, would drop it.
	s.importFeed(site, feed("2024-02-02-10:00:00", "Updated headline"))
	edge := s.startEdge(edgeOpts{})
	url := edge.url() + "/v1/sites/" + site + "/listings"
	if r := do(t, "GET", url, nil, bearer(key.Key)); r.status != 200 || r.header.Get("X-Cache") != "MISS" {
		t.Fatalf("first read: %d X-Cache %q", r.status, r.header.Get("X-Cache"))
	}
	s.origin.kill()
	time.Sleep(3500 * time.Millisecond) // past max-age and stale-while-revalidate
	r := do(t, "GET", url, nil, bearer(key.Key))
	if r.status != 200 || r.header.Get("X-Cache") != "STALE" || !bytes.Contains(r.body, []byte("Updated headline")) {
		t.Errorf("origin down: %d X-Cache %q", r.status, r.header.Get("X-Cache"))
	}
	if r := do(t, "GET", url+"?page=2", nil, bearer(key.Key)); r.status != 503 {
		t.Errorf("uncached page with the origin down: %d", r.status)
	}
}
