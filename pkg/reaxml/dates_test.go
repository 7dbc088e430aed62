package reaxml

import (
	"testing"
	"time"
)

func mustLocation(tb testing.TB, name string) *time.Location {
	tb.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		tb.Fatalf("load %s: %v", name, err)
	}
	return loc
}

func TestParseDate(t *testing.T) {
	syd := mustLocation(t, "Australia/Sydney")
	at := func(y int, mo time.Month, d, h, mi, s int) time.Time { return time.Date(y, mo, d, h, mi, s, 0, syd) }
	tests := []struct {
		name string
		in   string
		want time.Time
	}{
		{"REAXML dash", "2009-01-01-12:30:00", at(2009, 1, 1, 12, 30, 0)},
		{"ISO T minutes", "2009-01-01T12:30", at(2009, 1, 1, 12, 30, 0)},
		{"ISO T seconds", "2009-01-01T12:30:00", at(2009, 1, 1, 12, 30, 0)},
		{"ISO T fraction", "2009-01-01T12:30:00.250", at(2009, 1, 1, 12, 30, 0).Add(250 * time.Millisecond)},
		{"space", "2009-01-01 12:30:00", at(2009, 1, 1, 12, 30, 0)},
		{"space minutes", "2009-01-01 12:30", at(2009, 1, 1, 12, 30, 0)},
		{"compact", "20090101-123000", at(2009, 1, 1, 12, 30, 0)},
		{"compact minutes", "20090101-1230", at(2009, 1, 1, 12, 30, 0)},
		{"compact date only", "20090101", at(2009, 1, 1, 0, 0, 0)},
		{"date only", "2009-01-01", at(2009, 1, 1, 0, 0, 0)},
		{"single-digit hour dash", "2009-01-01-9:30:00", at(2009, 1, 1, 9, 30, 0)},
		{"single-digit hour space", "2009-01-01 9:30", at(2009, 1, 1, 9, 30, 0)},
		{"single-digit month and day", "2009-1-5 09:30:00", at(2009, 1, 5, 9, 30, 0)},
		{"trailing PM", "2009-01-01 1:30:00 PM", at(2009, 1, 1, 13, 30, 0)},
		{"trailing pm no space", "2009-01-01-01:30:00pm", at(2009, 1, 1, 13, 30, 0)},
		{"trailing AM at 12", "2009-01-01 12:15 AM", at(2009, 1, 1, 0, 15, 0)},
		{"12 PM is noon", "2009-01-01 12:15 PM", at(2009, 1, 1, 12, 15, 0)},
		{"dotted p.m.", "2009-01-01 3:05 p.m.", at(2009, 1, 1, 15, 5, 0)},
		{"slashes year first", "2009/01/31 08:00", at(2009, 1, 31, 8, 0, 0)},
		{"day first slashes", "31/01/2009", at(2009, 1, 31, 0, 0, 0)},
		{"day first with time", "31/01/2009 6:00pm", at(2009, 1, 31, 18, 0, 0)},
		{"day month name", "21-Jan-2009", at(2009, 1, 21, 0, 0, 0)},
		{"day full month name", "1 September 2009", at(2009, 9, 1, 0, 0, 0)},
		{"weekday prefix", "Saturday, 24-Jan-2009 11:00am", at(2009, 1, 24, 11, 0, 0)},
		{"UTC zone converted", "2009-01-01T01:30:00Z", at(2009, 1, 1, 12, 30, 0)},
		{"offset zone converted", "2009-07-01T12:30:00+10:00", at(2009, 7, 1, 12, 30, 0)},
		{"compact offset", "2009-07-01T02:30:00+0000", at(2009, 7, 1, 12, 30, 0)},
		{"padded", "  2009-01-01-12:30:00 \n", at(2009, 1, 1, 12, 30, 0)},
		{"winter is +10", "2009-07-01-12:30:00", at(2009, 7, 1, 12, 30, 0)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseDate(tt.in, syd)
			if err != nil {
				t.Fatalf("ParseDate(%q): %v", tt.in, err)
			}
			if !got.Equal(tt.want) || got.Location() != syd {
				t.Errorf("ParseDate(%q) = %v, want %v in Sydney", tt.in, got, tt.want)
			}
		})
	}
}

func TestParseDateRejects(t *testing.T) {
	for _, in := range []string{
		"", "soon", "2009-13-01", "2009-02-30", "2009-01-01-25:00:00", "2009-01-01 12",
		"2009-01-01 13:00 PM", "01/2009", "2009-01-01x", "09-01-01", "2009-01-01 12:3",
		"20090101-12", "Funday 2009-01-01", "2009-01-01T12:30:00+99:00x", "12:30",
	} {
		t.Run(in, func(t *testing.T) {
			if got, err := ParseDate(in, time.UTC); err == nil {
				t.Errorf("ParseDate(%q) = %v, want an error", in, got)
			}
		})
	}
}

func TestParseInspection(t *testing.T) {
	syd := mustLocation(t, "Australia/Sydney")
	at := func(d, h, mi int) time.Time { return time.Date(2010, 12, d, h, mi, 0, 0, syd) }
	tests := []struct {
		name       string
		in         string
		start, end time.Time
	}{
		{"REAXML", "21-Dec-2010 11:00am to 1:00pm", at(21, 11, 0), at(21, 13, 0)},
		{"single-digit day", "1-Dec-2010 9:30am to 10:00am", at(1, 9, 30), at(1, 10, 0)},
		{"hours only", "21-Dec-2010 11am to 12pm", at(21, 11, 0), at(21, 12, 0)},
		{"24-hour", "21-Dec-2010 13:00 to 13:45", at(21, 13, 0), at(21, 13, 45)},
		{"missing end", "21-Dec-2010 11:00am", at(21, 11, 0), time.Time{}},
		{"dash separator", "21-Dec-2010 11:00am - 11:30am", at(21, 11, 0), at(21, 11, 30)},
		{"end inherits am", "21-Dec-2010 10:00am to 10:30", at(21, 10, 0), at(21, 10, 30)},
		{"end after noon", "21-Dec-2010 11:30am to 12:15", at(21, 11, 30), at(21, 12, 15)},
		{"end crosses noon", "21-Dec-2010 11:00am to 1:00", at(21, 11, 0), at(21, 13, 0)},
		{"start inherits pm", "21-Dec-2010 2:00 to 3:00pm", at(21, 14, 0), at(21, 15, 0)},
		{"no meridiem crossing noon", "21-Dec-2010 11:00 to 1:00", at(21, 11, 0), at(21, 13, 0)},
		{"dotted minutes", "21-Dec-2010 11.30am to 12.00pm", at(21, 11, 30), at(21, 12, 0)},
		{"weekday", "Tuesday 21-Dec-2010 11:00am to 11:30am", at(21, 11, 0), at(21, 11, 30)},
		{"ISO date", "2010-12-21 11:00am to 11:30am", at(21, 11, 0), at(21, 11, 30)},
		{"upper case", "21-DEC-2010 11:00AM TO 11:30AM", at(21, 11, 0), at(21, 11, 30)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start, end, err := ParseInspection(tt.in, syd)
			if err != nil {
				t.Fatalf("ParseInspection(%q): %v", tt.in, err)
			}
			if !start.Equal(tt.start) || !end.Equal(tt.end) {
				t.Errorf("ParseInspection(%q) = %v – %v, want %v – %v", tt.in, start, end, tt.start, tt.end)
			}
		})
	}
}

func TestParseInspectionRejects(t *testing.T) {
	for _, in := range []string{
		"", "By appointment", "21-Dec-2010", "21-Dec-2010 to 1pm", "21-Foo-2010 11am",
		"21-Dec-2010 11:00am to", "21-Dec-2010 3:00pm to 1:00pm", "21-Dec-2010 11:00am and more",
	} {
		t.Run(in, func(t *testing.T) {
			if s, e, err := ParseInspection(in, time.UTC); err == nil {
				t.Errorf("ParseInspection(%q) = %v – %v, want an error", in, s, e)
			}
		})
	}
}
