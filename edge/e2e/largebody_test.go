package e2e

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
	"time"
)

// largeFeed is n listings whose descriptions are random words (so that
// their gzip form stays large too), about size bytes each.
func largeFeed(n, size int) string {
	r := rand.New(rand.NewPCG(1, 2))
	var b strings.Builder
	b.WriteString(feedHead)
	for i := range n {
		var d strings.Builder
		for d.Len() < size {
			fmt.Fprintf(&d, "%x ", r.Uint64())
		}
		fmt.Fprintf(&b, `<residential modTime="2024-02-01-10:00:00" status="current"><agentID>AG</agentID><uniqueID>BIG%d</uniqueID>
		<headline>Listing %d</headline><description>%s</description>
		<address display="yes"><streetNumber>%d</streetNumber><street>Main Road</street><suburb>Richmond</suburb><state>VIC</state><postcode>3121</postcode></address>
		</residential>`, i, i, d.String(), i+1)
	}
	b.WriteString(`</propertyList>`)
	return b.String()
}

// Cached bodies larger than the write buffer, and large enough to be sent
// with their headers in one gathered write, arrive whole and byte for byte
// as the origin made them: plain and gzip, after HEAD, and pipelined.
func TestEdgeLargeCachedBodies(t *testing.T) {
	s := newSystem(t)
	site := s.site("enterprise")
	k := s.key(site, "listings:read")
	s.importFeed(site, largeFeed(20, 4000))
	// Started after the import: its event reaching the edge after the
	// miss below would drop the page, and the hit be a miss.
	edge := s.startEdge(edgeOpts{})
	path := "/v1/sites/" + site + "/listings?per_page=20"

	miss := do(t, "GET", edge.url()+path, nil, bearer(k.Key))
	hit := do(t, "GET", edge.url()+path, nil, bearer(k.Key))
	if miss.status != 200 || hit.header.Get("X-Cache") != "HIT" || len(hit.body) < 64<<10 || !bytes.Equal(miss.body, hit.body) {
		t.Fatalf("miss %d, hit %s with %d bytes (miss %d)", miss.status, hit.header.Get("X-Cache"), len(hit.body), len(miss.body))
	}
	gz := do(t, "GET", edge.url()+path, nil, map[string]string{"Authorization": "Bearer " + k.Key, "Accept-Encoding": "gzip"})
	if gz.header.Get("Content-Encoding") != "gzip" || len(gz.body) < 8<<10 {
		t.Fatalf("gzip variant: %v, %d bytes", gz.header, len(gz.body))
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz.body))
	if err != nil {
		t.Fatal(err)
	}
	if plain, _ := io.ReadAll(zr); !bytes.Equal(plain, hit.body) {
		t.Fatal("the gzip variant is not the page")
	}

	// On one connection: GET, HEAD, GET with gzip and GET, sent at once.
	req := func(method, enc string) string {
		return method + " " + path + " HTTP/1.1\r\nHost: edge\r\nAuthorization: Bearer " + k.Key + "\r\nAccept-Encoding: " + enc + "\r\n\r\n"
	}
	c, br := dialWrite(t, edge.addr, req("GET", "identity")+req("HEAD", "identity")+req("GET", "gzip")+req("GET", "identity"), 10*time.Second)
	defer c.Close()
	for i, want := range []struct {
		method string
		body   []byte
	}{{"GET", hit.body}, {"HEAD", nil}, {"GET", gz.body}, {"GET", hit.body}} {
		resp, err := http.ReadResponse(br, &http.Request{Method: want.method})
		if err != nil {
			t.Fatalf("pipelined answer %d: %v", i+1, err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 || !bytes.Equal(body, want.body) {
			t.Fatalf("pipelined answer %d (%s): %d, %d bytes, want %d (%v)", i+1, want.method, resp.StatusCode, len(body), len(want.body), err)
		}
		if want.method == "HEAD" && resp.ContentLength != int64(len(hit.body)) {
			t.Errorf("HEAD: Content-Length %d, want %d", resp.ContentLength, len(hit.body))
		}
	}
}
