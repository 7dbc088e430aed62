package apierror

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
)

func TestWriteHTTP(t *testing.T) {
	tests := []struct {
		name       string
		err        error
		preset     http.Header // headers already on the writer
		status     int
		code       Code
		retryAfter string // "" means the header must be absent
		allow      string
		details    map[string]string
	}{
		{name: "not found", err: NotFound(""), status: 404, code: CodeNotFound},
		{name: "unauthorized", err: Unauthorized(""), status: 401, code: CodeUnauthorized},
		{name: "missing scope", err: MissingScope("stats:read"), status: 403, code: CodeForbidden},
		{name: "method not allowed", err: MethodNotAllowed("GET, HEAD"), status: 405, code: CodeMethodNotAllowed, allow: "GET, HEAD"},
		{name: "not acceptable", err: NotAcceptable(), status: 406, code: CodeNotAcceptable},
		{name: "conflict", err: Conflict(""), status: 409, code: CodeConflict},
		{name: "too large", err: PayloadTooLarge(65536), status: 413, code: CodePayloadTooLarge},
		{name: "media type", err: UnsupportedMediaType(""), status: 415, code: CodeUnsupportedMediaType},
		{name: "validation", err: InvalidField("email", "not an e-mail address"), status: 422, code: CodeValidationError, details: map[string]string{"email": "not an e-mail address"}},
		{name: "rate limited", err: RateLimited(42), status: 429, code: CodeRateLimitExceeded, retryAfter: "42"},
		{name: "rate limited at least 1", err: RateLimited(0), status: 429, code: CodeRateLimitExceeded, retryAfter: "1"},
		{name: "internal", err: errors.New("boom"), status: 500, code: CodeInternalError},
		{name: "nil error", err: nil, status: 500, code: CodeInternalError},
		{name: "unavailable", err: Unavailable(7, nil), status: 503, code: CodeServiceUnavailable, retryAfter: "7"},
		{name: "unavailable at least 1", err: Unavailable(0, errors.New("dial")), status: 503, code: CodeServiceUnavailable, retryAfter: "1"},
		{name: "wrapped", err: fmt.Errorf("route: %w", MethodNotAllowed("POST")), status: 405, code: CodeMethodNotAllowed, allow: "POST"},
		{name: "stale headers replaced, others kept",
			err:    NotFound(""),
			preset: http.Header{"Content-Type": {"text/html"}, "Content-Length": {"9999"}, "Retry-After": {"60"}, "X-Ratelimit-Remaining": {"59"}},
			status: 404, code: CodeNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			for k, v := range tt.preset {
				rec.Header()[k] = v
			}
			e := WriteHTTP(rec, "req-42", tt.err)
			res := rec.Result()
			if res.StatusCode != tt.status || e.Code != tt.code {
				t.Errorf("status %d code %q, want %d %q", res.StatusCode, e.Code, tt.status, tt.code)
			}
			h := res.Header
			wantHeaders := map[string]string{
				"Content-Type":           "application/json; charset=utf-8",
				"Cache-Control":          "no-store",
				"X-Content-Type-Options": "nosniff",
				"Content-Length":         strconv.Itoa(rec.Body.Len()),
				"Retry-After":            tt.retryAfter,
				"Allow":                  tt.allow,
			}
			for k, want := range wantHeaders {
				if got := h.Get(k); got != want || (want == "" && len(h.Values(k)) != 0) {
					t.Errorf("header %s = %q, want %q", k, got, want)
				}
			}
			if tt.preset != nil && h.Get("X-RateLimit-Remaining") != "59" {
				t.Error("unrelated header dropped")
			}
			var body wire
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
				t.Fatalf("body %q: %v", rec.Body.Bytes(), err)
			}
			if body.Error.Code != string(tt.code) || body.Error.RequestID != "req-42" || body.Error.Message == "" {
				t.Errorf("body = %+v", body.Error)
			}
			if len(body.Error.Details) != len(tt.details) {
				t.Errorf("details = %v, want %v", body.Error.Details, tt.details)
			}
			for k, v := range tt.details {
				if body.Error.Details[k] != v {
					t.Errorf("details[%q] = %q, want %q", k, body.Error.Details[k], v)
				}
			}
		})
	}
}

// TestWriteHTTPServer runs WriteHTTP behind a real server to check the
// response survives net/http's own header handling.
func TestWriteHTTPServer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		WriteHTTP(w, r.Header.Get("X-Request-Id"), RateLimited(12))
	}))
	defer srv.Close()
	req, err := http.NewRequest(http.MethodGet, srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Request-Id", "abc")
	res, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var body wire
	if err := json.NewDecoder(res.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != 429 || res.Header.Get("Retry-After") != "12" || body.Error.Code != "RATE_LIMIT_EXCEEDED" ||
		body.Error.Message != "too many requests" || body.Error.RequestID != "abc" {
		t.Errorf("got %d Retry-After %q body %+v", res.StatusCode, res.Header.Get("Retry-After"), body.Error)
	}
	if res.ContentLength <= 0 {
		t.Errorf("Content-Length = %d", res.ContentLength)
	}
}
