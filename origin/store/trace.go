package store

import (
	"context"
	"strings"

	"github.com/jackc/pgx/v5"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// Tracing of the origin's queries (Options.Tracer). Two things, only for
// queries made within a traced request (a context carrying a valid span):
//
//   - each Query, QueryRow, Exec and SendBatch has a client span, child of
//     the request's, with the statement's text (never its arguments);
//   - a connection taken from the pool for a sampled request is tagged with
//     the request's trace id in application_name ("listgate-origin
//     4bf92f35…"), which Postgres shows in pg_stat_activity and, with %a in
//     log_line_prefix, in its logs (slow-query lines included), so an
//     operator goes from a query to its trace. A connection taken without
//     one goes back to plain "listgate-origin".
//
// The tag is application_name, not a comment in the SQL (sqlcommenter's
// /*traceparent='…'*/): a comment different on every request makes every
// statement a new one to pgx's statement cache, prepared again each time
// and pushing the others out. Setting it costs one round trip when a
// connection changes hands between traces (BenchmarkTraceTag).

// AppName is the origin's application_name in Postgres.
const AppName = "listgate-origin"

// appNameKey is the application_name a connection has now (its CustomData).
const appNameKey = "listgate.application_name"

type untracedKey struct{}

// queryTracer is pgx's QueryTracer and BatchTracer for Options.Tracer.
type queryTracer struct{ tracer trace.Tracer }

var (
	_ pgx.QueryTracer = (*queryTracer)(nil)
	_ pgx.BatchTracer = (*queryTracer)(nil)
)

// querySpanKey holds a query's own span, so that its end does not end the
// request's.
type querySpanKey struct{}

func (q *queryTracer) start(ctx context.Context, conn *pgx.Conn, op, sql string) context.Context {
	if !trace.SpanContextFromContext(ctx).IsValid() || ctx.Value(untracedKey{}) != nil {
		return ctx
	}
	attrs := []attribute.KeyValue{attribute.String("db.system.name", "postgresql"),
		attribute.String("db.namespace", conn.Config().Database), attribute.String("db.operation.name", op)}
	if sql != "" {
		attrs = append(attrs, attribute.String("db.query.text", sql))
	}
	ctx, span := q.tracer.Start(ctx, op, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	return context.WithValue(ctx, querySpanKey{}, span)
}

func end(ctx context.Context, err error, rows int64) {
	span, ok := ctx.Value(querySpanKey{}).(trace.Span)
	if !ok {
		return
	}
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, "")
	} else if rows >= 0 {
		span.SetAttributes(attribute.Int64("db.response.returned_rows", rows))
	}
	span.End()
}

// TraceQueryStart starts a query's span.
func (q *queryTracer) TraceQueryStart(ctx context.Context, conn *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	return q.start(ctx, conn, operation(data.SQL), data.SQL)
}

// TraceQueryEnd ends it.
func (q *queryTracer) TraceQueryEnd(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryEndData) {
	end(ctx, data.Err, data.CommandTag.RowsAffected())
}

// TraceBatchStart starts a batch's span; its statements are events.
func (q *queryTracer) TraceBatchStart(ctx context.Context, conn *pgx.Conn, data pgx.TraceBatchStartData) context.Context {
	ctx = q.start(ctx, conn, "BATCH", "")
	if span, ok := ctx.Value(querySpanKey{}).(trace.Span); ok && data.Batch != nil {
		span.SetAttributes(attribute.Int("db.operation.batch.size", data.Batch.Len()))
	}
	return ctx
}

// TraceBatchQuery records one statement of a batch.
func (q *queryTracer) TraceBatchQuery(ctx context.Context, _ *pgx.Conn, data pgx.TraceBatchQueryData) {
	if span, ok := ctx.Value(querySpanKey{}).(trace.Span); ok {
		span.AddEvent(operation(data.SQL), trace.WithAttributes(attribute.String("db.query.text", data.SQL)))
		if data.Err != nil {
			span.RecordError(data.Err)
		}
	}
}

// TraceBatchEnd ends the batch's span.
func (q *queryTracer) TraceBatchEnd(ctx context.Context, _ *pgx.Conn, data pgx.TraceBatchEndData) {
	end(ctx, data.Err, -1)
}

// operation is a statement's first keyword, upper case: SELECT, INSERT, WITH…
func operation(sql string) string {
	sql = strings.TrimLeft(sql, " \t\r\n(")
	for strings.HasPrefix(sql, "--") || strings.HasPrefix(sql, "/*") {
		if strings.HasPrefix(sql, "--") {
			_, sql, _ = strings.Cut(sql, "\n")
		} else {
			_, sql, _ = strings.Cut(sql, "*/")
		}
		sql = strings.TrimLeft(sql, " \t\r\n(")
	}
	n := strings.IndexFunc(sql, func(r rune) bool { return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') })
	if n < 0 {
		n = len(sql)
	}
	if n == 0 || n > 16 {
		return "QUERY"
	}
	return strings.ToUpper(sql[:n])
}

// tagConn is the pool's PrepareConn with tracing on: it sets the
// connection's application_name to carry the acquiring request's trace id
// (sampled requests only), or back to AppName, when it is not so already.
func tagConn(ctx context.Context, c *pgx.Conn) (bool, error) {
	want := AppName
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() && sc.IsSampled() {
		want = AppName + " " + sc.TraceID().String()
	}
	data := c.PgConn().CustomData()
	have, _ := data[appNameKey].(string)
	if have == "" {
		have = AppName // as connected
	}
	if have == want {
		return true, nil
	}
	if _, err := c.Exec(context.WithValue(ctx, untracedKey{}, true), "SELECT set_config('application_name', $1, false)", want); err != nil {
		if ctx.Err() != nil {
			return false, err
		}
		return false, nil // a connection that cannot take it is dropped; another is tried
	}
	data[appNameKey] = want
	return true, nil
}
