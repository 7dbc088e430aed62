package reaxml

import (
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// mapper turns the tree of one listing element into a Listing, collecting
// every value error instead of stopping at the first.
type mapper struct {
	loc  *time.Location
	l    *Listing
	errs []error
}

const maxErrorsPerListing = 10

func (m *mapper) bad(n *node, field, value, want string, err error) {
	if len(m.errs) < maxErrorsPerListing {
		m.errs = append(m.errs, &ValueError{Field: field, Line: n.line, Value: cut(value), Want: want, Err: err})
	}
}

// extra keeps an element the package does not model. prefix is the path of
// its known parent ("" at listing level).
func (m *mapper) extra(n *node, prefix string) {
	name := n.name
	if prefix != "" {
		name = prefix + "/" + name
	}
	m.l.Extra = append(m.l.Extra, n.element(name))
}

// str returns the element's text, present even when empty.
func str(n *node) *string {
	s := n.fullText()
	return &s
}

// value returns the value attribute, or the text when there is none:
// <underOffer value="no"/> and <underOffer>no</underOffer> read alike.
func value(n *node) string {
	if v, ok := n.attr("value"); ok {
		return v
	}
	return n.fullText()
}

// valueStr is value as a present string.
func valueStr(n *node) *string {
	s := value(n)
	return &s
}

// flag reads a yes/no value; empty reads as absent.
func (m *mapper) flag(n *node, field, s string) *bool {
	if s == "" {
		return nil
	}
	v, ok := parseBool(s)
	if !ok {
		m.bad(n, field, s, "yes/no", nil)
		return nil
	}
	return &v
}

// attrFlag reads a yes/no attribute; absent or empty reads as nil.
func (m *mapper) attrFlag(n *node, field, name string) *bool {
	s, _ := n.attr(name)
	return m.flag(n, field+"@"+name, s)
}

// number reads a figure such as "500000", "$1,350.50" or "10.34%"; empty
// reads as absent.
func (m *mapper) number(n *node, field, s string) *float64 {
	if s == "" {
		return nil
	}
	v, ok := parseNumber(s)
	if !ok {
		m.bad(n, field, s, "number", nil)
		return nil
	}
	return &v
}

// count reads a whole non-negative number; empty reads as absent.
func (m *mapper) count(n *node, field string) *int {
	s := n.fullText()
	if s == "" {
		return nil
	}
	v, ok := parseCount(s)
	if !ok {
		m.bad(n, field, s, "count", nil)
		return nil
	}
	return &v
}

// date reads a date; ok is false for empty or unreadable text (the latter
// is recorded as an error).
func (m *mapper) date(n *node, field, s string) (time.Time, bool) {
	if s == "" {
		return time.Time{}, false
	}
	t, err := ParseDate(s, m.loc)
	if err != nil {
		m.bad(n, field, s, "date", nil)
		return time.Time{}, false
	}
	return t, true
}

// datePtr reads a date element: nil if unreadable, a pointer to the zero
// time if empty.
func (m *mapper) datePtr(n *node, field string) *time.Time {
	s := n.fullText()
	t, ok := m.date(n, field, s)
	if !ok && s != "" {
		return nil
	}
	return &t
}

func parseBool(s string) (bool, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "yes", "y", "true", "1", "on":
		return true, true
	case "no", "n", "false", "0", "off":
		return false, true
	}
	if n, err := strconv.Atoi(s); err == nil && n > 1 {
		return true, true // <airConditioning>2</airConditioning>
	}
	return false, false
}

func parseNumber(s string) (float64, bool) {
	t := strings.Map(func(r rune) rune {
		if r == ',' || r == '$' || unicode.IsSpace(r) {
			return -1
		}
		return r
	}, s)
	t = strings.TrimSuffix(t, "%")
	if t == "" {
		return 0, false
	}
	for _, r := range t {
		if (r < '0' || r > '9') && r != '.' && r != '-' && r != '+' && r != 'e' && r != 'E' {
			return 0, false // no "Inf", "NaN" or hex
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, false
	}
	return v, true
}

func parseCount(s string) (int, bool) {
	v, ok := parseNumber(s)
	if !ok || v < 0 || v > 1e6 || v != math.Trunc(v) {
		return 0, false
	}
	return int(v), true
}

func normPeriod(s string) Period {
	l := strings.ToLower(strings.TrimSpace(s))
	switch l {
	case "week", "weekly", "pw", "per week", "wk":
		return PeriodWeek
	case "fortnight", "fortnightly":
		return PeriodFortnight
	case "month", "monthly", "pcm", "per month", "calendar month":
		return PeriodMonth
	case "quarter", "quarterly":
		return PeriodQuarter
	case "annual", "annually", "annum", "per annum", "pa", "year", "yearly":
		return PeriodAnnual
	case "day", "daily", "per day":
		return PeriodDay
	case "night", "nightly", "per night":
		return PeriodNight
	}
	return Period(l)
}

var stateNames = map[string]string{
	"victoria": "VIC", "new south wales": "NSW", "queensland": "QLD",
	"south australia": "SA", "western australia": "WA", "tasmania": "TAS",
	"northern territory": "NT", "australian capital territory": "ACT",
}

func normState(s string) string {
	if v, ok := stateNames[strings.ToLower(s)]; ok {
		return v
	}
	return strings.ToUpper(s)
}

var unitKey = strings.NewReplacer(" ", "", "_", "", "-", "")

func normAreaUnit(s string) string {
	key := strings.ToLower(unitKey.Replace(s))
	switch key {
	case "square", "squares":
		return "square"
	case "squaremeter", "squaremeters", "squaremetre", "squaremetres", "sqm", "m2", "m²", "sqmeter", "sqmetre":
		return "squareMeter"
	case "acre", "acres", "ac":
		return "acre"
	case "hectare", "hectares", "ha":
		return "hectare"
	case "squarefeet", "squarefoot", "sqft", "ft2":
		return "squareFeet"
	}
	return s
}

func normPhoneType(s string) PhoneType {
	switch strings.ToLower(strings.ReplaceAll(s, " ", "")) {
	case "bh", "business", "businesshours", "work", "office":
		return PhoneBusinessHours
	case "ah", "afterhours", "home":
		return PhoneAfterHours
	case "mobile", "mob", "cell":
		return PhoneMobile
	}
	return PhoneType(s)
}

// splitList splits a comma list, trimming items and dropping empty ones.
// The result is non-nil.
func splitList(s string) []string {
	out := []string{}
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}
