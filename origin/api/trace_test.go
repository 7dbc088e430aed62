package api_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	json "github.com/goccy/go-json"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/listgate/listgate/origin/api"
	"github.com/listgate/listgate/pkg/logctx"
)

const edgeTraceParent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

// mountFunc mounts one handler.
type mountFunc func(handle func(string, api.HandlerFunc))

func (m mountFunc) Mount(handle func(string, api.HandlerFunc)) { m(handle) }

// tracedServer serves GET /things/{id}, which logs a line with the
// request's context, behind the server's middleware.
func tracedServer(tracer trace.Tracer, logs *bytes.Buffer) http.Handler {
	log := slog.New(logctx.NewHandler(slog.NewJSONHandler(logs, nil)))
	return api.New(api.Config{Log: log, Tracer: tracer, Mounts: []api.Mounter{mountFunc(func(handle func(string, api.HandlerFunc)) {
		handle("GET /things/{id}", func(w http.ResponseWriter, r *http.Request) error {
			log.InfoContext(r.Context(), "handler line")
			return api.WriteJSON(w, 200, map[string]string{"ok": "yes"})
		})
	})}}).Handler()
}

func logLines(t *testing.T, buf *bytes.Buffer) []map[string]any {
	t.Helper()
	var lines []map[string]any
	for l := range strings.SplitSeq(strings.TrimSpace(buf.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		lines = append(lines, m)
	}
	return lines
}

func TestTracingOn(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { tp.Shutdown(context.Background()) })
	var logs bytes.Buffer
	h := tracedServer(tp.Tracer("test"), &logs)
	for _, tc := range []struct {
		name, parent string
		child        bool
	}{{"child of the edge's", edgeTraceParent, true}, {"invalid: a new trace", strings.ToUpper(edgeTraceParent), false}} {
		t.Run(tc.name, func(t *testing.T) {
			rec.Reset()
			logs.Reset()
			r := httptest.NewRequest("GET", "/things/1", nil)
			r.Header.Set("traceparent", tc.parent)
			r.Header.Set("X-Request-Id", "req-7")
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != 200 {
				t.Fatalf("%d %s", w.Code, w.Body)
			}
			spans := rec.Ended()
			if len(spans) != 1 {
				t.Fatalf("%d spans", len(spans))
			}
			s := spans[0]
			if s.Name() != "GET /things/{id}" || s.SpanKind() != trace.SpanKindServer {
				t.Errorf("span %q kind %v", s.Name(), s.SpanKind())
			}
			isChild := s.Parent().TraceID().String() == "4bf92f3577b34da6a3ce929d0e0e4736" && s.Parent().SpanID().String() == "00f067aa0ba902b7"
			if isChild != tc.child || (tc.child && s.SpanContext().TraceID() != s.Parent().TraceID()) {
				t.Errorf("child of the traceparent: %v, want %v", isChild, tc.child)
			}
			lines := logLines(t, &logs)
			if len(lines) != 2 {
				t.Fatalf("%d log lines", len(lines))
			}
			for _, l := range lines {
				if l["trace_id"] != s.SpanContext().TraceID().String() || l["span_id"] != s.SpanContext().SpanID().String() || l["request_id"] != "req-7" {
					t.Errorf("log line %v, want trace %s span %s request req-7", l, s.SpanContext().TraceID(), s.SpanContext().SpanID())
				}
			}
		})
	}
}

// Probes and the edge's internal calls start no trace of their own.
func TestProbesNotTraced(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { tp.Shutdown(context.Background()) })
	h := tracedServer(tp.Tracer("test"), &bytes.Buffer{})
	for _, path := range []string{"/healthz", "/readyz", "/internal/v1/events"} {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", path, nil))
	}
	if n := len(rec.Ended()); n != 0 {
		t.Errorf("%d spans", n)
	}
	r := httptest.NewRequest("GET", "/healthz", nil)
	r.Header.Set("traceparent", edgeTraceParent)
	h.ServeHTTP(httptest.NewRecorder(), r)
	if n := len(rec.Ended()); n != 1 {
		t.Errorf("%d spans with a traceparent, want 1", n)
	}
}

// With tracing off, a valid traceparent's trace id still reaches every log
// line of the request.
func TestTracingOffLogsTraceID(t *testing.T) {
	var logs bytes.Buffer
	h := tracedServer(nil, &logs)
	r := httptest.NewRequest("GET", "/things/1", nil)
	r.Header.Set("traceparent", edgeTraceParent)
	h.ServeHTTP(httptest.NewRecorder(), r)
	lines := logLines(t, &logs)
	if len(lines) != 2 {
		t.Fatalf("%d log lines", len(lines))
	}
	for _, l := range lines {
		if l["trace_id"] != "4bf92f3577b34da6a3ce929d0e0e4736" || l["request_id"] == nil || l["request_id"] == "" {
			t.Errorf("log line %v", l)
		}
		if strings.Count(logs.String(), `"request_id"`) != 2 {
			t.Errorf("request_id not once a line: %s", logs.String())
		}
	}
}
