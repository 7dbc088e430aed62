package gateway

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/listgate/listgate/pkg/logctx"
	"github.com/listgate/listgate/pkg/tracecontext"
)

const clientTraceParent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

// With tracing off, a request carrying trace headers costs the hit path
// nothing more: it never reads them.
func TestHitPathAllocationsWithTraceparent(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector changes allocation counts")
	}
	key := mustKey(t)
	g, cache := newTestGateway(t, key, 60)
	path := "/v1/sites/" + testSite + "/listings"
	k := mustAppendKey(t, cache, []byte(testSite), []byte(path), []byte("page=2"))
	if cache.Put(k, 200, []byte("application/json"), []byte("max-age=600"), []byte(`"e"`), make([]byte, 10<<10), time.Now()) == nil {
		t.Fatal("not stored")
	}
	ctx := requestOnConn("GET", path+"?page=2", map[string]string{"Authorization": "Bearer " + key,
		"traceparent": clientTraceParent, "tracestate": "rojo=00f067aa0ba902b7"})
	run := func() {
		ctx.Response.Reset()
		g.Handler(ctx)
	}
	run()
	if ctx.Response.StatusCode() != 200 || string(ctx.Response.Header.Peek("X-Cache")) != "HIT" {
		t.Fatalf("%d %s", ctx.Response.StatusCode(), ctx.Response.Header.Peek("X-Cache"))
	}
	if n := testing.AllocsPerRun(200, run); n != 0 {
		t.Errorf("hit path with a traceparent, tracing off: %v allocations per request", n)
	}
}

// With tracing off, the origin gets the client's trace headers when they
// are valid, and neither when the traceparent is not.
func TestTraceHeadersForwardedWhenValid(t *testing.T) {
	o := newFakeOrigin(t, "no-store")
	key := mustKey(t)
	g := gatewayTo(t, o, key, Config{})
	tests := []struct {
		name          string
		parent, state string
		wantParent    string
		wantState     string
	}{
		{"valid", clientTraceParent, "rojo=1,congo=2", clientTraceParent, "rojo=1,congo=2"},
		{"no state", clientTraceParent, "", clientTraceParent, ""},
		{"invalid state", clientTraceParent, "Rojo=1", clientTraceParent, ""},
		{"uppercase", strings.ToUpper(clientTraceParent), "rojo=1", "", ""},
		{"zero trace", "00-00000000000000000000000000000000-00f067aa0ba902b7-01", "rojo=1", "", ""},
		{"version 01", "01" + clientTraceParent[2:], "", "", ""},
		{"state alone", "", "rojo=1", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hdr := map[string]string{"Authorization": "Bearer " + key, "Content-Type": "application/json"}
			if tt.parent != "" {
				hdr["traceparent"] = tt.parent
			}
			if tt.state != "" {
				hdr["tracestate"] = tt.state
			}
			ctx := serveOne(g, "POST", "/v1/leads", hdr, `{"name":"A"}`, "127.0.0.1")
			if ctx.Response.StatusCode() != 200 {
				t.Fatalf("%d %s", ctx.Response.StatusCode(), ctx.Response.Body())
			}
			h := *o.lastHdr.Load()
			if got := h.Get("traceparent"); got != tt.wantParent {
				t.Errorf("origin got traceparent %q, want %q", got, tt.wantParent)
			}
			if got := h.Get("tracestate"); got != tt.wantState {
				t.Errorf("origin got tracestate %q, want %q", got, tt.wantState)
			}
		})
	}
}

// With tracing on, a request has a server span, child of the client's
// traceparent, and its request to the origin a client span, whose
// traceparent the origin gets; an invalid traceparent starts a new trace.
func TestTracingOnSpans(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { tp.Shutdown(context.Background()) })
	o := newFakeOrigin(t, "max-age=60")
	key := mustKey(t)
	g := gatewayTo(t, o, key, Config{Tracer: tp.Tracer("test")})
	client, _ := tracecontext.ParseString(clientTraceParent)

	for _, tc := range []struct {
		name, parent string
		child        bool
	}{{"child", clientTraceParent, true}, {"invalid", "00-" + strings.Repeat("0", 32) + "-00f067aa0ba902b7-01", false}} {
		t.Run(tc.name, func(t *testing.T) {
			rec.Reset()
			uri := "/v1/sites/" + testSite + "/listings?page=" + tc.name
			ctx := serveOne(g, "GET", uri, map[string]string{"Authorization": "Bearer " + key, "traceparent": tc.parent,
				"tracestate": "rojo=1"}, "", "127.0.0.1")
			if ctx.Response.StatusCode() != 200 {
				t.Fatalf("%d %s", ctx.Response.StatusCode(), ctx.Response.Body())
			}
			spans := rec.Ended()
			if len(spans) != 2 {
				t.Fatalf("%d spans, want server and origin", len(spans))
			}
			originSpan, server := spans[0], spans[1]
			if server.SpanKind() != trace.SpanKindServer || originSpan.SpanKind() != trace.SpanKindClient {
				t.Fatalf("kinds %v %v", server.SpanKind(), originSpan.SpanKind())
			}
			if server.Name() != "GET /v1/sites/{site}/listings" {
				t.Errorf("server span %q", server.Name())
			}
			if originSpan.Parent().SpanID() != server.SpanContext().SpanID() || originSpan.SpanContext().TraceID() != server.SpanContext().TraceID() {
				t.Error("the origin span is not the server span's child")
			}
			if got := server.Parent().TraceID() == trace.TraceID(client.TraceID) && server.Parent().SpanID() == trace.SpanID(client.SpanID); got != tc.child {
				t.Errorf("server span child of the client's: %v, want %v", got, tc.child)
			}
			if tc.child && server.SpanContext().TraceState().Get("rojo") != "1" {
				t.Error("tracestate lost")
			}
			h := *o.lastHdr.Load()
			got, ok := tracecontext.ParseString(h.Get("traceparent"))
			if !ok || trace.SpanID(got.SpanID) != originSpan.SpanContext().SpanID() || trace.TraceID(got.TraceID) != originSpan.SpanContext().TraceID() {
				t.Errorf("origin got traceparent %q, want the origin span's", h.Get("traceparent"))
			}
			attrs := map[string]string{}
			for _, a := range server.Attributes() {
				attrs[string(a.Key)] = a.Value.Emit()
			}
			if attrs["http.response.status_code"] != "200" || attrs["listgate.site_id"] != testSite || attrs["listgate.cache"] != "MISS" {
				t.Errorf("server span attributes %v", attrs)
			}
		})
	}
}

// Probes start no trace of their own.
func TestProbesNotTraced(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { tp.Shutdown(context.Background()) })
	g := gatewayTo(t, newFakeOrigin(t, "no-store"), mustKey(t), Config{Tracer: tp.Tracer("test")})
	serveOne(g, "GET", "/healthz", nil, "", "127.0.0.1")
	if n := len(rec.Ended()); n != 0 {
		t.Errorf("%d spans for a probe", n)
	}
	serveOne(g, "GET", "/healthz", map[string]string{"traceparent": clientTraceParent}, "", "127.0.0.1")
	if n := len(rec.Ended()); n != 1 {
		t.Errorf("%d spans for a probe with a traceparent, want 1", n)
	}
}

// Request-path log lines carry the request id and the client's trace id.
func TestLogLinesCarryIDs(t *testing.T) {
	o := newFakeOrigin(t, "no-store")
	o.srv.Close() // the origin is down: the edge logs it
	key := mustKey(t)
	g := gatewayTo(t, o, key, Config{})
	var buf bytes.Buffer
	g.log = slog.New(logctx.NewHandler(slog.NewJSONHandler(&buf, nil)))
	ctx := serveOne(g, "POST", "/v1/leads", map[string]string{"Authorization": "Bearer " + key,
		"X-Request-Id": "req-1", "traceparent": clientTraceParent}, `{"name":"A"}`, "127.0.0.1")
	if ctx.Response.StatusCode() != 503 {
		t.Fatalf("%d", ctx.Response.StatusCode())
	}
	line := buf.String()
	if !strings.Contains(line, `"request_id":"req-1"`) || !strings.Contains(line, `"trace_id":"4bf92f3577b34da6a3ce929d0e0e4736"`) {
		t.Errorf("log line without the ids: %s", line)
	}
}
