package apierror

import (
	"net/http"
	"slices"
	"testing"
)

// TestStatus pins every code to its status exactly as API.md's table lists
// them, plus CONFLICT (409, Idempotency-Key in flight).
func TestStatus(t *testing.T) {
	tests := []struct {
		code   Code
		name   string // the wire name, spelled out independently
		status int
	}{
		{CodeBadRequest, "BAD_REQUEST", 400},
		{CodeUnauthorized, "UNAUTHORIZED", 401},
		{CodeForbidden, "FORBIDDEN", 403},
		{CodeNotFound, "NOT_FOUND", 404},
		{CodeMethodNotAllowed, "METHOD_NOT_ALLOWED", 405},
		{CodeNotAcceptable, "NOT_ACCEPTABLE", 406},
		{CodeConflict, "CONFLICT", 409},
		{CodePayloadTooLarge, "PAYLOAD_TOO_LARGE", 413},
		{CodeUnsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE", 415},
		{CodeValidationError, "VALIDATION_ERROR", 422},
		{CodeRateLimitExceeded, "RATE_LIMIT_EXCEEDED", 429},
		{CodeInternalError, "INTERNAL_ERROR", 500},
		{CodeServiceUnavailable, "SERVICE_UNAVAILABLE", 503},
		{"", "", 500},
		{"TEAPOT", "TEAPOT", 500},
		{"not_found", "not_found", 500},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if string(tt.code) != tt.name {
				t.Errorf("code constant is %q, want %q", tt.code, tt.name)
			}
			if got := tt.code.Status(); got != tt.status {
				t.Errorf("%q.Status() = %d, want %d", tt.code, got, tt.status)
			}
			if got, want := tt.code.Known(), tt.status != 500 || tt.name == "INTERNAL_ERROR"; got != want {
				t.Errorf("%q.Known() = %v, want %v", tt.code, got, want)
			}
		})
	}
}

func TestCodes(t *testing.T) {
	codes := Codes()
	if len(codes) != 15 {
		t.Fatalf("Codes() has %d codes, want 15", len(codes))
	}
	seen := map[Code]bool{}
	for i, c := range codes {
		if seen[c] || !c.Known() {
			t.Errorf("Codes()[%d] = %q: duplicate or unknown", i, c)
		}
		seen[c] = true
		if i > 0 && c.Status() <= codes[i-1].Status() {
			t.Errorf("Codes() not ordered by status at %q", c)
		}
		if http.StatusText(c.Status()) == "" {
			t.Errorf("%q maps to non-standard status %d", c, c.Status())
		}
		if c.defaultMessage() == "" {
			t.Errorf("%q has no default message", c)
		}
	}
	codes[0] = "CHANGED"
	if slices.Contains(Codes(), "CHANGED") {
		t.Error("Codes() shares its slice")
	}
}
