// Package logctx carries a request's log fields (its request id, its trace
// id) in a context.Context, and wraps a slog.Handler so that every record
// logged with that context carries them, whichever handler (JSON, text)
// prints the line. Request paths log with the *Context methods of
// slog.Logger (InfoContext, LogAttrs) and the request's context.
package logctx

import (
	"context"
	"log/slog"
)

// Field names, as every log line spells them.
const (
	KeyRequestID = "request_id"
	KeyTraceID   = "trace_id"
	KeySpanID    = "span_id"
)

type fieldsKey struct{}

// fields is an immutable list: With copies.
type fields []slog.Attr

// With returns a context whose log records carry attrs besides those ctx
// already carries (a later attribute of the same key wins).
func With(ctx context.Context, attrs ...slog.Attr) context.Context {
	old := From(ctx)
	f := make(fields, 0, len(old)+len(attrs))
	for _, a := range old {
		if !hasKey(attrs, a.Key) {
			f = append(f, a)
		}
	}
	f = append(f, attrs...)
	return context.WithValue(ctx, fieldsKey{}, f)
}

// From returns the attributes ctx carries; the caller must not modify them.
func From(ctx context.Context) []slog.Attr {
	if ctx == nil {
		return nil
	}
	f, _ := ctx.Value(fieldsKey{}).(fields)
	return f
}

// Handler adds the context's attributes to each record before the handler
// it wraps sees it. An attribute the record already has under the same key
// is not added twice.
type Handler struct{ inner slog.Handler }

// NewHandler wraps h.
func NewHandler(h slog.Handler) *Handler {
	if lh, ok := h.(*Handler); ok {
		return lh
	}
	return &Handler{inner: h}
}

// Enabled is the wrapped handler's.
func (h *Handler) Enabled(ctx context.Context, l slog.Level) bool { return h.inner.Enabled(ctx, l) }

// Handle adds the context's attributes and passes the record on.
func (h *Handler) Handle(ctx context.Context, r slog.Record) error {
	if f := From(ctx); len(f) > 0 {
		var have []string
		r.Attrs(func(a slog.Attr) bool {
			if hasKey(f, a.Key) {
				have = append(have, a.Key)
			}
			return true
		})
		r = r.Clone()
		for _, a := range f {
			if !contains(have, a.Key) {
				r.AddAttrs(a)
			}
		}
	}
	return h.inner.Handle(ctx, r)
}

// WithAttrs wraps the wrapped handler's.
func (h *Handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &Handler{inner: h.inner.WithAttrs(attrs)}
}

// WithGroup wraps the wrapped handler's. The context's attributes land in
// the group, as any attribute of the record would.
func (h *Handler) WithGroup(name string) slog.Handler {
	return &Handler{inner: h.inner.WithGroup(name)}
}

func hasKey(attrs []slog.Attr, key string) bool {
	for _, a := range attrs {
		if a.Key == key {
			return true
		}
	}
	return false
}

func contains(keys []string, key string) bool {
	for _, k := range keys {
		if k == key {
			return true
		}
	}
	return false
}
