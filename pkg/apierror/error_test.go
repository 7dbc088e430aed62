package apierror

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestConstructors(t *testing.T) {
	tests := []struct {
		name       string
		err        *Error
		code       Code
		message    string
		retryAfter int // RetryAfterSeconds
	}{
		{"New", New(CodeNotFound, "listing 7 not found"), CodeNotFound, "listing 7 not found", 0},
		{"New default message", New(CodeNotFound, ""), CodeNotFound, "not found", 0},
		{"New unknown code", New("BOGUS", ""), "BOGUS", "internal error", 0},
		{"Newf", Newf(CodeForbidden, "key cannot access site %s", "s1"), CodeForbidden, "key cannot access site s1", 0},
		{"Unauthorized", Unauthorized(""), CodeUnauthorized, "missing or invalid API key", 0},
		{"Forbidden", Forbidden("key cannot access this site"), CodeForbidden, "key cannot access this site", 0},
		{"MissingScope", MissingScope("listings:read"), CodeForbidden, "missing scope listings:read", 0},
		{"NotFound", NotFound(""), CodeNotFound, "not found", 0},
		{"MethodNotAllowed", MethodNotAllowed("GET, HEAD"), CodeMethodNotAllowed, "method not allowed", 0},
		{"NotAcceptable", NotAcceptable(), CodeNotAcceptable, "only application/json is available", 0},
		{"Conflict", Conflict("request with this Idempotency-Key in progress"), CodeConflict, "request with this Idempotency-Key in progress", 0},
		{"PayloadTooLarge", PayloadTooLarge(64 << 10), CodePayloadTooLarge, "request body exceeds 65536 bytes", 0},
		{"PayloadTooLarge no limit", PayloadTooLarge(0), CodePayloadTooLarge, "request body too large", 0},
		{"UnsupportedMediaType", UnsupportedMediaType(""), CodeUnsupportedMediaType, "request body must be application/json", 0},
		{"Validation", Validation(map[string]string{"email": "not an e-mail address"}), CodeValidationError, "invalid request", 0},
		{"InvalidField", InvalidField("contact", "give an email, phone or mobile"), CodeValidationError, "invalid request", 0},
		{"RateLimited", RateLimited(17), CodeRateLimitExceeded, "too many requests", 17},
		{"RateLimited zero", RateLimited(0), CodeRateLimitExceeded, "too many requests", 1},
		{"Internal", Internal(io.EOF), CodeInternalError, "internal error", 0},
		{"Unavailable", Unavailable(5, io.EOF), CodeServiceUnavailable, "service unavailable", 5},
		{"Unavailable negative", Unavailable(-3, nil), CodeServiceUnavailable, "service unavailable", 1},
		{"retry after on other code", &Error{Code: CodeConflict, RetryAfter: 2}, CodeConflict, "", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.err.Code != tt.code || tt.err.Message != tt.message {
				t.Errorf("got %q %q, want %q %q", tt.err.Code, tt.err.Message, tt.code, tt.message)
			}
			if got := tt.err.RetryAfterSeconds(); got != tt.retryAfter {
				t.Errorf("RetryAfterSeconds() = %d, want %d", got, tt.retryAfter)
			}
		})
	}
	if e := MethodNotAllowed("GET"); e.Allow != "GET" {
		t.Errorf("MethodNotAllowed Allow = %q", e.Allow)
	}
	if e := InvalidField("email", "bad"); e.Details["email"] != "bad" || len(e.Details) != 1 {
		t.Errorf("InvalidField details = %v", e.Details)
	}
}

func TestErrorStringAndUnwrap(t *testing.T) {
	cause := errors.New("dial tcp 10.0.0.5:5432: connection refused")
	e := Internal(cause)
	if got, want := e.Error(), "INTERNAL_ERROR: internal error: dial tcp 10.0.0.5:5432: connection refused"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if !errors.Is(e, cause) || e.Unwrap() != cause {
		t.Error("cause not reachable through Unwrap")
	}
	if got, want := NotFound("").Error(), "NOT_FOUND: not found"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if NotFound("").Unwrap() != nil {
		t.Error("Unwrap of error without cause is not nil")
	}
}

func TestFrom(t *testing.T) {
	notFound := NotFound("listing not found")
	var nilErr *Error
	plain := errors.New("pq: password authentication failed for user listgate")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name    string
		err     error
		code    Code
		message string
		same    *Error // From must return this very pointer
		keeps   error  // From's result must wrap this
	}{
		{name: "nil", err: nil},
		{name: "itself", err: notFound, code: CodeNotFound, message: "listing not found", same: notFound},
		{name: "wrapped", err: fmt.Errorf("get listing 7: %w", notFound), code: CodeNotFound, same: notFound, message: "listing not found"},
		{name: "wrapped twice", err: fmt.Errorf("handler: %w", fmt.Errorf("get listing 7: %w", notFound)), code: CodeNotFound, same: notFound, message: "listing not found"},
		{name: "joined", err: errors.Join(io.EOF, notFound), code: CodeNotFound, same: notFound, message: "listing not found"},
		{name: "api error wins over context", err: fmt.Errorf("%w: %w", context.Canceled, notFound), code: CodeNotFound, same: notFound, message: "listing not found"},
		{name: "wrapped with cause", err: fmt.Errorf("store: %w", Internal(plain)), code: CodeInternalError, message: "internal error", keeps: plain},
		{name: "plain error", err: plain, code: CodeInternalError, message: "internal error", keeps: plain},
		{name: "wrapped plain error", err: fmt.Errorf("load: %w", io.ErrUnexpectedEOF), code: CodeInternalError, message: "internal error", keeps: io.ErrUnexpectedEOF},
		{name: "typed nil in chain", err: fmt.Errorf("x: %w", nilErr), code: CodeInternalError, message: "internal error"},
		{name: "unknown code", err: New("TEAPOT", "short and stout"), code: CodeInternalError, message: "internal error"},
		{name: "deadline", err: fmt.Errorf("query: %w", context.DeadlineExceeded), code: CodeServiceUnavailable, message: "service unavailable", keeps: context.DeadlineExceeded},
		{name: "canceled", err: ctx.Err(), code: CodeServiceUnavailable, message: "service unavailable", keeps: context.Canceled},
		{name: "max bytes", err: fmt.Errorf("decode lead: %w", &http.MaxBytesError{Limit: 65536}), code: CodePayloadTooLarge, message: "request body exceeds 65536 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := From(tt.err)
			if tt.err == nil {
				if got != nil || CodeOf(nil) != "" {
					t.Fatalf("From(nil) = %v, want nil", got)
				}
				return
			}
			if got == nil {
				t.Fatal("From returned nil")
			}
			if got.Code != tt.code || got.Message != tt.message {
				t.Errorf("From = %q %q, want %q %q", got.Code, got.Message, tt.code, tt.message)
			}
			if CodeOf(tt.err) != tt.code {
				t.Errorf("CodeOf = %q, want %q", CodeOf(tt.err), tt.code)
			}
			if tt.same != nil && got != tt.same {
				t.Error("From did not return the *Error in the chain")
			}
			if tt.keeps != nil && !errors.Is(got, tt.keeps) {
				t.Errorf("From result does not keep cause %v", tt.keeps)
			}
			if tt.same == nil && !errors.Is(got, tt.err) && got.Err == nil {
				t.Error("From lost the original error")
			}
		})
	}
}

// TestInternalCauseNeverRendered writes errors that carry secrets in their
// cause (and, carelessly, in an INTERNAL_ERROR message) and checks the body.
func TestInternalCauseNeverRendered(t *testing.T) {
	const secret = "hunter2-postgres://listgate:s3cret@db:5432"
	tests := []struct {
		name string
		err  error
	}{
		// Every case but the last carries the secret in its cause.
		{"plain error", errors.New(secret)},
		{"wrapped plain error", fmt.Errorf("load listing: %w", errors.New(secret))},
		{"Internal", Internal(errors.New(secret))},
		{"Internal with careless message", &Error{Code: CodeInternalError, Message: secret, Err: errors.New(secret)}},
		{"unknown code", &Error{Code: "DB_DOWN", Message: secret}},
		{"Unavailable", Unavailable(3, errors.New(secret))},
		{"not found with cause", &Error{Code: CodeNotFound, Message: "not found", Err: errors.New(secret)}},
		{"context", fmt.Errorf("%s: %w", secret, context.DeadlineExceeded)},
		{"details on non-validation", &Error{Code: CodeForbidden, Message: "forbidden", Details: map[string]string{"dsn": secret}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			e := WriteHTTP(rec, "req-1", tt.err)
			body := rec.Body.String()
			if strings.Contains(body, "hunter2") || strings.Contains(body, "s3cret") {
				t.Fatalf("body leaks the cause: %s", body)
			}
			if e.Details == nil && !strings.Contains(e.Error(), "hunter2") {
				t.Errorf("returned error lost the cause for the log: %v", e)
			}
		})
	}
}
