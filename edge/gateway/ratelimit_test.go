package gateway

import (
	"io"
	"log/slog"
	"strconv"
	"testing"
	"time"

	"github.com/listgate/listgate/edge/keycache"
	"github.com/listgate/listgate/edge/respcache"
	"github.com/listgate/listgate/pkg/apikey"
	"github.com/listgate/listgate/pkg/ratelimit"
)

// Every response that carries X-RateLimit-* carries the same decision as
// draft-ietf-httpapi-ratelimit-headers' RateLimit-Policy and RateLimit,
// cached hits and 429s included.
func TestRateLimitHeaders(t *testing.T) {
	key := mustKey(t)
	cache, err := respcache.New(respcache.Options{MaxBytes: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cache.Close)
	// 17.4 s before the end of a window.
	now := time.Date(2026, 3, 1, 10, 20, 42, 600_000_000, time.UTC)
	g, err := New(Config{
		Origins: testOrigins(t, "http://127.0.0.1:1"),
		Keys: fixedKeys{hash: apikey.Hash(key), info: keycache.Info{Active: true, KeyID: "k1", SiteID: testSite,
			Scopes: apikey.ReadOnly, Limit: 3}},
		Limiter: ratelimit.NewLocal(ratelimit.LocalOptions{}), PublicLimiter: ratelimit.NewLocal(ratelimit.LocalOptions{}),
		Cache: cache, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), OriginTimeout: 200 * time.Millisecond,
		Now: func() time.Time { return now },
	})
	if err != nil {
		t.Fatal(err)
	}
	path := "/v1/sites/" + testSite + "/listings"
	k := mustAppendKey(t, cache, []byte(testSite), []byte(path), nil)
	cache.Put(k, 200, []byte("application/json"), []byte("max-age=600"), []byte(`"e"`), []byte(`{"data":[]}`), time.Now())
	reset := strconv.FormatInt(time.Date(2026, 3, 1, 10, 21, 0, 0, time.UTC).Unix(), 10)
	for i, want := range []struct {
		status               int
		remaining, ratelimit string
	}{
		{200, "2", `"site";r=2;t=18`},
		{304, "1", `"site";r=1;t=18`},
		{200, "0", `"site";r=0;t=18`},
		{429, "0", `"site";r=0;t=18`},
	} {
		hdr := map[string]string{"X-API-Key": key}
		if want.status == 304 {
			hdr["If-None-Match"] = `"e"`
		}
		ctx := request("GET", path, hdr)
		g.Handler(ctx)
		h := &ctx.Response.Header
		if ctx.Response.StatusCode() != want.status {
			t.Fatalf("request %d: %d %s", i, ctx.Response.StatusCode(), ctx.Response.Body())
		}
		if want.status != 429 && string(h.Peek("X-Cache")) != "HIT" {
			t.Errorf("request %d: X-Cache %q", i, h.Peek("X-Cache"))
		}
		for name, v := range map[string]string{
			"X-RateLimit-Limit": "3", "X-RateLimit-Remaining": want.remaining, "X-RateLimit-Reset": reset,
			"RateLimit-Policy": `"site";q=3;w=60`, "RateLimit": want.ratelimit,
		} {
			if got := string(h.Peek(name)); got != v {
				t.Errorf("request %d (%d): %s %q, want %q", i, want.status, name, got, v)
			}
		}
		if want.status == 429 && string(h.Peek("Retry-After")) != "18" {
			t.Errorf("Retry-After %q", h.Peek("Retry-After"))
		}
	}

	// An unlimited plan carries none of them.
	g2, cache2 := newTestGateway(t, key, 0)
	cache2.Put(mustAppendKey(t, cache2, []byte(testSite), []byte(path), nil), 200, []byte("application/json"),
		[]byte("max-age=600"), []byte(`"e"`), []byte(`{"data":[]}`), time.Now())
	ctx := request("GET", path, map[string]string{"X-API-Key": key})
	g2.Handler(ctx)
	for _, name := range []string{"X-RateLimit-Limit", "RateLimit-Policy", "RateLimit"} {
		if v := ctx.Response.Header.Peek(name); ctx.Response.StatusCode() != 200 || len(v) != 0 {
			t.Errorf("unlimited: %d %s %q", ctx.Response.StatusCode(), name, v)
		}
	}
}

func TestRateResetSeconds(t *testing.T) {
	end := time.Date(2026, 3, 1, 10, 21, 0, 0, time.UTC)
	for name, tc := range map[string]struct {
		d    ratelimit.Decision
		now  time.Time
		want int64
	}{
		"window start":     {ratelimit.Decision{Reset: end}, end.Add(-time.Minute), 60},
		"fraction rounded": {ratelimit.Decision{Reset: end}, end.Add(-1500 * time.Millisecond), 2},
		"last instant":     {ratelimit.Decision{Reset: end}, end.Add(-time.Nanosecond), 1},
		"clock past reset": {ratelimit.Decision{Reset: end}, end.Add(time.Second), 0},
		"rejection":        {ratelimit.Decision{Reset: end, RetryAfter: 7}, end.Add(-3 * time.Second), 7},
	} {
		if got := rateResetSeconds(tc.d, tc.now); got != tc.want {
			t.Errorf("%s: %d, want %d", name, got, tc.want)
		}
	}
}
