package otlphttp

import (
	"math"
	"strings"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/protobuf/encoding/protowire"
)

// The field numbers of the OTLP messages written here
// (opentelemetry/proto/collector/trace/v1, trace/v1, common/v1,
// resource/v1). Unknown fields are never written; zero scalars are left
// out as the official encoder leaves them out, but a oneof value is always
// written (an empty string or false attribute keeps its type).
const (
	fRequestResourceSpans = 1 // ExportTraceServiceRequest.resource_spans

	fResourceSpansResource   = 1
	fResourceSpansScopeSpans = 2
	fResourceSpansSchemaURL  = 3

	fResourceAttributes = 1
	fResourceDropped    = 2

	fScopeSpansScope     = 1
	fScopeSpansSpans     = 2
	fScopeSpansSchemaURL = 3

	fScopeName       = 1
	fScopeVersion    = 2
	fScopeAttributes = 3

	fSpanTraceID      = 1
	fSpanSpanID       = 2
	fSpanTraceState   = 3
	fSpanParentSpanID = 4
	fSpanName         = 5
	fSpanKind         = 6
	fSpanStart        = 7
	fSpanEnd          = 8
	fSpanAttributes   = 9
	fSpanDroppedAttrs = 10
	fSpanEvents       = 11
	fSpanDroppedEvts  = 12
	fSpanLinks        = 13
	fSpanDroppedLinks = 14
	fSpanStatus       = 15
	fSpanFlags        = 16

	fStatusMessage = 2
	fStatusCode    = 3

	fEventTime       = 1
	fEventName       = 2
	fEventAttributes = 3
	fEventDropped    = 4

	fLinkTraceID    = 1
	fLinkSpanID     = 2
	fLinkTraceState = 3
	fLinkAttributes = 4
	fLinkDropped    = 5
	fLinkFlags      = 6

	fKeyValueKey   = 1
	fKeyValueValue = 2

	fAnyString = 1
	fAnyBool   = 2
	fAnyInt    = 3
	fAnyDouble = 4
	fAnyArray  = 5
	fAnyKvlist = 6
	fAnyBytes  = 7

	fListValues = 1 // ArrayValue.values, KeyValueList.values
)

// OTLP's enum values and span flags.
const (
	statusOK    = 1
	statusError = 2

	flagHasIsRemote = 0x100 // SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE_MASK
	flagIsRemote    = 0x200 // SPAN_FLAGS_CONTEXT_IS_REMOTE_MASK
)

// maxDepth bounds the nesting of slice and map attribute values written
// (the SDK's attribute values are built by the program, but a cycle-free
// value can still nest deeply); deeper values are written empty.
const maxDepth = 32

// AppendRequest appends spans encoded as an OTLP ExportTraceServiceRequest
// (protobuf) to b: spans grouped by resource, then by instrumentation
// scope, in the order they first appear.
func AppendRequest(b []byte, spans []sdktrace.ReadOnlySpan) []byte {
	type scopeGroup struct {
		scope instrumentation.Scope
		spans []sdktrace.ReadOnlySpan
	}
	type resGroup struct {
		res    *resource.Resource
		scopes []*scopeGroup
	}
	var groups []*resGroup
	byRes := map[attribute.Distinct]*resGroup{}
	for _, s := range spans {
		if s == nil {
			continue
		}
		res := s.Resource()
		key := res.Equivalent()
		g, ok := byRes[key]
		if !ok {
			g = &resGroup{res: res}
			byRes[key] = g
			groups = append(groups, g)
		}
		scope := s.InstrumentationScope()
		var sg *scopeGroup
		for _, x := range g.scopes {
			if x.scope == scope {
				sg = x
				break
			}
		}
		if sg == nil {
			sg = &scopeGroup{scope: scope}
			g.scopes = append(g.scopes, sg)
		}
		sg.spans = append(sg.spans, s)
	}
	for _, g := range groups {
		var rs int
		b, rs = openMessage(b, fRequestResourceSpans)
		var r int
		b, r = openMessage(b, fResourceSpansResource)
		for it := g.res.Iter(); it.Next(); {
			b = appendKeyValue(b, fResourceAttributes, it.Attribute(), 0)
		}
		b = closeMessage(b, r)
		for _, sg := range g.scopes {
			var ss int
			b, ss = openMessage(b, fResourceSpansScopeSpans)
			if sg.scope != (instrumentation.Scope{}) {
				var sc int
				b, sc = openMessage(b, fScopeSpansScope)
				b = appendString(b, fScopeName, sg.scope.Name)
				b = appendString(b, fScopeVersion, sg.scope.Version)
				for it := sg.scope.Attributes.Iter(); it.Next(); {
					b = appendKeyValue(b, fScopeAttributes, it.Attribute(), 0)
				}
				b = closeMessage(b, sc)
			}
			for _, s := range sg.spans {
				b = appendSpan(b, s)
			}
			b = appendString(b, fScopeSpansSchemaURL, sg.scope.SchemaURL)
			b = closeMessage(b, ss)
		}
		b = appendString(b, fResourceSpansSchemaURL, g.res.SchemaURL())
		b = closeMessage(b, rs)
	}
	return b
}

func appendSpan(b []byte, s sdktrace.ReadOnlySpan) []byte {
	var m int
	b, m = openMessage(b, fScopeSpansSpans)
	sc := s.SpanContext()
	tid, sid := sc.TraceID(), sc.SpanID()
	b = appendBytes(b, fSpanTraceID, tid[:])
	b = appendBytes(b, fSpanSpanID, sid[:])
	b = appendString(b, fSpanTraceState, sc.TraceState().String())
	parent := s.Parent()
	if psid := parent.SpanID(); psid.IsValid() {
		b = appendBytes(b, fSpanParentSpanID, psid[:])
	}
	b = appendString(b, fSpanName, s.Name())
	b = appendVarint(b, fSpanKind, uint64(spanKind(s.SpanKind())))
	b = appendFixed64(b, fSpanStart, unixNano(s.StartTime().UnixNano()))
	b = appendFixed64(b, fSpanEnd, unixNano(s.EndTime().UnixNano()))
	for _, kv := range s.Attributes() {
		b = appendKeyValue(b, fSpanAttributes, kv, 0)
	}
	b = appendVarint(b, fSpanDroppedAttrs, count(s.DroppedAttributes()))
	for _, e := range s.Events() {
		var em int
		b, em = openMessage(b, fSpanEvents)
		b = appendFixed64(b, fEventTime, unixNano(e.Time.UnixNano()))
		b = appendString(b, fEventName, e.Name)
		for _, kv := range e.Attributes {
			b = appendKeyValue(b, fEventAttributes, kv, 0)
		}
		b = appendVarint(b, fEventDropped, count(e.DroppedAttributeCount))
		b = closeMessage(b, em)
	}
	b = appendVarint(b, fSpanDroppedEvts, count(s.DroppedEvents()))
	for _, l := range s.Links() {
		var lm int
		b, lm = openMessage(b, fSpanLinks)
		ltid, lsid := l.SpanContext.TraceID(), l.SpanContext.SpanID()
		b = appendBytes(b, fLinkTraceID, ltid[:])
		b = appendBytes(b, fLinkSpanID, lsid[:])
		b = appendString(b, fLinkTraceState, l.SpanContext.TraceState().String())
		for _, kv := range l.Attributes {
			b = appendKeyValue(b, fLinkAttributes, kv, 0)
		}
		b = appendVarint(b, fLinkDropped, count(l.DroppedAttributeCount))
		b = appendFixed32(b, fLinkFlags, spanFlags(l.SpanContext.TraceFlags(), l.SpanContext))
		b = closeMessage(b, lm)
	}
	b = appendVarint(b, fSpanDroppedLinks, count(s.DroppedLinks()))
	// The status is always written, as the official exporter writes it.
	st := s.Status()
	var stm int
	b, stm = openMessage(b, fSpanStatus)
	b = appendString(b, fStatusMessage, st.Description)
	switch st.Code {
	case codes.Ok:
		b = appendVarint(b, fStatusCode, statusOK)
	case codes.Error:
		b = appendVarint(b, fStatusCode, statusError)
	}
	b = closeMessage(b, stm)
	b = appendFixed32(b, fSpanFlags, spanFlags(sc.TraceFlags(), parent))
	return closeMessage(b, m)
}

// spanFlags are the W3C trace flags in the low byte, and whether the
// parent (or a link's context) is remote.
func spanFlags(tf trace.TraceFlags, parent trace.SpanContext) uint32 {
	f := uint32(tf) | flagHasIsRemote
	if parent.IsRemote() {
		f |= flagIsRemote
	}
	return f
}

// spanKind is OTLP's SpanKind: the same numbers as the API's, 0 for an
// unknown one.
func spanKind(k trace.SpanKind) int {
	switch k {
	case trace.SpanKindInternal, trace.SpanKindServer, trace.SpanKindClient, trace.SpanKindProducer, trace.SpanKindConsumer:
		return int(k)
	}
	return 0
}

func unixNano(n int64) uint64 { return uint64(max(0, n)) }

func count(n int) uint64 { return uint64(min(max(0, int64(n)), math.MaxUint32)) }

// appendKeyValue appends a KeyValue message as field num.
func appendKeyValue(b []byte, num protowire.Number, kv attribute.KeyValue, depth int) []byte {
	var m int
	b, m = openMessage(b, num)
	b = appendString(b, fKeyValueKey, string(kv.Key))
	b = appendAnyValue(b, fKeyValueValue, kv.Value, depth)
	return closeMessage(b, m)
}

// appendArray appends the ArrayValue of a typed slice attribute, each
// element as the AnyValue value gives.
func appendArray[T any](b []byte, xs []T, value func(T) attribute.Value, depth int) []byte {
	b, a := openMessage(b, fAnyArray)
	for _, x := range xs {
		b = appendAnyValue(b, fListValues, value(x), depth+1)
	}
	return closeMessage(b, a)
}

// appendAnyValue appends an AnyValue message as field num. An EMPTY value
// is an AnyValue with no value set; a type this encoder does not know is
// the string "INVALID", as the official exporter writes it.
func appendAnyValue(b []byte, num protowire.Number, v attribute.Value, depth int) []byte {
	var m int
	b, m = openMessage(b, num)
	switch v.Type() {
	case attribute.EMPTY:
	case attribute.BOOL:
		b = protowire.AppendTag(b, fAnyBool, protowire.VarintType)
		b = protowire.AppendVarint(b, protowire.EncodeBool(v.AsBool()))
	case attribute.INT64:
		b = protowire.AppendTag(b, fAnyInt, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(v.AsInt64()))
	case attribute.FLOAT64:
		b = protowire.AppendTag(b, fAnyDouble, protowire.Fixed64Type)
		b = protowire.AppendFixed64(b, math.Float64bits(v.AsFloat64()))
	case attribute.STRING:
		b = protowire.AppendTag(b, fAnyString, protowire.BytesType)
		b = protowire.AppendString(b, validUTF8(v.AsString()))
	case attribute.BYTESLICE:
		b = protowire.AppendTag(b, fAnyBytes, protowire.BytesType)
		b = protowire.AppendBytes(b, v.AsByteSlice())
	case attribute.BOOLSLICE:
		b = appendArray(b, v.AsBoolSlice(), attribute.BoolValue, depth)
	case attribute.INT64SLICE:
		b = appendArray(b, v.AsInt64Slice(), attribute.Int64Value, depth)
	case attribute.FLOAT64SLICE:
		b = appendArray(b, v.AsFloat64Slice(), attribute.Float64Value, depth)
	case attribute.STRINGSLICE:
		b = appendArray(b, v.AsStringSlice(), attribute.StringValue, depth)
	case attribute.SLICE:
		var a int
		b, a = openMessage(b, fAnyArray)
		if depth < maxDepth {
			for _, x := range v.AsSlice() {
				b = appendAnyValue(b, fListValues, x, depth+1)
			}
		}
		b = closeMessage(b, a)
	case attribute.MAP:
		var a int
		b, a = openMessage(b, fAnyKvlist)
		if depth < maxDepth {
			for _, kv := range v.AsMap() {
				b = appendKeyValue(b, fListValues, kv, depth+1)
			}
		}
		b = closeMessage(b, a)
	default:
		b = protowire.AppendTag(b, fAnyString, protowire.BytesType)
		b = protowire.AppendString(b, "INVALID")
	}
	return closeMessage(b, m)
}

// openMessage appends the tag of a length-delimited field num and one byte
// for its length, and returns where the message's content starts, for
// closeMessage.
func openMessage(b []byte, num protowire.Number) ([]byte, int) {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	b = append(b, 0)
	return b, len(b)
}

// closeMessage writes the length of the message opened at start, moving
// its content when the length takes more than the one byte reserved.
func closeMessage(b []byte, start int) []byte {
	n := len(b) - start
	size := protowire.SizeVarint(uint64(n))
	if size > 1 {
		b = append(b, make([]byte, size-1)...)
		copy(b[start+size-1:], b[start:start+n])
	}
	protowire.AppendVarint(b[:start-1], uint64(n))
	return b
}

// validUTF8 is s with each invalid UTF-8 sequence replaced by U+FFFD: a
// protobuf string must be UTF-8, and a collector refuses the whole request
// for one that is not (a request path's raw bytes, say).
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// The scalar fields below are left out when zero (proto3).

func appendString(b []byte, num protowire.Number, s string) []byte {
	if s == "" {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, validUTF8(s))
}

func appendBytes(b []byte, num protowire.Number, v []byte) []byte {
	if len(v) == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

func appendVarint(b []byte, num protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

func appendFixed64(b []byte, num protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.Fixed64Type)
	return protowire.AppendFixed64(b, v)
}

func appendFixed32(b []byte, num protowire.Number, v uint32) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.Fixed32Type)
	return protowire.AppendFixed32(b, v)
}
