package respcache

import (
	"bytes"
	"compress/gzip"
	"io"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/valyala/fasthttp"
)

func TestParseCacheControl(t *testing.T) {
	cc := ParseCacheControl([]byte("private, max-age=60, stale-while-revalidate=300, stale-if-error=86400"))
	if cc.MaxAge != time.Minute || cc.SWR != 5*time.Minute || cc.SIE != 24*time.Hour || cc.NoStore {
		t.Errorf("%+v", cc)
	}
	for _, h := range []string{"no-store", "max-age=60, no-cache", "max-age=-1", "max-age=abc"} {
		cc := ParseCacheControl([]byte(h))
		if !cc.NoStore && cc.MaxAge > 0 {
			t.Errorf("%q parsed as cacheable: %+v", h, cc)
		}
	}
}

func TestPutGetStatesAndInvalidation(t *testing.T) {
	c, err := New(Options{MaxBytes: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	now := time.Now()
	body := []byte(strings.Repeat(`{"listing":"a family home near parks"},`, 100))
	key := mustAppendKey(t, c, []byte("site-a"), []byte("/v1/sites/site-a/listings"), []byte("sort=price&page=1"))
	e := c.Put(key, 200, []byte("application/json"), []byte("max-age=60, stale-while-revalidate=30, stale-if-error=600"), []byte(`"e1"`), body, now)
	if e == nil || e.gzipBody != nil || e.brBody != nil {
		t.Fatalf("entry %+v: compressed before anyone asked", e)
	}
	// Concurrent first requests share one compression.
	gz := make(chan []byte, 8)
	for range 8 {
		go func() { gz <- e.Gzip() }()
	}
	first := <-gz
	for range 7 {
		if g := <-gz; unsafe.SliceData(g) != unsafe.SliceData(first) {
			t.Fatal("gzip made twice")
		}
	}
	if e.brBody != nil || e.Gzip() == nil || len(e.Gzip()) >= len(body) {
		t.Fatalf("entry %+v", e)
	}
	zr, _ := gzip.NewReader(bytes.NewReader(e.Gzip()))
	if unz, _ := io.ReadAll(zr); !bytes.Equal(unz, body) {
		t.Fatal("gzip variant is not the body")
	}
	if unbr, err := fasthttp.AppendUnbrotliBytes(nil, e.Brotli()); err != nil || !bytes.Equal(unbr, body) || len(e.Brotli()) >= len(e.Gzip()) {
		t.Fatalf("brotli variant: %d bytes, %v", len(e.Brotli()), err)
	}
	got, ok := c.Get(mustAppendKey(t, c, []byte("site-a"), []byte("/v1/sites/site-a/listings"), []byte("page=1&sort=price")))
	if !ok || got != e {
		t.Fatal("reordered query missed")
	}
	for age, want := range map[time.Duration]State{0: Fresh, 70 * time.Second: Stale, 100 * time.Second: Expired, 700 * time.Second: Dead} {
		if s := e.State(now.Add(age)); s != want {
			t.Errorf("at %v: state %v, want %v", age, s, want)
		}
	}
	if !e.StartRefresh() || e.StartRefresh() {
		t.Error("StartRefresh is not once")
	}
	for _, cc := range []string{"no-store", ""} {
		if c.Put([]byte("k"+cc), 200, nil, []byte(cc), nil, body, now) != nil {
			t.Errorf("stored with Cache-Control %q", cc)
		}
	}
	if c.Put([]byte("k500"), 500, nil, []byte("max-age=60"), nil, body, now) != nil {
		t.Error("stored a 500")
	}
	other := mustAppendKey(t, c, []byte("site-b"), []byte("/x"), nil)
	c.Put(other, 200, nil, []byte("max-age=60"), nil, body, now)
	c.Invalidate("site-a")
	if _, ok := c.Get(mustAppendKey(t, c, []byte("site-a"), []byte("/v1/sites/site-a/listings"), []byte("sort=price"))); ok {
		t.Error("invalidated site still hits")
	}
	if _, ok := c.Get(mustAppendKey(t, c, []byte("site-b"), []byte("/x"), nil)); !ok {
		t.Error("another site's entry was invalidated")
	}
}

func TestFlightCollapses(t *testing.T) {
	c, _ := New(Options{})
	defer c.Close()
	f, leader := c.Join([]byte("k"))
	g, second := c.Join([]byte("k"))
	if !leader || second || f != g {
		t.Fatal("second join led its own flight")
	}
	e := &Entry{Status: 200}
	c.Finish([]byte("k"), f, e)
	<-g.Done()
	if g.Entry != e {
		t.Error("follower did not get the leader's entry")
	}
	if _, leader := c.Join([]byte("k")); !leader {
		t.Error("finished flight still joined")
	}
}

func mustAppendKey(tb testing.TB, c *Cache, site, path, query []byte) []byte {
	tb.Helper()
	k, err := c.AppendKey(nil, site, path, query)
	if err != nil {
		tb.Fatal(err)
	}
	return k
}
