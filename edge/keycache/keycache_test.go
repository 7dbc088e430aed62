package keycache

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/listgate/listgate/pkg/apikey"
)

// origin is an introspector over a map, counting calls.
type origin struct {
	mu    sync.Mutex
	keys  map[[32]byte]Info
	calls atomic.Int64
	gate  chan struct{} // when set, calls wait for it
	down  atomic.Bool
}

func (o *origin) introspect(ctx context.Context, h [32]byte) (Info, error) {
	o.calls.Add(1)
	if o.gate != nil {
		<-o.gate
	}
	if o.down.Load() {
		return Info{}, errors.New("connection refused")
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.keys[h], nil
}

func hashOf(s string) [32]byte { return sha256.Sum256([]byte(s)) }

func mustCache(tb testing.TB, o *origin, opts Options) *Cache {
	tb.Helper()
	c, err := New(o.introspect, opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(c.Close)
	return c
}

func TestConcurrentMissesMakeOneCall(t *testing.T) {
	o := &origin{keys: map[[32]byte]Info{hashOf("a"): {Active: true, KeyID: "k", SiteID: "s", Scopes: apikey.ReadOnly, Limit: 60}},
		gate: make(chan struct{})}
	c := mustCache(t, o, Options{})
	var wg sync.WaitGroup
	results := make(chan Info, 100)
	for i := 0; i < 100; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			info, err := c.Lookup(context.Background(), hashOf("a"))
			if err != nil {
				t.Error(err)
			}
			results <- info
		}()
	}
	for o.calls.Load() == 0 {
		time.Sleep(time.Millisecond) // wait until one goroutine is in flight
	}
	close(o.gate)
	wg.Wait()
	close(results)
	for info := range results {
		if !info.Active || info.SiteID != "s" {
			t.Fatalf("info %+v", info)
		}
	}
	if n := o.calls.Load(); n != 1 {
		t.Errorf("%d introspections for 100 concurrent misses, want 1", n)
	}
	if _, err := c.Lookup(context.Background(), hashOf("a")); err != nil || o.calls.Load() != 1 {
		t.Errorf("hit went to the origin (%d calls)", o.calls.Load())
	}
	// A goroutine that started after the answer was cached counts as a hit.
	if hits, misses := c.Stats(); hits+misses != 101 || misses == 0 {
		t.Errorf("stats %d hits %d misses for 101 lookups", hits, misses)
	}
}

func TestNegativeAndExpiry(t *testing.T) {
	o := &origin{keys: map[[32]byte]Info{}}
	// The second look-up must come within NegativeTTL of the first: a
	// second leaves room for a machine so loaded that the test goroutine
	// waits a tenth of a second for a core (100 ms did not).
	c := mustCache(t, o, Options{TTL: time.Second, NegativeTTL: time.Second})
	info, err := c.Lookup(context.Background(), hashOf("unknown"))
	if err != nil || info.Active {
		t.Fatalf("unknown key: %+v %v", info, err)
	}
	c.Lookup(context.Background(), hashOf("unknown"))
	if o.calls.Load() != 1 {
		t.Fatalf("unknown key not cached: %d calls", o.calls.Load())
	}
	// Created after being probed: visible once the negative entry expires.
	o.mu.Lock()
	o.keys[hashOf("unknown")] = Info{Active: true, KeyID: "k", SiteID: "s", Scopes: apikey.LeadsWrite}
	o.mu.Unlock()
	deadline := time.Now().Add(5 * time.Second)
	for {
		info, _ = c.Lookup(context.Background(), hashOf("unknown"))
		if info.Active {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("negative entry never expired")
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Revoked at the origin with no event: refused once the TTL runs out.
	o.mu.Lock()
	o.keys[hashOf("unknown")] = Info{}
	o.mu.Unlock()
	deadline = time.Now().Add(5 * time.Second)
	for info.Active {
		if time.Now().After(deadline) {
			t.Fatal("cached key never expired")
		}
		time.Sleep(20 * time.Millisecond)
		info, _ = c.Lookup(context.Background(), hashOf("unknown"))
	}
}

func TestRevokeBeatsAnInFlightAnswer(t *testing.T) {
	o := &origin{keys: map[[32]byte]Info{hashOf("k"): {Active: true, KeyID: "k", SiteID: "s", Scopes: apikey.ReadOnly}},
		gate: make(chan struct{})}
	c := mustCache(t, o, Options{})
	done := make(chan Info)
	go func() {
		info, _ := c.Lookup(context.Background(), hashOf("k"))
		done <- info
	}()
	for o.calls.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	// The key is revoked while its (stale) answer is on the way.
	o.mu.Lock()
	o.keys[hashOf("k")] = Info{}
	o.mu.Unlock()
	h := hashOf("k")
	if err := c.Revoke(hex.EncodeToString(h[:])); err != nil {
		t.Fatal(err)
	}
	close(o.gate)
	if info := <-done; info.Active {
		t.Error("lookup racing a revocation returned the key as active")
	}
	if info, _ := c.Lookup(context.Background(), hashOf("k")); info.Active {
		t.Error("revoked key cached as active")
	}
	if err := c.Revoke("zz"); err == nil {
		t.Error("bad hash accepted")
	}
}

func TestPlanLimitAndPurge(t *testing.T) {
	o := &origin{keys: map[[32]byte]Info{
		hashOf("a"): {Active: true, KeyID: "a", SiteID: "s", Scopes: apikey.ReadOnly, Limit: 60},
		hashOf("b"): {Active: true, KeyID: "b", SiteID: "s", Scopes: apikey.LeadsWrite, Limit: 60},
	}}
	c := mustCache(t, o, Options{})
	c.Lookup(context.Background(), hashOf("a"))
	c.Lookup(context.Background(), hashOf("b"))
	c.SetPlanLimit("s", 600)
	for _, k := range []string{"a", "b"} {
		if info, _ := c.Lookup(context.Background(), hashOf(k)); info.Limit != 600 {
			t.Errorf("key %s limit %d after the plan change", k, info.Limit)
		}
	}
	calls := o.calls.Load()
	c.Purge()
	c.Lookup(context.Background(), hashOf("a"))
	if o.calls.Load() != calls+1 {
		t.Error("purge kept the key")
	}
}

func TestOriginDownIsUnavailable(t *testing.T) {
	o := &origin{keys: map[[32]byte]Info{hashOf("a"): {Active: true, KeyID: "a", SiteID: "s", Scopes: apikey.ReadOnly}}}
	c := mustCache(t, o, Options{})
	c.Lookup(context.Background(), hashOf("a"))
	o.down.Store(true)
	if info, err := c.Lookup(context.Background(), hashOf("a")); err != nil || !info.Active {
		t.Errorf("cached key with the origin down: %+v %v", info, err)
	}
	if _, err := c.Lookup(context.Background(), hashOf("b")); !errors.Is(err, ErrUnavailable) {
		t.Errorf("uncached key with the origin down: %v, want ErrUnavailable", err)
	}
}

// The origin says how long its answer may be cached (ttl_seconds); the
// edge's TTL only caps it.
func TestOriginTTL(t *testing.T) {
	short, long := hashOf("short"), hashOf("long")
	o := &origin{keys: map[[32]byte]Info{
		short: {Active: true, KeyID: "k1", SiteID: "s1", TTL: 50 * time.Millisecond},
		long:  {Active: true, KeyID: "k2", SiteID: "s1", TTL: time.Hour},
	}}
	c := mustCache(t, o, Options{TTL: time.Hour})
	for _, h := range [][32]byte{short, long} {
		if _, err := c.Lookup(context.Background(), h); err != nil {
			t.Fatal(err)
		}
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, ok := c.Cached(&short); !ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("an answer the origin let the edge keep 50 ms is still cached after 5 s")
		}
	}
	if _, ok := c.Cached(&long); !ok {
		t.Error("the other key expired too")
	}
	capped := mustCache(t, o, Options{TTL: 50 * time.Millisecond})
	capped.Lookup(context.Background(), long)
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, ok := capped.Cached(&long); !ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the edge's TTL does not cap the origin's")
		}
	}
}

// A cached key costs no allocation (the hash is passed by address: a key
// on the caller's stack would be moved to the heap, since ristretto hashes
// through a function value).
func TestCachedAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector changes allocation counts")
	}
	o := &origin{keys: map[[32]byte]Info{hashOf("a"): {Active: true, KeyID: "k", SiteID: "s", Scopes: apikey.ReadOnly, Limit: 60,
		CORS: []string{"https://a.example"}}}}
	c := mustCache(t, o, Options{})
	if _, err := c.Lookup(context.Background(), hashOf("a")); err != nil {
		t.Fatal(err)
	}
	h := hashOf("a")
	if n := testing.AllocsPerRun(100, func() {
		if info, ok := c.Cached(&h); !ok || info.Limit != 60 || len(info.CORS) != 1 {
			t.Fatalf("cached %+v %v", info, ok)
		}
	}); n != 0 {
		t.Errorf("Cached: %v allocations", n)
	}
}
