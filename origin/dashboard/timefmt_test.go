package dashboard

import (
	"testing"
	"time"

	"github.com/listgate/listgate/origin/store"
)

func TestTimeFormats(t *testing.T) {
	syd := siteLocation(store.Site{Timezone: "Australia/Sydney"})
	utc := siteLocation(store.Site{Timezone: "UTC"})
	if syd.String() != "Australia/Sydney" || utc != time.UTC {
		t.Fatalf("locations %v %v", syd, utc)
	}
	if siteLocation(store.Site{Timezone: "Mars/Olympus"}) != time.UTC || siteLocation(store.Site{}) != time.UTC {
		t.Fatal("an unknown or empty zone is not UTC")
	}
	instant := time.Date(2026, 11, 26, 3, 5, 9, 0, time.UTC)
	for _, tc := range []struct {
		loc  *time.Location
		t    any
		want string
	}{
		// The same instant: different local times, each zone named.
		{syd, instant, "26 Nov 2026 14:05 AEDT"},
		{utc, instant, "26 Nov 2026 03:05 UTC"},
		{nil, instant, "26 Nov 2026 03:05 UTC"},
		{syd, &instant, "26 Nov 2026 14:05 AEDT"},
		// The day turns in Sydney, not in UTC.
		{syd, time.Date(2026, 11, 26, 13, 30, 0, 0, time.UTC), "27 Nov 2026 00:30 AEDT"},
		// Daylight saving starts on 4 Oct 2026 at 02:00 AEST: the next
		// minute is 03:00 AEDT.
		{syd, time.Date(2026, 10, 3, 15, 59, 0, 0, time.UTC), "4 Oct 2026 01:59 AEST"},
		{syd, time.Date(2026, 10, 3, 16, 0, 0, 0, time.UTC), "4 Oct 2026 03:00 AEDT"},
		// …and ends on 5 Apr 2026 at 03:00 AEDT: 02:30 happens twice.
		{syd, time.Date(2026, 4, 4, 15, 30, 0, 0, time.UTC), "5 Apr 2026 02:30 AEDT"},
		{syd, time.Date(2026, 4, 4, 16, 30, 0, 0, time.UTC), "5 Apr 2026 02:30 AEST"},
		{syd, time.Time{}, "—"},
		{syd, (*time.Time)(nil), "—"},
		{syd, "not a time", "—"},
	} {
		if got := formatMinute(tc.loc, tc.t); got != tc.want {
			t.Errorf("formatMinute(%v, %v) = %q, want %q", tc.loc, tc.t, got, tc.want)
		}
	}
	if got := formatSecond(syd, instant); got != "26 Nov 2026 14:05:09 AEDT" {
		t.Errorf("formatSecond: %q", got)
	}
	if got := zoneName(syd, time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC)); got != "AEST" {
		t.Errorf("zone in July: %q", got)
	}
}
