package otlphttp_test

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"

	"github.com/listgate/listgate/pkg/telemetry/otlphttp"
)

// The official types' values, to write what a request must decode to.
func sv(s string) *commonpb.AnyValue {
	return &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: s}}
}
func iv(i int64) *commonpb.AnyValue {
	return &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: i}}
}
func bv(b bool) *commonpb.AnyValue {
	return &commonpb.AnyValue{Value: &commonpb.AnyValue_BoolValue{BoolValue: b}}
}
func dv(f float64) *commonpb.AnyValue {
	return &commonpb.AnyValue{Value: &commonpb.AnyValue_DoubleValue{DoubleValue: f}}
}
func av(vs ...*commonpb.AnyValue) *commonpb.AnyValue {
	return &commonpb.AnyValue{Value: &commonpb.AnyValue_ArrayValue{ArrayValue: &commonpb.ArrayValue{Values: vs}}}
}
func mv(kvs ...*commonpb.KeyValue) *commonpb.AnyValue {
	return &commonpb.AnyValue{Value: &commonpb.AnyValue_KvlistValue{KvlistValue: &commonpb.KeyValueList{Values: kvs}}}
}
func kv(k string, v *commonpb.AnyValue) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: k, Value: v}
}

var (
	traceID  = trace.TraceID{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36}
	spanID   = trace.SpanID{0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7}
	parentID = trace.SpanID{1, 2, 3, 4, 5, 6, 7, 8}
	linkID   = trace.SpanID{9, 9, 9, 9, 9, 9, 9, 9}
	start    = time.Unix(1_790_000_000, 123_456_789)
)

// everyField is a span with every field an OTLP span has set, every kind
// of attribute value among its attributes, and what it must decode to.
func everyField(t *testing.T) (sdktrace.ReadOnlySpan, *tracepb.ResourceSpans) {
	t.Helper()
	ts, err := trace.ParseTraceState("vendor=abc,other=x-1")
	if err != nil {
		t.Fatal(err)
	}
	res := resource.NewWithAttributes("https://opentelemetry.io/schemas/1.26.0",
		attribute.String("service.name", "listgate-edge"), attribute.Int("process.pid", 4242))
	scope := instrumentation.Scope{Name: "github.com/listgate/listgate", Version: "1.2.3",
		SchemaURL: "https://opentelemetry.io/schemas/1.25.0", Attributes: attribute.NewSet(attribute.Bool("scope.attr", true))}
	linkTS, _ := trace.ParseTraceState("l=1")
	stub := tracetest.SpanStub{
		Name:        "GET /v1/sites/{site}/listings",
		SpanContext: trace.NewSpanContext(trace.SpanContextConfig{TraceID: traceID, SpanID: spanID, TraceFlags: trace.FlagsSampled, TraceState: ts}),
		Parent:      trace.NewSpanContext(trace.SpanContextConfig{TraceID: traceID, SpanID: parentID, TraceFlags: trace.FlagsSampled, Remote: true}),
		SpanKind:    trace.SpanKindServer,
		StartTime:   start,
		EndTime:     start.Add(1500 * time.Microsecond),
		Attributes: []attribute.KeyValue{
			attribute.String("http.request.method", "GET"),
			attribute.String("empty", ""),
			attribute.Int("http.response.status_code", 200),
			attribute.Int64("negative", -7),
			attribute.Bool("flag.false", false),
			attribute.Bool("flag.true", true),
			attribute.Float64("ratio", 0.25),
			attribute.StringSlice("strings", []string{"a", "", "ü"}),
			attribute.Int64Slice("ints", []int64{1, -1, math.MaxInt64}),
			attribute.Float64Slice("floats", []float64{1.5, math.Inf(-1)}),
			attribute.BoolSlice("bools", []bool{true, false}),
			attribute.ByteSlice("bytes", []byte{0, 1, 0xff}),
			attribute.Slice("mixed", attribute.StringValue("x"), attribute.Int64Value(3), attribute.SliceValue(attribute.BoolValue(true))),
			attribute.Map("map", attribute.String("inner", "v"), attribute.Float64("f", 2)),
			{Key: "nothing"},
		},
		Events: []sdktrace.Event{{Name: "exception", Time: start.Add(time.Millisecond),
			Attributes:            []attribute.KeyValue{attribute.String("exception.message", "origin unreachable")},
			DroppedAttributeCount: 2}},
		Links: []sdktrace.Link{{
			SpanContext:           trace.NewSpanContext(trace.SpanContextConfig{TraceID: traceID, SpanID: linkID, TraceState: linkTS, Remote: true}),
			Attributes:            []attribute.KeyValue{attribute.String("link.kind", "follows")},
			DroppedAttributeCount: 1}},
		Status:               sdktrace.Status{Code: codes.Error, Description: "origin unreachable"},
		DroppedAttributes:    3,
		DroppedEvents:        4,
		DroppedLinks:         5,
		Resource:             res,
		InstrumentationScope: scope,
	}
	want := &tracepb.ResourceSpans{
		Resource: &resourcepb.Resource{Attributes: []*commonpb.KeyValue{
			kv("process.pid", iv(4242)), kv("service.name", sv("listgate-edge"))}},
		SchemaUrl: "https://opentelemetry.io/schemas/1.26.0",
		ScopeSpans: []*tracepb.ScopeSpans{{
			Scope: &commonpb.InstrumentationScope{Name: "github.com/listgate/listgate", Version: "1.2.3",
				Attributes: []*commonpb.KeyValue{kv("scope.attr", bv(true))}},
			SchemaUrl: "https://opentelemetry.io/schemas/1.25.0",
			Spans: []*tracepb.Span{{
				TraceId: traceID[:], SpanId: spanID[:], TraceState: "vendor=abc,other=x-1", ParentSpanId: parentID[:],
				Flags: 0x01 | 0x100 | 0x200, Name: "GET /v1/sites/{site}/listings", Kind: tracepb.Span_SPAN_KIND_SERVER,
				StartTimeUnixNano: uint64(start.UnixNano()), EndTimeUnixNano: uint64(start.Add(1500 * time.Microsecond).UnixNano()),
				Attributes: []*commonpb.KeyValue{
					kv("http.request.method", sv("GET")),
					kv("empty", sv("")),
					kv("http.response.status_code", iv(200)),
					kv("negative", iv(-7)),
					kv("flag.false", bv(false)),
					kv("flag.true", bv(true)),
					kv("ratio", dv(0.25)),
					kv("strings", av(sv("a"), sv(""), sv("ü"))),
					kv("ints", av(iv(1), iv(-1), iv(math.MaxInt64))),
					kv("floats", av(dv(1.5), dv(math.Inf(-1)))),
					kv("bools", av(bv(true), bv(false))),
					kv("bytes", &commonpb.AnyValue{Value: &commonpb.AnyValue_BytesValue{BytesValue: []byte{0, 1, 0xff}}}),
					kv("mixed", av(sv("x"), iv(3), av(bv(true)))),
					kv("map", mv(kv("f", dv(2)), kv("inner", sv("v")))),
					kv("nothing", &commonpb.AnyValue{}),
				},
				DroppedAttributesCount: 3,
				Events: []*tracepb.Span_Event{{Name: "exception", TimeUnixNano: uint64(start.Add(time.Millisecond).UnixNano()),
					Attributes:             []*commonpb.KeyValue{kv("exception.message", sv("origin unreachable"))},
					DroppedAttributesCount: 2}},
				DroppedEventsCount: 4,
				Links: []*tracepb.Span_Link{{TraceId: traceID[:], SpanId: linkID[:], TraceState: "l=1",
					Attributes:             []*commonpb.KeyValue{kv("link.kind", sv("follows"))},
					DroppedAttributesCount: 1, Flags: 0x100 | 0x200}},
				DroppedLinksCount: 5,
				Status:            &tracepb.Status{Code: tracepb.Status_STATUS_CODE_ERROR, Message: "origin unreachable"},
			}},
		}},
	}
	return stub.Snapshot(), want
}

// decode decodes a request with the official types, failing the test on
// an error.
func decode(t testing.TB, b []byte) *collectortrace.ExportTraceServiceRequest {
	t.Helper()
	var got collectortrace.ExportTraceServiceRequest
	if err := proto.Unmarshal(b, &got); err != nil {
		t.Fatalf("the official types do not decode the request: %v", err)
	}
	return &got
}

func requireEqual(t testing.TB, got, want proto.Message) {
	t.Helper()
	if !proto.Equal(got, want) {
		t.Fatalf("decoded:\n%s\nwant:\n%s", prototext.Format(got), prototext.Format(want))
	}
}

// A span with every field decodes, with the official OTLP types, to what
// it holds — and is the very bytes the official encoder writes for it.
func TestRoundTripEveryField(t *testing.T) {
	span, want := everyField(t)
	wantReq := &collectortrace.ExportTraceServiceRequest{ResourceSpans: []*tracepb.ResourceSpans{want}}
	b := otlphttp.AppendRequest(nil, []sdktrace.ReadOnlySpan{span})
	requireEqual(t, decode(t, b), wantReq)
	official, err := proto.MarshalOptions{Deterministic: true}.Marshal(wantReq)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, official) {
		t.Errorf("the bytes differ from the official encoder's:\n got %x\nwant %x", b, official)
	}
	// Appending keeps what b held before.
	if b2 := otlphttp.AppendRequest([]byte("prefix"), []sdktrace.ReadOnlySpan{span}); !bytes.Equal(b2[6:], b) || string(b2[:6]) != "prefix" {
		t.Error("AppendRequest does not append")
	}
}

// Spans are grouped by resource, then scope, in the order they appear.
func TestGroupsByResourceAndScope(t *testing.T) {
	resA := resource.NewSchemaless(attribute.String("service.name", "a"))
	resB := resource.NewSchemaless(attribute.String("service.name", "b"))
	s1, s2 := instrumentation.Scope{Name: "one"}, instrumentation.Scope{Name: "two"}
	mk := func(name string, r *resource.Resource, s instrumentation.Scope) sdktrace.ReadOnlySpan {
		return tracetest.SpanStub{Name: name, Resource: r, InstrumentationScope: s,
			SpanContext: trace.NewSpanContext(trace.SpanContextConfig{TraceID: traceID, SpanID: spanID})}.Snapshot()
	}
	got := decode(t, otlphttp.AppendRequest(nil, []sdktrace.ReadOnlySpan{
		mk("a1-1", resA, s1), mk("b1-1", resB, s1), mk("a2-1", resA, s2), mk("a1-2", resA, s1), nil,
		mk("a-none", resA, instrumentation.Scope{})}))
	var layout []string
	for _, rs := range got.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			var names []string
			for _, sp := range ss.Spans {
				names = append(names, sp.Name)
			}
			layout = append(layout, rs.Resource.Attributes[0].Value.GetStringValue()+"/"+ss.GetScope().GetName()+":"+strings.Join(names, ","))
		}
	}
	if w := "a/one:a1-1,a1-2 a/two:a2-1 a/:a-none b/one:b1-1"; strings.Join(layout, " ") != w {
		t.Errorf("layout %q, want %q", strings.Join(layout, " "), w)
	}
	if got.ResourceSpans[0].ScopeSpans[2].Scope != nil {
		t.Error("an empty scope is written")
	}
}

// Edge cases decode to what they hold: nothing set, unicode, invalid
// UTF-8 (a collector refuses a request with it: it is replaced), long
// values and many of them, out-of-range counts and times.
func TestEdgeCases(t *testing.T) {
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: traceID, SpanID: spanID})
	long := strings.Repeat("é", 1<<20) // a 2 MiB value: a length of 3 varint bytes in 4 nested messages
	many := make([]attribute.KeyValue, 5000)
	manyWant := make([]*commonpb.KeyValue, 5000)
	for i := range many {
		many[i] = attribute.Int("k", i)
		manyWant[i] = kv("k", iv(int64(i)))
	}
	bigSlice := make([]int64, 70000)
	bigWant := make([]*commonpb.AnyValue, len(bigSlice))
	for i := range bigSlice {
		bigSlice[i] = int64(i) << 40
		bigWant[i] = iv(int64(i) << 40)
	}
	for _, tc := range []struct {
		name string
		stub tracetest.SpanStub
		want *tracepb.Span
	}{
		{"nothing set", tracetest.SpanStub{}, &tracepb.Span{TraceId: make([]byte, 16), SpanId: make([]byte, 8), Flags: 0x100, Status: &tracepb.Status{}}},
		{"empty attributes", tracetest.SpanStub{SpanContext: sc, Attributes: []attribute.KeyValue{
			attribute.String("", ""), attribute.StringSlice("s", nil), attribute.Int64Slice("i", []int64{}), attribute.Map("m"), attribute.Slice("sl")},
			Events: []sdktrace.Event{{}}, Links: []sdktrace.Link{{}}},
			&tracepb.Span{TraceId: traceID[:], SpanId: spanID[:], Flags: 0x100, Status: &tracepb.Status{},
				Attributes: []*commonpb.KeyValue{kv("", sv("")), kv("s", av()), kv("i", av()), kv("m", mv()), kv("sl", av())},
				Events:     []*tracepb.Span_Event{{}}, Links: []*tracepb.Span_Link{{TraceId: make([]byte, 16), SpanId: make([]byte, 8), Flags: 0x100}}}},
		{"unicode", tracetest.SpanStub{SpanContext: sc, Name: "GET /v1/sites/日本/ünïcode 🏠", Attributes: []attribute.KeyValue{
			attribute.String("clé 🔑", "värde\u0000\u2028"), attribute.StringSlice("list", []string{"𝄞", "中"})},
			Status: sdktrace.Status{Code: codes.Ok, Description: "ok ✓"}},
			&tracepb.Span{TraceId: traceID[:], SpanId: spanID[:], Flags: 0x100, Name: "GET /v1/sites/日本/ünïcode 🏠",
				Attributes: []*commonpb.KeyValue{kv("clé 🔑", sv("värde\u0000\u2028")), kv("list", av(sv("𝄞"), sv("中")))},
				Status:     &tracepb.Status{Code: tracepb.Status_STATUS_CODE_OK, Message: "ok ✓"}}},
		{"invalid UTF-8", tracetest.SpanStub{SpanContext: sc, Name: "GET /\xff\xfe", Attributes: []attribute.KeyValue{
			attribute.String("url.path", "/a\xc3("), attribute.String("k\x80", "v"), attribute.StringSlice("l", []string{"\xed\xa0\x80"})}},
			&tracepb.Span{TraceId: traceID[:], SpanId: spanID[:], Flags: 0x100, Name: "GET /\uFFFD", Status: &tracepb.Status{},
				Attributes: []*commonpb.KeyValue{kv("url.path", sv("/a\uFFFD(")), kv("k\uFFFD", sv("v")), kv("l", av(sv("\uFFFD")))}}},
		{"long value", tracetest.SpanStub{SpanContext: sc, Attributes: []attribute.KeyValue{attribute.String("db.query.text", long)}},
			&tracepb.Span{TraceId: traceID[:], SpanId: spanID[:], Flags: 0x100, Status: &tracepb.Status{},
				Attributes: []*commonpb.KeyValue{kv("db.query.text", sv(long))}}},
		{"many attributes", tracetest.SpanStub{SpanContext: sc, Attributes: many},
			&tracepb.Span{TraceId: traceID[:], SpanId: spanID[:], Flags: 0x100, Status: &tracepb.Status{}, Attributes: manyWant}},
		{"large slice", tracetest.SpanStub{SpanContext: sc, Attributes: []attribute.KeyValue{attribute.Int64Slice("big", bigSlice)}},
			&tracepb.Span{TraceId: traceID[:], SpanId: spanID[:], Flags: 0x100, Status: &tracepb.Status{},
				Attributes: []*commonpb.KeyValue{kv("big", av(bigWant...))}}},
		{"counts and times out of range", tracetest.SpanStub{SpanContext: sc, DroppedAttributes: math.MaxInt, DroppedEvents: -1,
			DroppedLinks: math.MaxUint32, StartTime: time.Unix(-5, 0), EndTime: time.Unix(0, math.MaxInt64), SpanKind: trace.SpanKind(99),
			Attributes: []attribute.KeyValue{attribute.Int64("min", math.MinInt64), attribute.Float64("nan", math.NaN()), attribute.Float64("negzero", math.Copysign(0, -1))}},
			&tracepb.Span{TraceId: traceID[:], SpanId: spanID[:], Flags: 0x100, Status: &tracepb.Status{},
				DroppedAttributesCount: math.MaxUint32, DroppedLinksCount: math.MaxUint32, EndTimeUnixNano: math.MaxInt64,
				Attributes: []*commonpb.KeyValue{kv("min", iv(math.MinInt64)), kv("nan", dv(math.NaN())), kv("negzero", dv(math.Copysign(0, -1)))}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := decode(t, otlphttp.AppendRequest(nil, []sdktrace.ReadOnlySpan{tc.stub.Snapshot()}))
			want := &collectortrace.ExportTraceServiceRequest{ResourceSpans: []*tracepb.ResourceSpans{{
				Resource: &resourcepb.Resource{}, ScopeSpans: []*tracepb.ScopeSpans{{Spans: []*tracepb.Span{tc.want}}}}}}
			requireEqual(t, got, want)
		})
	}
	if b := otlphttp.AppendRequest(nil, nil); len(b) != 0 {
		t.Errorf("no spans encode as %x", b)
	}
}

// Many spans in one request.
func TestManySpans(t *testing.T) {
	span, want := everyField(t)
	spans := make([]sdktrace.ReadOnlySpan, 2000)
	for i := range spans {
		spans[i] = span
	}
	got := decode(t, otlphttp.AppendRequest(nil, spans))
	if n := len(got.ResourceSpans[0].ScopeSpans[0].Spans); n != len(spans) {
		t.Fatalf("%d spans decoded, want %d", n, len(spans))
	}
	for _, s := range got.ResourceSpans[0].ScopeSpans[0].Spans {
		requireEqual(t, s, want.ScopeSpans[0].Spans[0])
	}
}

// A span built of fuzzed values decodes to them.
func FuzzAppendRequest(f *testing.F) {
	f.Add("GET /", "k", "v", int64(1), 0.5, true, []byte{1}, uint8(2), uint16(0))
	f.Add("", "", "", int64(-1), math.Inf(1), false, []byte(nil), uint8(0), uint16(300))
	f.Add("\xff", "\x80k", "é\xc3", int64(math.MinInt64), -0.0, true, []byte{0xff, 0}, uint8(5), uint16(65535))
	f.Fuzz(func(t *testing.T, name, key, val string, i int64, fl float64, bo bool, by []byte, kind uint8, n uint16) {
		strs := make([]string, int(n)%50)
		wantStrs := make([]*commonpb.AnyValue, len(strs))
		for j := range strs {
			strs[j] = val
			wantStrs[j] = sv(strings.ToValidUTF8(val, "\uFFFD"))
		}
		stub := tracetest.SpanStub{Name: name, SpanKind: trace.SpanKind(kind),
			SpanContext: trace.NewSpanContext(trace.SpanContextConfig{TraceID: traceID, SpanID: spanID}),
			Attributes: []attribute.KeyValue{attribute.String(key, val), attribute.Int64(key, i), attribute.Float64(key, fl),
				attribute.Bool(key, bo), attribute.ByteSlice(key, by), attribute.StringSlice(key, strs)},
			DroppedAttributes: int(n)}
		wantKind := tracepb.Span_SpanKind(kind)
		if kind > 5 {
			wantKind = 0
		}
		u := func(s string) string { return strings.ToValidUTF8(s, "\uFFFD") }
		k := u(key)
		want := &collectortrace.ExportTraceServiceRequest{ResourceSpans: []*tracepb.ResourceSpans{{
			Resource: &resourcepb.Resource{}, ScopeSpans: []*tracepb.ScopeSpans{{Spans: []*tracepb.Span{{
				TraceId: traceID[:], SpanId: spanID[:], Flags: 0x100, Name: u(name), Kind: wantKind, Status: &tracepb.Status{},
				DroppedAttributesCount: uint32(n),
				Attributes: []*commonpb.KeyValue{kv(k, sv(u(val))), kv(k, iv(i)), kv(k, dv(fl)), kv(k, bv(bo)),
					kv(k, &commonpb.AnyValue{Value: &commonpb.AnyValue_BytesValue{BytesValue: by}}), kv(k, av(wantStrs...))}}}}}}}}
		requireEqual(t, decode(t, otlphttp.AppendRequest(nil, []sdktrace.ReadOnlySpan{stub.Snapshot()})), want)
	})
}

// A batch of 512 spans like the edge's server spans (the batch
// processor's default batch size) encoded into a reused buffer.
func BenchmarkAppendRequest(b *testing.B) {
	res := resource.NewSchemaless(attribute.String("service.name", "listgate-edge"), attribute.String("host.name", "edge-1"))
	batch := make([]sdktrace.ReadOnlySpan, 512)
	for i := range batch {
		batch[i] = tracetest.SpanStub{Name: "GET /v1/sites/{site}/listings", SpanKind: trace.SpanKindServer,
			SpanContext: trace.NewSpanContext(trace.SpanContextConfig{TraceID: traceID, SpanID: spanID, TraceFlags: trace.FlagsSampled}),
			StartTime:   start, EndTime: start.Add(time.Millisecond), Resource: res,
			InstrumentationScope: instrumentation.Scope{Name: "github.com/listgate/listgate"},
			Attributes: []attribute.KeyValue{attribute.String("http.request.method", "GET"),
				attribute.String("url.path", "/v1/sites/site_123/listings"), attribute.String("http.route", "/v1/sites/{site}/listings"),
				attribute.Int("http.response.status_code", 200), attribute.String("listgate.cache", "HIT"),
				attribute.String("listgate.site_id", "site_123"), attribute.String("listgate.key_id", "key_456"),
				attribute.String("listgate.request_id", "req-0123456789")}}.Snapshot()
	}
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		buf = otlphttp.AppendRequest(buf[:0], batch)
	}
	b.SetBytes(int64(len(buf)))
}
