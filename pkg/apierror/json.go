package apierror

import (
	"slices"
	"unicode/utf8"
)

// internalNil is rendered when AppendJSON is given a nil *Error.
var internalNil = &Error{Code: CodeInternalError, Message: msgInternal}

// AppendJSON appends the JSON envelope of e to dst and returns the extended
// slice:
//
//	{"error":{"code":"...","message":"...","details":{...},"request_id":"..."}}
//
// "details" appears only for VALIDATION_ERROR (as {} when Details is empty),
// with keys sorted; "request_id" appears only when requestID is non-empty.
// For INTERNAL_ERROR the message is always "internal error", so a Message
// carrying internal detail cannot leak. A nil e renders as INTERNAL_ERROR.
// Err is never rendered. No trailing newline is written.
//
// Strings are escaped so that the output is valid JSON, byte for byte what
// encoding/json would produce: control characters, quote and backslash are
// escaped; <, >, & and U+2028, U+2029 are written as \u escapes so the bytes
// are safe inside HTML and JavaScript; each byte of invalid UTF-8 becomes
// U+FFFD.
//
// AppendJSON renders e's code as it is; callers write From(err), which turns
// unknown codes into INTERNAL_ERROR. It does not allocate when dst has room
// and e has no details to render.
func AppendJSON(dst []byte, e *Error, requestID string) []byte {
	if e == nil {
		e = internalNil
	}
	msg := e.Message
	if e.Code == CodeInternalError {
		msg = msgInternal
	}
	dst = append(dst, `{"error":{"code":`...)
	dst = appendString(dst, string(e.Code))
	dst = append(dst, `,"message":`...)
	dst = appendString(dst, msg)
	if e.Code == CodeValidationError {
		dst = append(dst, `,"details":`...)
		dst = appendDetails(dst, e.Details)
	}
	if requestID != "" {
		dst = append(dst, `,"request_id":`...)
		dst = appendString(dst, requestID)
	}
	return append(dst, "}}"...)
}

// appendDetails appends details as a JSON object with sorted keys.
func appendDetails(dst []byte, details map[string]string) []byte {
	if len(details) == 0 {
		return append(dst, "{}"...)
	}
	keys := make([]string, 0, len(details))
	for k := range details {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	dst = append(dst, '{')
	for i, k := range keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, k)
		dst = append(dst, ':')
		dst = appendString(dst, details[k])
	}
	return append(dst, '}')
}

// safeASCII reports for each ASCII byte whether it can appear in a JSON
// string unescaped and is safe in HTML: printable, not '"', '\\', '<', '>'
// or '&'.
var safeASCII = func() (t [utf8.RuneSelf]bool) {
	for b := 0x20; b < utf8.RuneSelf; b++ {
		t[b] = true
	}
	for _, b := range `"\<>&` {
		t[b] = false
	}
	return t
}()

const hexDigits = "0123456789abcdef"

// appendString appends s as a quoted, escaped JSON string (see AppendJSON).
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0 // s[start:i] is pending, to be copied as it is
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			if safeASCII[b] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '"', '\\':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default: // other control characters, <, > and &
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
