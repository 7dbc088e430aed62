package dashboard

import (
	"testing"
	"time"

	"github.com/listgate/listgate/origin/store"
)

func TestUsageBucketsAcrossDST(t *testing.T) {
	syd := siteLocation(store.Site{Timezone: "Australia/Sydney"})
	now := time.Date(2026, 10, 20, 12, 0, 0, 0, syd)
	starts, end := usageBuckets("day", now, syd)
	if len(starts) != 30 || !starts[0].Equal(time.Date(2026, 9, 21, 0, 0, 0, 0, syd)) ||
		!end.Equal(time.Date(2026, 10, 21, 0, 0, 0, 0, syd)) {
		t.Fatalf("days %v … %v", starts[0], end)
	}
	for i, s := range starts {
		next := end
		if i+1 < len(starts) {
			next = starts[i+1]
		}
		want := 24 * time.Hour
		if s.Day() == 4 && s.Month() == time.October {
			want = 23 * time.Hour
		}
		if next.Sub(s) != want {
			t.Errorf("%v lasts %v, want %v", s, next.Sub(s), want)
		}
	}
	starts, end = usageBuckets("month", now, syd)
	if len(starts) != 12 || !starts[0].Equal(time.Date(2025, 11, 1, 0, 0, 0, 0, syd)) ||
		!end.Equal(time.Date(2026, 11, 1, 0, 0, 0, 0, syd)) {
		t.Fatalf("months %v … %v", starts[0], end)
	}
	starts, end = usageBuckets("hour", now.Add(30*time.Second), syd)
	if len(starts) != 60 || !end.Equal(now.Add(time.Minute)) || !starts[59].Equal(now) {
		t.Fatalf("minutes %v … %v", starts[0], end)
	}
}
