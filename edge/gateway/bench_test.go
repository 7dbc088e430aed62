package gateway

import (
	"testing"
	"time"
)

// BenchmarkHitPath is the whole request path of a cached 10 KB page in
// process (auth, site, scope, limit, cache, headers), beside the least a
// fasthttp handler can do for the same bytes (BenchmarkStaticHandler): their
// ratio is the edge's own cost per hit, without sockets. "limited" is a
// plan with a limit, whose answers carry the rate-limit headers
// (X-RateLimit-*, RateLimit-Policy, RateLimit); "unlimited" carries none.
func BenchmarkHitPath(b *testing.B) {
	for _, bc := range []struct {
		name  string
		limit int
	}{{"unlimited", 0}, {"limited", 1 << 30}} {
		b.Run(bc.name, func(b *testing.B) {
			key := mustKey(b)
			g, cache := newTestGateway(b, key, bc.limit)
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
			if ctx.Response.StatusCode() != 200 || (bc.limit > 0) != (len(ctx.Response.Header.Peek("RateLimit")) > 0) {
				b.Fatal(ctx.Response.StatusCode(), string(ctx.Response.Header.Peek("RateLimit")))
			}
		})
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

// BenchmarkHitPathParallel is BenchmarkHitPath on every core at once (a
// request context each): what it adds to the serial figure is contention —
// shared atomics, locks and cache lines the hit path touches.
func BenchmarkHitPathParallel(b *testing.B) {
	key := mustKey(b)
	g, cache := newTestGateway(b, key, 1<<30)
	path := "/v1/sites/" + testSite + "/listings"
	k := mustAppendKey(b, cache, []byte(testSite), []byte(path), []byte("page=2"))
	if cache.Put(k, 200, []byte("application/json"), []byte("max-age=600"), []byte(`"e"`), make([]byte, 10<<10), time.Now()) == nil {
		b.Fatal("not stored")
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		ctx := request("GET", path+"?page=2", map[string]string{"Authorization": "Bearer " + key, "Accept-Encoding": "gzip"})
		for pb.Next() {
			ctx.Response.Reset()
			g.Handler(ctx)
		}
		if ctx.Response.StatusCode() != 200 {
			b.Error(ctx.Response.StatusCode())
		}
	})
}
