package api_test

import (
	"bytes"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	json "github.com/goccy/go-json"

	"github.com/listgate/listgate/origin/api"
	"github.com/listgate/listgate/pkg/apierror"
)

var errStatementTimeout = errors.New("canceling statement due to statement timeout")

func TestRequestTimeout(t *testing.T) {
	var logs bytes.Buffer
	srv := api.New(api.Config{
		RequestTimeout: 20 * time.Millisecond,
		TimedOut:       func(err error) bool { return errors.Is(err, errStatementTimeout) },
		Log:            slog.New(slog.NewJSONHandler(&logs, nil)),
		Mounts: []api.Mounter{mountFunc(func(handle func(string, api.HandlerFunc)) {
			// Waits for its context, as a query does.
			handle("GET /slow/{id}", func(w http.ResponseWriter, r *http.Request) error {
				<-r.Context().Done()
				return r.Context().Err()
			})
			// A database error wrapped by the handler, as listings does.
			handle("GET /wrapped", func(w http.ResponseWriter, r *http.Request) error {
				<-r.Context().Done()
				return apierror.Unavailable(2, r.Context().Err())
			})
			// The database ended the statement before the deadline.
			handle("GET /statement", func(w http.ResponseWriter, r *http.Request) error {
				return errStatementTimeout
			})
			// An answer the handler chose stays as it is.
			handle("GET /notfound", func(w http.ResponseWriter, r *http.Request) error {
				<-r.Context().Done()
				return apierror.NotFound("gone")
			})
			handle("GET /long", api.LongLived(func(w http.ResponseWriter, r *http.Request) error {
				if d, ok := r.Context().Deadline(); ok {
					return api.WriteJSON(w, http.StatusOK, map[string]any{"deadline": d})
				}
				return api.WriteJSON(w, http.StatusOK, map[string]any{"deadline": nil})
			}))
			handle("GET /bounded", func(w http.ResponseWriter, r *http.Request) error {
				_, ok := r.Context().Deadline()
				return api.WriteJSON(w, http.StatusOK, map[string]any{"has_deadline": ok})
			})
		})},
	})
	for _, tc := range []struct {
		path, route string
		status      int
		code        string
		retryAfter  string
	}{
		{"/slow/7", "/slow/{id}", 503, "SERVICE_UNAVAILABLE", "1"},
		{"/wrapped", "/wrapped", 503, "SERVICE_UNAVAILABLE", "2"}, // the handler's
		{"/statement", "/statement", 503, "SERVICE_UNAVAILABLE", "1"},
		{"/notfound", "", 404, "NOT_FOUND", ""},
	} {
		t.Run(tc.path, func(t *testing.T) {
			logs.Reset()
			req := httptest.NewRequest("GET", tc.path, nil)
			req.Header.Set("X-Request-Id", "req-"+strings.Trim(strings.ReplaceAll(tc.path, "/", "-"), "-"))
			rec := httptest.NewRecorder()
			srv.Handler().ServeHTTP(rec, req)
			var env struct {
				Error struct{ Code, Message, RequestID string }
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &env); err != nil {
				t.Fatalf("not an envelope: %s", rec.Body)
			}
			if rec.Code != tc.status || env.Error.Code != tc.code {
				t.Fatalf("%d %s, want %d %s", rec.Code, rec.Body, tc.status, tc.code)
			}
			n := strings.Count(logs.String(), `"msg":"request timed out"`)
			if tc.route == "" {
				if n != 0 {
					t.Errorf("a timeout logged for a chosen answer:\n%s", logs.String())
				}
				return
			}
			if !strings.Contains(env.Error.Message, "took too long") || rec.Header().Get("Retry-After") != tc.retryAfter {
				t.Errorf("message %q, Retry-After %q", env.Error.Message, rec.Header().Get("Retry-After"))
			}
			if n != 1 || !strings.Contains(logs.String(), `"route":"`+tc.route+`"`) ||
				!strings.Contains(logs.String(), `"request_id":"`+req.Header.Get("X-Request-Id")+`"`) {
				t.Errorf("want one 'request timed out' line with route %s and the request id:\n%s", tc.route, logs.String())
			}
		})
	}

	rec := httptest.NewRecorder()
	srv.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/long", nil))
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), `"deadline":null`) {
		t.Errorf("LongLived: %d %s; want no deadline", rec.Code, rec.Body)
	}
	rec = httptest.NewRecorder()
	srv.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/bounded", nil))
	if !strings.Contains(rec.Body.String(), `"has_deadline":true`) {
		t.Errorf("a plain handler: %s; want a deadline", rec.Body)
	}
}
