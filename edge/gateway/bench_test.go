package gateway

import (
	"testing"
	"time"
)

// BenchmarkHitPath is the whole request path of a cached 10 KB page in
// process (auth, site, scope, limit, cache, headers), beside the least a
// fasthttp handler can do for the same bytes (BenchmarkStaticHandler): their
// ratio is the edge's own cost per hit, without sockets.
func BenchmarkHitPath(b *testing.B) {
	key := mustKey(b)
	g, cache := newTestGateway(b, key, 0)
	path := "/v1/sites/" + testSite + "/listings"
	body := make([]byte, 10<<10)
	k := mustAppendKey(b, cache, []byte(testSite), []byte(path), []byte("page=2"))
	if cache.Put(k, 200, []byte("application/json"), []byte("max-age=600"), []byte(`"e"`), body, time.Now()) == nil {
		b.Fatal("not stored")
	}
	ctx := request("GET", path+"?page=2", map[string]string{"Authorization": "Bearer " + key, "Accept-Encoding": "gzip"})
	b.ReportAllocs()
	for b.Loop() {
		ctx.Response.Reset()
		g.Handler(ctx)
	}
	if ctx.Response.StatusCode() != 200 {
		b.Fatal(ctx.Response.StatusCode())
	}
}

func BenchmarkStaticHandler(b *testing.B) {
	body := make([]byte, 10<<10)
	ctx := request("GET", "/page.json", nil)
	b.ReportAllocs()
	for b.Loop() {
		ctx.Response.Reset()
		ctx.Response.Header.SetContentType("application/json")
		ctx.Response.SetBodyRaw(body)
	}
}
