package gateway

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/listgate/listgate/edge/keycache"
)

// panicTracer's spans panic when the request path names them after their
// route, which it does once the answer is written (traceRoute).
type panicTracer struct{ noop.Tracer }

type panicSpan struct{ noop.Span }

func (panicTracer) Start(ctx context.Context, _ string, _ ...trace.SpanStartOption) (context.Context, trace.Span) {
	return ctx, panicSpan{}
}

func (panicSpan) SetName(string) { panic("span name") }

// A panic after a cached answer was written is answered 500 with the API's
// envelope, as plain JSON: not with the compressed answer's
// Content-Encoding, which would make the envelope unreadable.
func TestPanicAfterCompressedAnswer(t *testing.T) {
	key := mustKey(t)
	g, cache := gatewayFor(t, key, keycache.Info{}, Config{Tracer: panicTracer{}})
	path := "/v1/sites/" + testSite + "/listings"
	big := bytes.Repeat([]byte(`{"listing":"a fine house by the sea"},`), 500)
	k := mustAppendKey(t, cache, []byte(testSite), []byte(path), nil)
	if cache.Put(k, 200, []byte("application/json"), []byte("max-age=60"), []byte(`"e1"`), big, time.Now()) == nil {
		t.Fatal("not stored")
	}
	for _, enc := range []string{"gzip", "br"} {
		ctx := serveOne(g, "GET", path, map[string]string{"Authorization": "Bearer " + key, "Accept-Encoding": enc}, "", "127.0.0.1")
		if ctx.Response.StatusCode() != 500 {
			t.Fatalf("%s: %d, want 500", enc, ctx.Response.StatusCode())
		}
		if ce := ctx.Response.Header.Peek("Content-Encoding"); len(ce) > 0 {
			t.Errorf("%s: the error envelope goes with Content-Encoding %q: %q", enc, ce, ctx.Response.Body())
		}
		if !strings.Contains(string(ctx.Response.Body()), `"code":"INTERNAL_ERROR"`) {
			t.Errorf("%s: body %q", enc, ctx.Response.Body())
		}
	}
}
