package reaxml

import (
	"errors"
	"fmt"
	"strings"
)

// Errors a [ListingError] may wrap; test with errors.Is.
var (
	// ErrMissingID: the listing has no agentID or no uniqueID.
	ErrMissingID = errors.New("agentID and uniqueID are required")
	// ErrUnknownKind: a child of propertyList is not one of the eight listing elements.
	ErrUnknownKind = errors.New("not a REAXML listing element")
	// ErrTooLarge: the listing nests deeper than 64 elements or holds more
	// than 100,000 elements; it is skipped.
	ErrTooLarge = errors.New("listing too large or too deeply nested")
)

// ErrNotREAXML is returned by [Decoder.Next] when the document's root
// element is not propertyList or there is no root element. It is a feed
// error, not a [ListingError].
var ErrNotREAXML = errors.New("reaxml: not a REAXML feed (root element must be propertyList)")

// ListingError reports a listing that could not be read. The decoder has
// skipped the whole listing element; the next call to [Decoder.Next] goes on
// with the following listing. AgentID and UniqueID are set when the listing
// had them, Kind when the element was a listing element.
type ListingError struct {
	Line     int
	Kind     Kind
	AgentID  string
	UniqueID string
	// Err is the reason: a [*ValueError], [ErrMissingID], [ErrUnknownKind],
	// [ErrTooLarge], or several of those joined with errors.Join.
	Err error
}

// Error returns a single-line message naming the line and the ids.
func (e *ListingError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "reaxml: line %d", e.Line)
	if e.Kind != "" {
		fmt.Fprintf(&b, ": %s", e.Kind)
	}
	if e.AgentID != "" || e.UniqueID != "" {
		fmt.Fprintf(&b, " %s/%s", e.AgentID, e.UniqueID)
	}
	fmt.Fprintf(&b, ": %s", strings.ReplaceAll(e.Err.Error(), "\n", "; "))
	return b.String()
}

// Unwrap returns the reason.
func (e *ListingError) Unwrap() error { return e.Err }

// ValueError reports an element or attribute whose value cannot be read:
// an unreadable date, number, yes/no value, inspection time, status, …
type ValueError struct {
	// Field is the element path inside the listing, e.g.
	// "inspectionTimes/inspection" or "auction@date".
	Field string
	Line  int
	// Value is the offending text, cut to 80 bytes.
	Value string
	// Want names what was expected: "date", "number", "yes/no", …
	Want string
	// Err is a more precise cause when there is one.
	Err error
}

// Error names the line, the field, the value and what was expected.
func (e *ValueError) Error() string {
	msg := fmt.Sprintf("line %d: %s: cannot read %q as %s", e.Line, e.Field, e.Value, e.Want)
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the precise cause, if any.
func (e *ValueError) Unwrap() error { return e.Err }

func cut(s string) string {
	const max = 80
	if len(s) <= max {
		return s
	}
	return s[:max] + "…"
}
