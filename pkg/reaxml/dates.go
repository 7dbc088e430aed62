package reaxml

import (
	"errors"
	"strings"
	"time"
)

var errDate = errors.New("unreadable date")

// ParseDate reads a REAXML date or date-time in loc (nil means UTC).
//
// It accepts the layouts real feeds use: 2009-01-01-12:30:00,
// 2009-01-01T12:30, 2009-01-01T12:30:00(.000), 2009-01-01 12:30:00,
// 20090101-123000, 20090101, 2009-01-01, day-first dates (21/01/2009,
// 21-01-2009, 21-Jan-2009, 21 January 2009), single-digit months, days and
// hours, a trailing AM/PM (any case, with or without a space or dots), a
// leading weekday name, and a trailing zone (Z, +10:00, +1000), in which
// case the instant is converted to loc. Anything else is an error; the zero
// time is never returned for text that is not empty.
func ParseDate(s string, loc *time.Location) (time.Time, error) {
	if loc == nil {
		loc = time.UTC
	}
	p := &scanner{s: strings.TrimSpace(s)}
	p.skipWeekday()
	y, mo, d, compact, ok := p.date()
	if !ok {
		return time.Time{}, errDate
	}
	var c clock
	zone := loc
	if !p.done() {
		if !p.dateTimeSep() {
			return time.Time{}, errDate
		}
		if c, ok = p.clock(compact); !ok {
			return time.Time{}, errDate
		}
		p.spaces()
		if z, ok := p.zone(); ok {
			zone = z
		}
	}
	if !p.done() {
		return time.Time{}, errDate
	}
	t, ok := makeTime(y, mo, d, c, zone)
	if !ok {
		return time.Time{}, errDate
	}
	return t.In(loc), nil
}

// ParseInspection reads an inspection time such as
// "21-Dec-2010 11:00am to 1:00pm" in loc (nil means UTC). It also accepts
// single-digit days, "11am", "11.30am", 24-hour times, "-" or "–" instead
// of "to", a leading weekday, ISO dates, and a missing end time (end is then
// zero). An end without am/pm takes the start's; a start without am/pm
// before an end marked pm is read as afternoon when that keeps it before
// the end.
func ParseInspection(s string, loc *time.Location) (start, end time.Time, err error) {
	if loc == nil {
		loc = time.UTC
	}
	p := &scanner{s: strings.TrimSpace(s)}
	p.skipWeekday()
	y, mo, d, _, ok := p.date()
	if !ok {
		return start, end, errDate
	}
	p.spaces()
	p.word("from")
	p.spaces()
	a, ok := p.clock(false)
	if !ok {
		return start, end, errDate
	}
	p.spaces()
	hasEnd := p.word("to") || p.word("-") || p.word("–") || p.word("until")
	var b clock
	if hasEnd {
		p.spaces()
		if b, ok = p.clock(false); !ok {
			return start, end, errDate
		}
		p.spaces()
	}
	if !p.done() {
		return start, end, errDate
	}
	if hasEnd {
		a, b = inferMeridiem(a, b)
	}
	if start, ok = makeTime(y, mo, d, a, loc); !ok {
		return time.Time{}, end, errDate
	}
	if hasEnd {
		if end, ok = makeTime(y, mo, d, b, loc); !ok || end.Before(start) {
			return time.Time{}, time.Time{}, errors.New("inspection ends before it starts")
		}
	}
	return start, end, nil
}

// inferMeridiem fills in am/pm that one side of a time range leaves out.
func inferMeridiem(a, b clock) (clock, clock) {
	switch {
	case a.mer != noMer && b.mer == noMer && b.hour <= 12:
		b.mer = a.mer
		if a.mer == am && to24(b) < to24(a) {
			b.mer = pm // 11:00am to 1:00 means 1pm
		}
	case a.mer == noMer && b.mer == pm:
		if a.hour < 12 && a.hour+12 <= to24(b) {
			a.mer = pm // 2:00 to 3:00pm
		}
	case a.mer == noMer && b.mer == noMer:
		if b.hour < a.hour && b.hour < 12 {
			b.hour += 12 // 11:00 to 1:00
		}
	}
	return a, b
}

func to24(c clock) int {
	h := c.hour
	if c.mer != noMer {
		if h == 12 {
			h = 0
		}
		if c.mer == pm {
			h += 12
		}
	}
	return h
}

type meridiem int

const (
	noMer meridiem = iota
	am
	pm
)

type clock struct {
	hour, min, sec, nsec int
	mer                  meridiem
}

func makeTime(y, mo, d int, c clock, loc *time.Location) (time.Time, bool) {
	h := c.hour
	switch c.mer {
	case am, pm:
		if h < 0 || h > 12 {
			return time.Time{}, false
		}
		if h == 12 {
			h = 0
		}
		if c.mer == pm {
			h += 12
		}
	}
	if y < 1800 || y > 2200 || mo < 1 || mo > 12 || d < 1 || d > 31 ||
		h > 23 || c.min > 59 || c.sec > 60 {
		return time.Time{}, false
	}
	if c.sec == 60 {
		c.sec = 59 // leap second written by a careless clock
	}
	t := time.Date(y, time.Month(mo), d, h, c.min, c.sec, c.nsec, loc)
	if t.Day() != d {
		return time.Time{}, false // 30 February
	}
	return t, true
}

// scanner walks a date string.
type scanner struct {
	s string
	i int
}

func (p *scanner) done() bool { return p.i >= len(p.s) }

func (p *scanner) peek() byte {
	if p.done() {
		return 0
	}
	return p.s[p.i]
}

func (p *scanner) spaces() {
	for !p.done() && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

// digits reads between min and max ASCII digits.
func (p *scanner) digits(min, max int) (int, int, bool) {
	v, n := 0, 0
	for n < max && !p.done() && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
		v = v*10 + int(p.s[p.i]-'0')
		p.i++
		n++
	}
	return v, n, n >= min
}

// word consumes w (case-insensitive) if it comes next.
func (p *scanner) word(w string) bool {
	if len(p.s)-p.i >= len(w) && strings.EqualFold(p.s[p.i:p.i+len(w)], w) {
		p.i += len(w)
		return true
	}
	return false
}

// letters reads a run of ASCII letters.
func (p *scanner) letters() string {
	j := p.i
	for !p.done() && isLetter(p.s[p.i]) {
		p.i++
	}
	return p.s[j:p.i]
}

func isLetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

// skipWeekday skips "Sat", "Saturday," and the like.
func (p *scanner) skipWeekday() {
	j := p.i
	if !isWeekday(strings.ToLower(p.letters())) {
		p.i = j
		return
	}
	if p.peek() == '.' || p.peek() == ',' {
		p.i++
	}
	p.spaces()
}

func isWeekday(w string) bool {
	if len(w) < 3 {
		return false
	}
	for _, d := range []string{"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"} {
		if strings.HasPrefix(d, w) {
			return true
		}
	}
	return false
}

var months = []string{"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"}

func monthNumber(w string) int {
	w = strings.ToLower(w)
	if w == "sept" {
		return 9
	}
	full := []string{"january", "february", "march", "april", "may", "june", "july",
		"august", "september", "october", "november", "december"}
	for i, m := range months {
		if w == m || w == full[i] {
			return i + 1
		}
	}
	return 0
}

// date reads the date part. compact reports the YYYYMMDD form, after which a
// compact HHMMSS time may follow.
func (p *scanner) date() (y, mo, d int, compact, ok bool) {
	start := p.i
	first, n, ok := p.digits(1, 8)
	if !ok {
		return 0, 0, 0, false, false
	}
	switch {
	case n == 8:
		return first / 10000, first / 100 % 100, first % 100, true, true
	case n == 4: // year first
		sep := p.peek()
		if sep != '-' && sep != '/' && sep != '.' {
			return 0, 0, 0, false, false
		}
		p.i++
		if mo, _, ok = p.digits(1, 2); !ok || p.peek() != sep {
			return 0, 0, 0, false, false
		}
		p.i++
		if d, _, ok = p.digits(1, 2); !ok {
			return 0, 0, 0, false, false
		}
		return first, mo, d, false, true
	case n <= 2: // day first
		sep := p.peek()
		if sep != '-' && sep != '/' && sep != '.' && sep != ' ' {
			return 0, 0, 0, false, false
		}
		p.i++
		if isLetter(p.peek()) {
			if mo = monthNumber(p.letters()); mo == 0 {
				return 0, 0, 0, false, false
			}
		} else if mo, _, ok = p.digits(1, 2); !ok {
			return 0, 0, 0, false, false
		}
		if p.peek() != sep {
			return 0, 0, 0, false, false
		}
		p.i++
		if y, _, ok = p.digits(4, 4); !ok {
			return 0, 0, 0, false, false
		}
		return y, mo, first, false, true
	}
	p.i = start
	return 0, 0, 0, false, false
}

// dateTimeSep consumes what separates the date from the time.
func (p *scanner) dateTimeSep() bool {
	switch p.peek() {
	case '-', 'T', 't', ',', '@':
		p.i++
		p.spaces()
		return true
	case ' ', '\t':
		p.spaces()
		return true
	}
	return false
}

// clock reads a time of day: H:MM[:SS[.fff]], H.MM, H (with am/pm), and
// when compact is set HHMM or HHMMSS. A trailing am/pm is read too.
func (p *scanner) clock(compact bool) (clock, bool) {
	var c clock
	h, n, ok := p.digits(1, 6)
	if !ok {
		return c, false
	}
	switch {
	case compact && (n == 4 || n == 6):
		if n == 6 {
			c.hour, c.min, c.sec = h/10000, h/100%100, h%100
		} else {
			c.hour, c.min = h/100, h%100
		}
	case n > 2:
		return c, false
	default:
		c.hour = h
		if p.peek() == ':' || (p.peek() == '.' && p.i+1 < len(p.s) && p.s[p.i+1] >= '0' && p.s[p.i+1] <= '9') {
			p.i++
			if c.min, _, ok = p.digits(2, 2); !ok {
				return c, false
			}
			if p.peek() == ':' {
				p.i++
				if c.sec, _, ok = p.digits(2, 2); !ok {
					return c, false
				}
				if p.peek() == '.' || p.peek() == ',' {
					p.i++
					frac, fn, ok := p.digits(1, 9)
					if !ok {
						return c, false
					}
					for ; fn < 9; fn++ {
						frac *= 10
					}
					c.nsec = frac
				}
			}
		} else if !p.meridiemAhead() {
			return c, false // a bare hour needs am/pm
		}
	}
	p.spaces()
	switch {
	case p.word("am") || p.word("a.m.") || p.word("a.m"):
		c.mer = am
	case p.word("pm") || p.word("p.m.") || p.word("p.m"):
		c.mer = pm
	}
	return c, true
}

func (p *scanner) meridiemAhead() bool {
	q := *p
	q.spaces()
	return q.word("am") || q.word("pm") || q.word("a.m") || q.word("p.m")
}

// zone reads Z, +hh, +hhmm or +hh:mm.
func (p *scanner) zone() (*time.Location, bool) {
	switch p.peek() {
	case 'Z', 'z':
		p.i++
		return time.UTC, true
	case '+', '-':
	default:
		return nil, false
	}
	j := p.i
	sign := 1
	if p.s[p.i] == '-' {
		sign = -1
	}
	p.i++
	h, _, ok := p.digits(2, 2)
	if !ok {
		p.i = j
		return nil, false
	}
	if p.peek() == ':' {
		p.i++
	}
	m, n, _ := p.digits(0, 2)
	if (n != 0 && n != 2) || h > 14 || m > 59 {
		p.i = j
		return nil, false
	}
	return time.FixedZone("", sign*(h*3600+m*60)), true
}
