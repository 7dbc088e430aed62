package store_test

import (
	"bytes"
	"context"
	"sync"
	"testing"
	"time"

	"github.com/listgate/listgate/origin/store"
	"github.com/listgate/listgate/origin/store/storetest"
)

func TestBackoffDelay(t *testing.T) {
	b := store.Backoff{}
	for n, want := range map[int]time.Duration{
		0: 0, 4: 0, 5: time.Second, 6: 2 * time.Second, 7: 4 * time.Second, 14: 512 * time.Second,
		15: 15 * time.Minute, 16: 15 * time.Minute, 1000: 15 * time.Minute, 1 << 30: 15 * time.Minute,
	} {
		if got := b.Delay(n); got != want {
			t.Errorf("Delay(%d) = %v, want %v", n, got, want)
		}
	}
}

// Two origins (two pools on one database) count the same attempts; after
// Free attempts each waits twice the last; a refused attempt counts
// nothing; Reset and the Forget period clear a key; keys are stored hashed.
func TestBackoffLimiterSharedByOrigins(t *testing.T) {
	ctx := context.Background()
	url := storetest.URL(t)
	a, b := mustOpen(t, url), mustOpen(t, url)
	policy := store.Backoff{Free: 3, First: time.Second, Max: 4 * time.Second, Forget: time.Minute}
	la, lb := a.NewBackoffLimiter("signin_email_ip", policy), b.NewBackoffLimiter("signin_email_ip", policy)
	const key = "ann@example.com\n192.0.2.1"
	t0 := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return t0.Add(d) }

	for i, l := range []*store.BackoffLimiter{la, lb, la} {
		if ok, _ := l.Attempt(key, t0); !ok {
			t.Fatalf("free attempt %d refused", i+1)
		}
	}
	steps := []struct {
		l    *store.BackoffLimiter
		at   time.Duration
		ok   bool
		wait time.Duration
	}{
		{lb, 0, false, time.Second},                      // 3 made: wait 1 s from the last
		{la, 999 * time.Millisecond, false, time.Second}, // rounded up to whole seconds
		{lb, time.Second, true, 0},                       // the 4th: next waits 2 s
		{la, 2 * time.Second, false, time.Second},        // 1 s of the 2 left
		{lb, 3 * time.Second, true, 0},                   // the 5th: next waits 4 s
		{la, 6 * time.Second, false, time.Second},        // the refusals above counted nothing
		{la, 7 * time.Second, true, 0},                   // the 6th: next waits 4 s (Max)
		{lb, 7*time.Second + time.Millisecond, false, 4 * time.Second},
	}
	for i, s := range steps {
		ok, wait := s.l.Attempt(key, at(s.at))
		if ok != s.ok || wait != s.wait {
			t.Fatalf("step %d at +%v: ok %v wait %v; want %v %v", i, s.at, ok, wait, s.ok, s.wait)
		}
	}
	if ok, _ := la.Attempt("bob@example.com\n192.0.2.1", at(7*time.Second)); !ok {
		t.Error("another key was refused")
	}
	// Reset forgets the key at once, at either origin.
	lb.Reset(key)
	for i := range 3 {
		if ok, _ := la.Attempt(key, at(8*time.Second)); !ok {
			t.Fatalf("attempt %d after Reset refused", i+1)
		}
	}
	if ok, _ := la.Attempt(key, at(8*time.Second)); ok {
		t.Fatal("the count did not restart after Reset")
	}
	// Forget after the last attempt, the count starts again.
	if ok, _ := lb.Attempt(key, at(8*time.Second+time.Minute)); !ok {
		t.Fatal("refused after the Forget period")
	}
	if ok, _ := lb.Attempt(key, at(8*time.Second+time.Minute)); !ok {
		t.Fatal("the count did not restart after the Forget period")
	}

	// Concurrent attempts cannot slip past the count: of 20 at once on a
	// fresh key, exactly Free pass.
	var wg sync.WaitGroup
	var mu sync.Mutex
	passed := 0
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l := la
			if i%2 == 1 {
				l = lb
			}
			if ok, _ := l.Attempt("race@example.com\n192.0.2.9", t0); ok {
				mu.Lock()
				passed++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if passed != policy.Free {
		t.Errorf("%d concurrent attempts passed, want %d", passed, policy.Free)
	}

	rows, err := a.Pool.Query(ctx, `SELECT key_hash FROM limit_windows`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var h []byte
		if err := rows.Scan(&h); err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(h, []byte("example.com")) {
			t.Error("a key is stored in the clear")
		}
	}
}

// RecentKeys remembers a key for its ttl after the last mark, at every
// origin; a mark extends it.
func TestRecentKeys(t *testing.T) {
	url := storetest.URL(t)
	a, b := mustOpen(t, url), mustOpen(t, url)
	ka, kb := a.NewRecentKeys("signin_known", time.Hour), b.NewRecentKeys("signin_known", time.Hour)
	t0 := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	if kb.Recent("k", t0) {
		t.Fatal("unmarked key is recent")
	}
	ka.Mark("k", t0)
	kb.Mark("k", t0.Add(30*time.Minute))
	for d, want := range map[time.Duration]bool{0: true, 89 * time.Minute: true, 90 * time.Minute: false} {
		if got := kb.Recent("k", t0.Add(d)); got != want {
			t.Errorf("Recent at +%v = %v, want %v", d, got, want)
		}
	}
	if other := a.NewRecentKeys("other", time.Hour); other.Recent("k", t0) {
		t.Error("another scope sees the key")
	}
}
