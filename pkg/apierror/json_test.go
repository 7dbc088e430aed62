package apierror

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// wire is the envelope as encoding/json sees it. With omitzero, a nil Details
// is omitted and a non-nil empty one is written as {}, which is AppendJSON's
// rule when Details is set only for VALIDATION_ERROR.
type wire struct {
	Error struct {
		Code      string            `json:"code"`
		Message   string            `json:"message"`
		Details   map[string]string `json:"details,omitzero"`
		RequestID string            `json:"request_id,omitempty"`
	} `json:"error"`
}

// wantWire returns the envelope AppendJSON should produce for e.
func wantWire(e *Error, requestID string) wire {
	var w wire
	w.Error.Code = string(e.Code)
	w.Error.Message = e.Message
	if e.Code == CodeInternalError {
		w.Error.Message = "internal error"
	}
	if e.Code == CodeValidationError {
		w.Error.Details = map[string]string{}
		for k, v := range e.Details {
			w.Error.Details[k] = v
		}
	}
	w.Error.RequestID = requestID
	return w
}

// mustMarshal returns encoding/json's encoding of v or fails the test.
func mustMarshal(tb testing.TB, v any) []byte {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatalf("json.Marshal: %v", err)
	}
	return b
}

func TestAppendJSON(t *testing.T) {
	tests := []struct {
		name      string
		err       *Error
		requestID string
		want      string
	}{
		{"not found", NotFound(""), "01J9ZQ", `{"error":{"code":"NOT_FOUND","message":"not found","request_id":"01J9ZQ"}}`},
		{"no request id", Forbidden("missing scope listings:read"), "", `{"error":{"code":"FORBIDDEN","message":"missing scope listings:read"}}`},
		{"validation sorted", Validation(map[string]string{"email": "not an e-mail address", "contact": "required", "body": "x"}), "r",
			`{"error":{"code":"VALIDATION_ERROR","message":"invalid request","details":{"body":"x","contact":"required","email":"not an e-mail address"},"request_id":"r"}}`},
		{"validation nil details", Validation(nil), "", `{"error":{"code":"VALIDATION_ERROR","message":"invalid request","details":{}}}`},
		{"details only for validation", &Error{Code: CodeConflict, Message: "in flight", Details: map[string]string{"a": "b"}}, "", `{"error":{"code":"CONFLICT","message":"in flight"}}`},
		{"internal message fixed", &Error{Code: CodeInternalError, Message: "pq: no such table"}, "", `{"error":{"code":"INTERNAL_ERROR","message":"internal error"}}`},
		{"nil error", nil, "r", `{"error":{"code":"INTERNAL_ERROR","message":"internal error","request_id":"r"}}`},
		{"escapes", New(CodeNotFound, "a\"b\\c\n\r\t\b\f\x00\x1f\x7f<script>&amp;\u2028\u2029é😀\xff\xc3"), "id\"<>",
			`{"error":{"code":"NOT_FOUND","message":"a\"b\\c\n\r\t\b\f\u0000\u001f` + "\x7f" + `\u003cscript\u003e\u0026amp;\u2028\u2029é😀\ufffd\ufffd","request_id":"id\"\u003c\u003e"}}`},
		{"escaped detail keys", Validation(map[string]string{"<k>": "\"v\""}), "",
			`{"error":{"code":"VALIDATION_ERROR","message":"invalid request","details":{"\u003ck\u003e":"\"v\""}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := AppendJSON([]byte("prefix:"), tt.err, tt.requestID)
			if !bytes.HasPrefix(got, []byte("prefix:")) {
				t.Fatalf("dst not kept: %s", got)
			}
			got = got[len("prefix:"):]
			if string(got) != tt.want {
				t.Errorf("AppendJSON =\n%s\nwant\n%s", got, tt.want)
			}
			if !json.Valid(got) {
				t.Errorf("invalid JSON: %s", got)
			}
			e := tt.err
			if e == nil {
				e = internalNil
			}
			if want := mustMarshal(t, wantWire(e, tt.requestID)); !bytes.Equal(got, want) {
				t.Errorf("AppendJSON differs from encoding/json:\n%s\n%s", got, want)
			}
		})
	}
}

// TestAppendStringMatchesEncodingJSON compares the string escaper with
// encoding/json on every single byte and on tricky sequences.
func TestAppendStringMatchesEncodingJSON(t *testing.T) {
	inputs := []string{"", "plain", "\u2028\u2029", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xe2\x80", "\uFFFD", "\U0010FFFF", "\xc0\xaf"}
	for b := range 256 {
		inputs = append(inputs, string([]byte{byte(b)}), "a"+string([]byte{byte(b)})+"z")
	}
	for _, s := range inputs {
		got := appendString(nil, s)
		if want := mustMarshal(t, s); !bytes.Equal(got, want) {
			t.Errorf("appendString(%q) = %s, encoding/json %s", s, got, want)
		}
	}
}

func TestAppendJSONAllocs(t *testing.T) {
	dst := make([]byte, 0, 512)
	tests := []struct {
		name string
		err  *Error
	}{
		{"not found", NotFound("listing not found")},
		{"escapes and invalid UTF-8", Forbidden("missing scope <listings:read> \"x\" \n é \xff")},
		{"rate limited", RateLimited(30)},
		{"validation without details", Validation(nil)},
		{"details ignored off validation", &Error{Code: CodeConflict, Message: "x", Details: map[string]string{"a": "b"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := testing.AllocsPerRun(100, func() {
				dst = AppendJSON(dst[:0], tt.err, "01J9ZQ7T3K")
			})
			if n != 0 {
				t.Errorf("%v allocations per run, want 0", n)
			}
		})
	}
}

func BenchmarkAppendJSON(b *testing.B) {
	dst := make([]byte, 0, 512)
	e := MissingScope("listings:read")
	b.ReportAllocs()
	for b.Loop() {
		dst = AppendJSON(dst[:0], e, "01J9ZQ7T3KX4B5")
	}
}

// FuzzAppendJSON checks that the envelope always parses, decodes to the error
// it was made from (strings with invalid UTF-8 replaced as encoding/json
// does) and is byte for byte what encoding/json writes.
func FuzzAppendJSON(f *testing.F) {
	f.Add("not found", "email", "not an e-mail address", "k2", "v2", "01J9ZQ", false)
	f.Add("a\"b\\c\n<>&\u2028\xff", "<k>", "\x00\x1f", "", "", "", true)
	f.Add("", "", "", "\xff", "\xfe", "\u2029", true)
	f.Fuzz(func(t *testing.T, msg, k1, v1, k2, v2, requestID string, validation bool) {
		e := New(CodeForbidden, msg)
		if validation {
			e = Validation(map[string]string{k1: v1, k2: v2})
		}
		got := AppendJSON(nil, e, requestID)
		if !json.Valid(got) {
			t.Fatalf("invalid JSON: %q", got)
		}
		want := wantWire(e, requestID)
		if want := mustMarshal(t, want); !bytes.Equal(got, want) {
			t.Fatalf("AppendJSON differs from encoding/json:\n%q\n%q", got, want)
		}
		var decoded wire
		if err := json.Unmarshal(got, &decoded); err != nil {
			t.Fatalf("json.Unmarshal: %v", err)
		}
		if decoded.Error.Message != valid(e.Message) || decoded.Error.Code != string(e.Code) || decoded.Error.RequestID != valid(requestID) {
			t.Fatalf("decoded %+v from %q", decoded, got)
		}
		if validation {
			// Keys that differ only in invalid bytes collide after
			// replacement; compare only when they do not.
			if valid(k1) != valid(k2) || k1 == k2 {
				for _, k := range []string{k1, k2} {
					if decoded.Error.Details[valid(k)] != valid(e.Details[k]) {
						t.Fatalf("details %q decoded as %q from %q", e.Details, decoded.Error.Details, got)
					}
				}
			}
		} else if decoded.Error.Details != nil {
			t.Fatalf("details on %s: %q", e.Code, got)
		}
		if strings.ContainsAny(string(got), "<>&") {
			t.Fatalf("HTML-unsafe bytes in %q", got)
		}
	})
}

// valid returns s with each byte of invalid UTF-8 replaced by U+FFFD, as
// encoding/json decodes it.
func valid(s string) string {
	return string([]rune(s))
}
