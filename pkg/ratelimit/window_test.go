package ratelimit

import (
	"strings"
	"testing"
	"time"
)

func TestWindowLimiter(t *testing.T) {
	l := NewWindowLimiter(3, time.Minute)
	for i := range 3 {
		if ok, _ := l.Allow("a", t0); !ok {
			t.Fatalf("event %d refused", i+1)
		}
		l.Add("a", t0.Add(time.Duration(i)*time.Second))
	}
	ok, wait := l.Allow("a", t0.Add(30*time.Second))
	if ok || wait != 30*time.Second {
		t.Errorf("fourth event: %v, retry in %s; want refused for 30s", ok, wait)
	}
	if ok, _ := l.Allow("b", t0); !ok {
		t.Error("another key is limited")
	}
	if ok, wait := l.Allow("a", t0.Add(time.Minute-time.Millisecond)); ok || wait != time.Second {
		t.Errorf("just before the window ends: %v %s; want refused for at least 1s", ok, wait)
	}
	if ok, _ := l.Allow("a", t0.Add(time.Minute)); !ok {
		t.Error("a new window is still limited")
	}
	l.Add("a", t0.Add(time.Minute))
	if ok, _ := l.Allow("a", t0.Add(time.Minute)); !ok {
		t.Error("the new window counts the old events")
	}
}

func TestWindowLimiterBoundsMemory(t *testing.T) {
	l := NewWindowLimiter(1, time.Minute)
	l.maxKey = 10
	for i := range 25 {
		l.Add(strings.Repeat("k", i+1), t0)
	}
	if len(l.keys) > 10 {
		t.Errorf("%d keys tracked, bound 10", len(l.keys))
	}
	l.Add("late", t0.Add(2*time.Minute))
	if len(l.keys) > 10 {
		t.Errorf("%d keys tracked, bound 10", len(l.keys))
	}
}
