package ingest_test

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/listgate/listgate/origin/ingest"
)

// mediaURLs returns the site's stored media as "kind:slot url".
func (f *fixture) mediaURLs(tb testing.TB) []string {
	tb.Helper()
	rows, err := f.db.Pool.Query(context.Background(), `SELECT kind || ':' || slot || ' ' || url FROM media
		WHERE site_id = $1 ORDER BY kind, slot`, f.site)
	if err != nil {
		tb.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			tb.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

// A media URL clients could not safely be given (javascript:, data:,
// vbscript:, file:, relative, no host, user info, a bare file name) is
// left out and reported in the import's errors; the listing and its other
// media are stored.
func TestBadMediaURLsAreSkippedAndReported(t *testing.T) {
	f := newFixture(t)
	res := f.mustImport(t, head+`
	<residential modTime="2024-02-01-10:00:00"><agentID>AG</agentID><uniqueID>M1</uniqueID>
		<headline>Has bad media</headline>
		<listingAgent id="1"><name>Ann Agent</name><email>ann@agency.example</email>
			<photo url="javascript:alert(document.cookie)"/><twitterURL>https://twitter.example/ann</twitterURL></listingAgent>
		<images>
			<img id="m" url="https://cdn.example/m.jpg"/>
			<img id="a" url="javascript:alert(1)"/>
			<img id="b" url="data:image/png;base64,AAAA"/>
			<img id="c" url="//cdn.example/c.jpg"/>
			<img id="d" file="d.jpg"/>
			<img id="e" url=" HTTP://CDN.example/e.jpg "/>
			<img id="f" url="https://user:pw@cdn.example/f.jpg"/>
			<img id="g" url="https:///g.jpg"/>
			<img id="h">JaVaScRiPt:alert(1)</img>
			<img id="i" url="../i.jpg"/>
		</images>
		<objects><floorplan id="1" url="vbscript:msgbox(1)"/><floorplan id="2" url="https://cdn.example/fp2.png"/>
			<document id="1" url="file:///etc/passwd"/></objects>
		<videoLink href="http://video.example/tour.mp4"/>
		<externalLink href="javascript:void(0)"/>
	</residential>
	<residential modTime="2024-02-01-10:00:00"><agentID>AG</agentID><uniqueID>M2</uniqueID>
		<images><img id="m" url="https://cdn.example/m2.jpg"/></images></residential>
	</propertyList>`)
	// The counts say what happened to each listing: both were created.
	if res.Counts != (ingest.Counts{Created: 2}) || len(res.Errors) != 1 {
		t.Fatalf("counts %+v errors %+v", res.Counts, res.Errors)
	}
	e := res.Errors[0]
	if e.ListingID != "AG:M1" || e.Line != 2 || !strings.HasPrefix(e.Message, "listing imported without ") {
		t.Errorf("reported as %+v", e)
	}
	for _, want := range []string{`agent Ann Agent photo "javascript:alert(document.cookie)": scheme javascript is not http or https`,
		`image a "javascript:alert(1)": scheme javascript`, `image b "data:image/png;base64,AAAA"`,
		`image c "//cdn.example/c.jpg": not an absolute URL`, `image d file "d.jpg": not an absolute URL`, "; and 7 more"} {
		if !strings.Contains(e.Message, want) {
			t.Errorf("message lacks %q:\n%s", want, e.Message)
		}
	}
	want := []string{
		"floorplan:2 https://cdn.example/fp2.png",
		"image:e HTTP://CDN.example/e.jpg",
		"image:m https://cdn.example/m.jpg",
		"image:m https://cdn.example/m2.jpg",
		"video:1 http://video.example/tour.mp4",
	}
	if got := f.mediaURLs(t); !reflect.DeepEqual(got, want) {
		t.Errorf("stored media:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	var photo *string
	var links string
	f.scalar(t, &photo, `SELECT photo_url FROM agents WHERE site_id = $1`)
	f.scalar(t, &links, `SELECT links::text FROM agents WHERE site_id = $1`)
	if photo != nil || !strings.Contains(links, "https://twitter.example/ann") {
		t.Errorf("agent photo %v links %s", photo, links)
	}

	// An update that names a slot with a bad URL leaves the slot as it was,
	// as if the record had not mentioned it; a bad link is left out of the
	// links the record replaces.
	res = f.mustImport(t, head+`
	<residential modTime="2024-02-02-10:00:00"><agentID>AG</agentID><uniqueID>M1</uniqueID>
		<images><img id="m" url="javascript:alert(2)"/><img id="e" url="https://cdn.example/e2.jpg"/></images>
		<videoLink href="vbscript:x"/>
	</residential></propertyList>`)
	if res.Counts != (ingest.Counts{Updated: 1}) || len(res.Errors) != 1 ||
		!strings.Contains(res.Errors[0].Message, `image m "javascript:alert(2)"`) ||
		!strings.Contains(res.Errors[0].Message, `videoLink 1 "vbscript:x"`) {
		t.Fatalf("update: counts %+v errors %+v", res.Counts, res.Errors)
	}
	want = []string{
		"floorplan:2 https://cdn.example/fp2.png",
		"image:e https://cdn.example/e2.jpg",
		"image:m https://cdn.example/m.jpg",
		"image:m https://cdn.example/m2.jpg",
	}
	if got := f.mediaURLs(t); !reflect.DeepEqual(got, want) {
		t.Errorf("stored media after the update:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
