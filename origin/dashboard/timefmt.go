package dashboard

import (
	"time"

	"github.com/listgate/listgate/origin/store"
)

// The layouts of the dashboard's times. Each names its zone, so that a
// time is never read in the wrong one: "26 Nov 2026 14:05 AEDT".
const (
	layoutMinute = "2 Jan 2006 15:04 MST"
	layoutSecond = "2 Jan 2006 15:04:05 MST"
	layoutClock  = "15:04"
)

// siteLocation is the site's time zone, UTC when it has none or it is unknown.
func siteLocation(s store.Site) *time.Location {
	if s.Timezone != "" {
		if loc, err := time.LoadLocation(s.Timezone); err == nil {
			return loc
		}
	}
	return time.UTC
}

// inZone formats t in loc (UTC when nil) with layout; "—" for a zero or
// nil time. t is a time.Time or a *time.Time.
func inZone(loc *time.Location, t any, layout string) string {
	var v time.Time
	switch x := t.(type) {
	case time.Time:
		v = x
	case *time.Time:
		if x == nil {
			return "—"
		}
		v = *x
	default:
		return "—"
	}
	if v.IsZero() {
		return "—"
	}
	if loc == nil {
		loc = time.UTC
	}
	return v.In(loc).Format(layout)
}

// formatMinute is a time to the minute in loc with its zone's
// abbreviation: "26 Nov 2026 14:05 AEDT", "26 Nov 2026 03:05 UTC".
func formatMinute(loc *time.Location, t any) string { return inZone(loc, t, layoutMinute) }

// formatSecond is formatMinute with seconds.
func formatSecond(loc *time.Location, t any) string { return inZone(loc, t, layoutSecond) }

// zoneName is the abbreviation of loc's zone at t ("AEDT", "UTC").
func zoneName(loc *time.Location, t time.Time) string {
	if loc == nil {
		loc = time.UTC
	}
	name, _ := t.In(loc).Zone()
	return name
}

// timeFuncs are the template functions that show times. Every page has
// .Zone, the time zone its times are shown in (see render): the site's
// for a site's pages, UTC for the others. Templates call them with it:
//
//	{{date $.Zone .CreatedAt}}  → 26 Nov 2026 14:05 AEDT ("—" for a zero or nil time)
//	{{stamp $.Zone .At}}        → 26 Nov 2026 14:05:09 AEDT
//	{{clock $.Zone .Minute}}    → 14:05 (the zone said once elsewhere on the page)
//	{{zone $.Zone .Minute}}     → AEDT
func timeFuncs() map[string]any {
	return map[string]any{
		"date":  formatMinute,
		"stamp": formatSecond,
		"clock": func(loc *time.Location, t time.Time) string { return inZone(loc, t, layoutClock) },
		"zone":  zoneName,
	}
}
