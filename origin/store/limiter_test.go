package store_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/listgate/listgate/origin/store"
	"github.com/listgate/listgate/origin/store/storetest"
)

// Two origins (two pools on one database) share a WindowLimiter's counts;
// windows start at a key's first event and run out; scopes and keys are
// apart; keys are stored hashed.
func TestWindowLimiterSharedByOrigins(t *testing.T) {
	ctx := context.Background()
	url := storetest.URL(t)
	a, b := mustOpen(t, url), mustOpen(t, url)
	la, lb := a.NewWindowLimiter("signin_email", 3, time.Minute), b.NewWindowLimiter("signin_email", 3, time.Minute)
	other := a.NewWindowLimiter("pairing_start_ip", 3, time.Minute)
	t0 := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)

	for i, l := range []*store.WindowLimiter{la, lb, la} {
		if ok, _ := l.Allow("ann@example.com", t0.Add(time.Duration(i)*time.Second)); !ok {
			t.Fatalf("event %d refused", i+1)
		}
		l.Add("ann@example.com", t0.Add(time.Duration(i)*time.Second))
	}
	ok, retry := lb.Allow("ann@example.com", t0.Add(10*time.Second))
	if ok || retry != 50*time.Second {
		t.Fatalf("fourth event: ok %v, retry %v; want refused, 50s", ok, retry)
	}
	if ok, _ := la.Allow("bob@example.com", t0.Add(10*time.Second)); !ok {
		t.Error("another key was refused")
	}
	if ok, _ := other.Allow("ann@example.com", t0.Add(10*time.Second)); !ok {
		t.Error("another scope was refused")
	}
	// The window runs out a minute after its first event; the next event
	// opens a new one.
	if ok, _ := la.Allow("ann@example.com", t0.Add(time.Minute)); !ok {
		t.Fatal("refused after the window")
	}
	la.Add("ann@example.com", t0.Add(time.Minute))
	for range 2 {
		lb.Add("ann@example.com", t0.Add(time.Minute+time.Second))
	}
	if ok, _ := la.Allow("ann@example.com", t0.Add(time.Minute+2*time.Second)); ok {
		t.Error("the new window did not count")
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
	// Run-out windows are swept.
	swept, err := a.Sweep(ctx, t0.Add(time.Hour), 48*time.Hour)
	if err != nil || swept.LimitWindows != 1 {
		t.Fatalf("swept %+v, %v; want 1 limit window", swept, err)
	}
}
