package store_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/listgate/listgate/origin/store"
	"github.com/listgate/listgate/origin/store/storetest"
)

func mustTracedDB(tb testing.TB, maxConns int32) (*store.DB, *tracetest.SpanRecorder, trace.Tracer) {
	tb.Helper()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	tb.Cleanup(func() { tp.Shutdown(context.Background()) })
	tracer := tp.Tracer("test")
	db, err := store.Open(context.Background(), storetest.URL(tb), store.Options{MaxConns: maxConns, Tracer: tracer})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(db.Close)
	return db, rec, tracer
}

func appName(tb testing.TB, ctx context.Context, db *store.DB) string {
	tb.Helper()
	var name string
	if err := db.Pool.QueryRow(ctx, "SELECT current_setting('application_name')").Scan(&name); err != nil {
		tb.Fatal(err)
	}
	return name
}

// A query made within a traced request has a span, child of the request's,
// and runs on a connection whose application_name carries the trace id; a
// query without a trace has neither.
func TestQueriesTraced(t *testing.T) {
	db, rec, tracer := mustTracedDB(t, 1)
	ctx, req := tracer.Start(context.Background(), "request")
	if got, want := appName(t, ctx, db), store.AppName+" "+req.SpanContext().TraceID().String(); got != want {
		t.Errorf("application_name in a traced request %q, want %q", got, want)
	}
	req.End()
	spans := rec.Ended()
	if len(spans) != 2 {
		t.Fatalf("%d spans, want the query's and the request's", len(spans))
	}
	q := spans[0]
	if q.Name() != "SELECT" || q.Parent().SpanID() != req.SpanContext().SpanID() || q.SpanKind() != trace.SpanKindClient {
		t.Errorf("query span %q parent %v kind %v", q.Name(), q.Parent().SpanID(), q.SpanKind())
	}
	attrs := map[string]string{}
	for _, a := range q.Attributes() {
		attrs[string(a.Key)] = a.Value.Emit()
	}
	if attrs["db.system.name"] != "postgresql" || attrs["db.query.text"] != "SELECT current_setting('application_name')" {
		t.Errorf("attributes %v", attrs)
	}

	rec.Reset()
	if got := appName(t, context.Background(), db); got != store.AppName {
		t.Errorf("application_name without a trace %q, want %q", got, store.AppName)
	}
	if n := len(rec.Ended()); n != 0 {
		t.Errorf("%d spans without a trace", n)
	}
	// A request not sampled has no trace to look up: no tag.
	unsampled := trace.ContextWithSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{1}, SpanID: trace.SpanID{1}}))
	if got := appName(t, unsampled, db); got != store.AppName {
		t.Errorf("application_name of an unsampled trace %q", got)
	}
}

func newTraceCtx(tracer trace.Tracer) (context.Context, trace.Span) {
	return tracer.Start(context.Background(), "request")
}

// BenchmarkTraceTag compares ways to put a request's trace into its
// queries, one query per request, each request a new trace, on one
// connection: none (the statement cache works), application_name (this
// package: one set_config round trip per new trace), and a sqlcommenter
// comment (/*traceparent='…'*/, a new statement text per request: prepared
// again each time, the cache churning).
func BenchmarkTraceTag(b *testing.B) {
	const q = "SELECT id, name FROM sites WHERE id = $1"
	db, _, tracer := mustTracedDB(b, 1)
	plain, err := store.Open(context.Background(), storetest.URL(b), store.Options{MaxConns: 1})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(plain.Close)
	id := "00000000-0000-4000-8000-000000000000"
	run := func(b *testing.B, db *store.DB, ctx context.Context, sql string) {
		rows, err := db.Pool.Query(ctx, sql, id)
		if err != nil {
			b.Fatal(err)
		}
		rows.Close()
		if rows.Err() != nil {
			b.Fatal(rows.Err())
		}
	}
	b.Run("untraced", func(b *testing.B) {
		for b.Loop() {
			run(b, plain, context.Background(), q)
		}
	})
	b.Run("spans", func(b *testing.B) {
		ctx, span := newTraceCtx(tracer)
		defer span.End()
		for b.Loop() {
			run(b, db, ctx, q)
		}
	})
	b.Run("application_name", func(b *testing.B) {
		for b.Loop() {
			ctx, span := newTraceCtx(tracer)
			run(b, db, ctx, q)
			span.End()
		}
	})
	b.Run("comment", func(b *testing.B) {
		for b.Loop() {
			var tid [16]byte
			rand.Read(tid[:])
			run(b, plain, context.Background(), fmt.Sprintf("/*traceparent='00-%x-00f067aa0ba902b7-01'*/ %s", tid, q))
		}
	})
	b.Run("comment_exec_mode", func(b *testing.B) {
		// The comment without the cache: one round trip, nothing prepared.
		for b.Loop() {
			var tid [16]byte
			rand.Read(tid[:])
			rows, err := plain.Pool.Query(context.Background(), fmt.Sprintf("/*traceparent='00-%x-00f067aa0ba902b7-01'*/ %s", tid, q),
				pgx.QueryExecModeExec, id)
			if err != nil {
				b.Fatal(err)
			}
			rows.Close()
		}
	})
}
