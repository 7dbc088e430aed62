package gateway

import (
	"context"
	"log/slog"

	"github.com/valyala/fasthttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/listgate/listgate/pkg/logctx"
	"github.com/listgate/listgate/pkg/tracecontext"
)

// Trace context. A client's traceparent is passed to the origin only when
// it is valid (tracecontext.Parse); an invalid one, and its tracestate, are
// dropped, so the origin starts a new trace. With tracing on (Config.Tracer)
// every request has a server span, child of the client's traceparent, and
// every request forwarded to the origin a client span, whose traceparent
// the origin gets instead. With tracing off nothing of this runs on the
// cache-hit path: a header the hit path never reads costs nothing.

const (
	hdrTraceParent = tracecontext.HeaderParent
	hdrTraceState  = tracecontext.HeaderState
)

// traceKey is the user value under which a traced request keeps its span.
type traceKey struct{}

// reqTrace is a traced request's server span and the context carrying it.
type reqTrace struct {
	ctx  context.Context
	span trace.Span
}

// clientParent is the client's trace context, when its traceparent is one
// valid header; its tracestate comes along when valid.
func clientParent(h *fasthttp.RequestHeader) (trace.SpanContext, bool) {
	tps := h.PeekAll(hdrTraceParent)
	if len(tps) != 1 {
		return trace.SpanContext{}, false
	}
	p, ok := tracecontext.Parse(tps[0])
	if !ok {
		return trace.SpanContext{}, false
	}
	var ts trace.TraceState
	if st := h.PeekAll(hdrTraceState); len(st) == 1 && tracecontext.ValidState(st[0]) {
		ts, _ = trace.ParseTraceState(string(st[0]))
	}
	return trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID(p.TraceID), SpanID: trace.SpanID(p.SpanID),
		TraceFlags: trace.TraceFlags(p.Flags), TraceState: ts, Remote: true}), true
}

// traced reports whether a request is traced (tracing on): all but the
// probes and /metrics, which are traced only with a traceparent.
func traced(ctx *fasthttp.RequestCtx) bool {
	switch string(ctx.URI().PathOriginal()) {
	case "/healthz", "/readyz", "/metrics":
		return len(ctx.Request.Header.Peek(hdrTraceParent)) > 0
	}
	return true
}

// startTrace starts a request's server span (tracing on).
func (g *Gateway) startTrace(ctx *fasthttp.RequestCtx) *reqTrace {
	parent := context.Background()
	if sc, ok := clientParent(&ctx.Request.Header); ok {
		parent = trace.ContextWithRemoteSpanContext(parent, sc)
	}
	method := string(ctx.Method())
	sctx, span := g.tracer.Start(parent, method, trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(attribute.String("http.request.method", method),
			attribute.String("url.path", string(ctx.URI().PathOriginal()))))
	rt := &reqTrace{ctx: sctx, span: span}
	ctx.SetUserValue(traceKey{}, rt)
	return rt
}

// traceRoute names a traced request's span after its route and records
// the key's site.
func (g *Gateway) traceRoute(ctx *fasthttp.RequestCtx, rt *route, st *passState) {
	t, ok := ctx.UserValue(traceKey{}).(*reqTrace)
	if !ok {
		return
	}
	t.span.SetName(string(ctx.Method()) + " " + rt.path)
	t.span.SetAttributes(attribute.String("http.route", rt.path))
	if st.authenticated {
		t.span.SetAttributes(attribute.String("listgate.site_id", st.info.SiteID), attribute.String("listgate.key_id", st.info.KeyID))
	}
}

// endTrace ends a request's server span with its answer.
func endTrace(ctx *fasthttp.RequestCtx, t *reqTrace) {
	status := ctx.Response.StatusCode()
	t.span.SetAttributes(attribute.Int("http.response.status_code", status),
		attribute.String("listgate.request_id", string(requestIDOf(ctx))))
	if c := ctx.Response.Header.Peek("X-Cache"); len(c) > 0 {
		t.span.SetAttributes(attribute.String("listgate.cache", string(c)))
	}
	if status >= 500 {
		t.span.SetStatus(codes.Error, "")
	}
	t.span.End()
}

// traceParentOf is the context a request's origin span is a child of:
// its server span's (tracing on), or none.
func traceParentOf(ctx *fasthttp.RequestCtx) context.Context {
	if t, ok := ctx.UserValue(traceKey{}).(*reqTrace); ok {
		return t.ctx
	}
	return context.Background()
}

// originSpan starts the client span of a request to the origin and puts
// its traceparent (and tracestate) on req; nil with tracing off, when req
// keeps the client's valid trace headers (sanitizeTraceHeaders).
func (g *Gateway) originSpan(parent context.Context, req *fasthttp.Request) trace.Span {
	if g.tracer == nil {
		return nil
	}
	method := string(req.Header.Method())
	_, span := g.tracer.Start(parent, "origin "+method, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String("http.request.method", method),
			attribute.String("url.path", string(req.URI().PathOriginal()))))
	sc := span.SpanContext()
	var buf [tracecontext.Length]byte
	req.Header.SetBytesV(hdrTraceParent, tracecontext.Parent{TraceID: tracecontext.TraceID(sc.TraceID()),
		SpanID: tracecontext.SpanID(sc.SpanID()), Flags: byte(sc.TraceFlags())}.AppendTo(buf[:0]))
	if ts := sc.TraceState().String(); ts != "" {
		req.Header.Set(hdrTraceState, ts)
	} else {
		req.Header.Del(hdrTraceState)
	}
	return span
}

// endOriginSpan ends an origin span with the origin's answer or the error.
func endOriginSpan(span trace.Span, resp *fasthttp.Response, err error) {
	if span == nil {
		return
	}
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, "origin unreachable")
	} else {
		span.SetAttributes(attribute.Int("http.response.status_code", resp.StatusCode()))
		if resp.StatusCode() >= 500 {
			span.SetStatus(codes.Error, "")
		}
	}
	span.End()
}

// sanitizeTraceHeaders keeps a request's trace headers for the origin only
// when they are valid: one traceparent by tracecontext.Parse, and a
// tracestate by ValidState with it; the rest is dropped.
func sanitizeTraceHeaders(h *fasthttp.RequestHeader) {
	tps := h.PeekAll(hdrTraceParent)
	if len(tps) == 0 {
		h.Del(hdrTraceState)
		return
	}
	if _, ok := tracecontext.Parse(tps[0]); !ok || len(tps) > 1 {
		h.Del(hdrTraceParent)
		h.Del(hdrTraceState)
		return
	}
	if st := h.PeekAll(hdrTraceState); len(st) > 1 || len(st) == 1 && !tracecontext.ValidState(st[0]) {
		h.Del(hdrTraceState)
	}
}

// logContext is the context to log a request's lines with: its request id,
// and its trace and span ids when it has a trace (its span's, or a valid
// traceparent's with tracing off). For the lines of the request path only:
// it allocates.
func logContext(ctx *fasthttp.RequestCtx) context.Context {
	attrs := []slog.Attr{slog.String(logctx.KeyRequestID, string(requestIDOf(ctx)))}
	if t, ok := ctx.UserValue(traceKey{}).(*reqTrace); ok {
		sc := t.span.SpanContext()
		attrs = append(attrs, slog.String(logctx.KeyTraceID, sc.TraceID().String()), slog.String(logctx.KeySpanID, sc.SpanID().String()))
	} else if p, ok := tracecontext.Parse(ctx.Request.Header.Peek(hdrTraceParent)); ok {
		attrs = append(attrs, slog.String(logctx.KeyTraceID, p.TraceID.String()))
	}
	return logctx.With(ctx, attrs...)
}
