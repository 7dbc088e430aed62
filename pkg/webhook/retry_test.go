package webhook

import (
	"math"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestBackoffBounds(t *testing.T) {
	lowest := func(int64) int64 { return 0 }
	highest := func(n int64) int64 { return n - 1 }
	for _, tc := range []struct {
		name    string
		attempt int
		d       time.Duration // the delay before jitter
	}{
		{"first", 1, time.Second},
		{"second", 2, 2 * time.Second},
		{"third", 3, 4 * time.Second},
		{"tenth", 10, 512 * time.Second},
		{"twelfth", 12, 2048 * time.Second},
		{"thirteenth, capped", 13, time.Hour},
		{"hundredth", 100, time.Hour},
		{"largest", math.MaxInt, time.Hour},
		{"zero counts as 1", 0, time.Second},
		{"negative counts as 1", -7, time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := backoff(tc.attempt, lowest); got != tc.d/2 {
				t.Errorf("shortest = %s, want %s", got, tc.d/2)
			}
			if got := backoff(tc.attempt, highest); got != tc.d {
				t.Errorf("longest = %s, want %s", got, tc.d)
			}
			var asked int64
			backoff(tc.attempt, func(n int64) int64 { asked = n; return 0 })
			if want := int64(tc.d/2) + 1; asked != want {
				t.Errorf("jitter drawn from [0, %d), want [0, %d)", asked, want)
			}
			for range 200 {
				if got := Backoff(tc.attempt); got < tc.d/2 || got > tc.d {
					t.Fatalf("Backoff(%d) = %s, outside [%s, %s]", tc.attempt, got, tc.d/2, tc.d)
				}
			}
		})
	}
}

// TestBackoffSpreads checks that the jitter is not constant: many deliveries
// that failed together do not come back together.
func TestBackoffSpreads(t *testing.T) {
	seen := map[time.Duration]bool{}
	for range 100 {
		seen[Backoff(10)] = true
	}
	if len(seen) < 50 {
		t.Fatalf("100 draws of Backoff(10) gave %d values", len(seen))
	}
}

func TestNextAttempt(t *testing.T) {
	created := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name       string
		now        time.Time
		attempt    int
		retryAfter time.Duration
		min, max   time.Duration // bounds of next - now
		ok         bool
	}{
		{"first failure", created, 1, 0, 500 * time.Millisecond, time.Second, true},
		{"Retry-After longer", created, 1, 10 * time.Minute, 10 * time.Minute, 10 * time.Minute, true},
		{"Retry-After shorter", created.Add(time.Hour), 13, time.Second, 30 * time.Minute, time.Hour, true},
		{"Retry-After capped", created, 1, 1000 * time.Hour, MaxRetryAfter, MaxRetryAfter, true},
		{"negative Retry-After", created, 2, -time.Hour, time.Second, 2 * time.Second, true},
		{"past the deadline", created.Add(RetryFor - time.Minute), 40, 0, 30 * time.Minute, time.Hour, false},
		{"Retry-After past the deadline", created.Add(RetryFor - 2*time.Hour), 3, 3 * time.Hour, 3 * time.Hour, 3 * time.Hour, false},
		{"just before the deadline", created.Add(RetryFor - 2*time.Hour), 40, 0, 30 * time.Minute, time.Hour, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			next, ok := NextAttempt(created, tc.now, tc.attempt, tc.retryAfter)
			if wait := next.Sub(tc.now); wait < tc.min || wait > tc.max || ok != tc.ok {
				t.Fatalf("NextAttempt = now+%s, %v; want now+[%s, %s], %v", wait, ok, tc.min, tc.max, tc.ok)
			}
		})
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		in   string
		want time.Duration
		ok   bool
	}{
		{"seconds", "120", 2 * time.Minute, true},
		{"zero", "0", 0, true},
		{"leading zeros", "007", 7 * time.Second, true},
		{"white space", " \t30 ", 30 * time.Second, true},
		{"a day", "86400", MaxRetryAfter, true},
		{"over a day", "86401", MaxRetryAfter, true},
		{"huge", strings.Repeat("9", 400), MaxRetryAfter, true},
		{"IMF-fixdate", "Sun, 01 Mar 2026 10:05:00 GMT", 5 * time.Minute, true},
		{"RFC 850 date", "Sunday, 01-Mar-26 10:00:30 GMT", 30 * time.Second, true},
		{"asctime date", "Sun Mar  1 11:00:00 2026", time.Hour, true},
		{"date in the past", "Sat, 28 Feb 2026 10:00:00 GMT", 0, true},
		{"date far ahead", "Fri, 01 Jan 2100 00:00:00 GMT", MaxRetryAfter, true},
		{"empty", "", 0, false},
		{"negative", "-5", 0, false},
		{"plus", "+5", 0, false},
		{"fraction", "1.5", 0, false},
		{"unit", "5s", 0, false},
		{"hex", "0x10", 0, false},
		{"inner space", "1 0", 0, false},
		{"garbage", "soon", 0, false},
		{"date without zone", "Sun, 01 Mar 2026 10:05:00", 0, false},
		{"ISO date", "2026-03-01T10:05:00Z", 0, false},
		{"unicode digits", "١٢", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := ParseRetryAfter(tc.in, now)
			if got != tc.want || ok != tc.ok {
				t.Fatalf("ParseRetryAfter(%q) = %s, %v; want %s, %v", tc.in, got, ok, tc.want, tc.ok)
			}
		})
	}
}

// FuzzParseRetryAfter checks that ParseRetryAfter never panics, returns a
// delay in [0, MaxRetryAfter], 0 when it fails, and agrees with the
// standard library's reading of an HTTP-date.
func FuzzParseRetryAfter(f *testing.F) {
	for _, s := range []string{"120", "0", "", "-1", "1.5", "99999999999999999999999", "Sun, 01 Mar 2026 10:05:00 GMT",
		"Sunday, 01-Mar-26 10:00:30 GMT", "Sun Mar  1 11:00:00 2026", " 5 ", "\t", "Mon, 31 Dec 9999 23:59:59 GMT"} {
		f.Add(s)
	}
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, v string) {
		d, ok := ParseRetryAfter(v, now)
		if d < 0 || d > MaxRetryAfter || (!ok && d != 0) {
			t.Fatalf("ParseRetryAfter(%q) = %s, %v", v, d, ok)
		}
		trimmed := strings.Trim(v, " \t")
		if isDigits(trimmed) {
			if !ok {
				t.Fatalf("ParseRetryAfter(%q) refused delay-seconds", v)
			}
			return
		}
		when, err := http.ParseTime(trimmed)
		if (err == nil) != ok {
			t.Fatalf("ParseRetryAfter(%q) = %s, %v; http.ParseTime = %v", v, d, ok, err)
		}
		if ok && d != min(max(when.Sub(now), 0), MaxRetryAfter) {
			t.Fatalf("ParseRetryAfter(%q) = %s, but the date is %s", v, d, when)
		}
	})
}
