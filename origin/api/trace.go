package api

import (
	"log/slog"
	"net/http"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/listgate/listgate/pkg/logctx"
	"github.com/listgate/listgate/pkg/tracecontext"
)

// traceRequests takes the request's W3C trace context (the edge's
// traceparent, parsed strictly: an invalid one is ignored and a new trace
// starts) and, with tracing on (Config.Tracer), serves the request in a
// server span, child of it, named after the route (but for untracedPath's
// without a traceparent). Either way the
// request's log lines carry the trace id (and the span id with tracing
// on). The span's context reaches the handlers, and through them the
// database's queries (store.Options.Tracer).
func (s *Server) traceRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		parent, ok := requestParent(r.Header)
		if s.tracer == nil || !ok && untracedPath(r.URL.Path) {
			if ok {
				r = r.WithContext(logctx.With(ctx, slog.String(logctx.KeyTraceID, parent.TraceID().String())))
			}
			next.ServeHTTP(w, r)
			return
		}
		if ok {
			ctx = trace.ContextWithRemoteSpanContext(ctx, parent)
		}
		ctx, span := s.tracer.Start(ctx, r.Method, trace.WithSpanKind(trace.SpanKindServer),
			trace.WithAttributes(attribute.String("http.request.method", r.Method), attribute.String("url.path", r.URL.Path),
				attribute.String("listgate.request_id", RequestID(ctx))))
		sc := span.SpanContext()
		ctx = logctx.With(ctx, slog.String(logctx.KeyTraceID, sc.TraceID().String()), slog.String(logctx.KeySpanID, sc.SpanID().String()))
		tw := &traceWriter{ResponseWriter: w}
		rc := r.WithContext(ctx)
		defer func() {
			status := tw.status
			if status == 0 {
				status = http.StatusOK
			}
			if rc.Pattern != "" && rc.Pattern != "/" {
				span.SetName(rc.Method + " " + rc.Pattern) // the mux's patterns are paths
				span.SetAttributes(attribute.String("http.route", rc.Pattern))
			}
			span.SetAttributes(attribute.Int("http.response.status_code", status))
			if status >= 500 {
				span.SetStatus(codes.Error, "")
			}
			span.End()
		}()
		next.ServeHTTP(tw, rc)
	})
}

// untracedPath reports the paths that start no trace of their own: probes
// and metrics, and the edge's internal calls (key introspection, usage, the
// event stream), which would each be a trace of one span. With a
// traceparent they are traced.
func untracedPath(path string) bool {
	return path == "/healthz" || path == "/readyz" || path == "/metrics" || strings.HasPrefix(path, "/internal/")
}

// requestParent is the request's trace context: one valid traceparent,
// with its tracestate when that is valid too.
func requestParent(h http.Header) (trace.SpanContext, bool) {
	tps := h.Values(tracecontext.HeaderParent)
	if len(tps) != 1 {
		return trace.SpanContext{}, false
	}
	p, ok := tracecontext.ParseString(tps[0])
	if !ok {
		return trace.SpanContext{}, false
	}
	var ts trace.TraceState
	if st := h.Values(tracecontext.HeaderState); len(st) == 1 && tracecontext.ValidState([]byte(st[0])) {
		ts, _ = trace.ParseTraceState(st[0])
	}
	return trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID(p.TraceID), SpanID: trace.SpanID(p.SpanID),
		TraceFlags: trace.TraceFlags(p.Flags), TraceState: ts, Remote: true}), true
}

// traceWriter records a response's status for its span.
type traceWriter struct {
	http.ResponseWriter
	status int
}

func (w *traceWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *traceWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach Flush and deadlines.
func (w *traceWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
