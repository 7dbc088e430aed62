// Package otlptest is an OTLP/HTTP trace receiver for tests: it listens on
// loopback, decodes each export with the official OTLP protobuf types
// (go.opentelemetry.io/proto/otlp), answers as a collector does, and keeps
// the spans for the test to wait for and inspect.
package otlptest

import (
	"compress/gzip"
	"context"
	"encoding/hex"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// Span is one received span with its resource's service name.
type Span struct {
	Service      string
	Name         string
	TraceID      string // lowercase hex
	SpanID       string
	ParentSpanID string // "" for a root
	Kind         tracepb.Span_SpanKind
	Attrs        map[string]string // every value as text
	StatusError  bool
}

// Receiver is a running receiver. Safe for concurrent use.
type Receiver struct {
	// Endpoint is the base URL to give OTEL_EXPORTER_OTLP_ENDPOINT.
	Endpoint string

	mu      sync.Mutex
	spans   []Span
	exports int
	headers []http.Header // of each export
	changed chan struct{} // closed and replaced on every export
}

// Start starts a receiver on a loopback port, stopped at the test's end.
func Start(tb testing.TB) *Receiver {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	return serve(tb, ln)
}

func serve(tb testing.TB, ln net.Listener) *Receiver {
	r := &Receiver{Endpoint: "http://" + ln.Addr().String(), changed: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/traces", r.export)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	tb.Cleanup(func() { srv.Close() })
	return r
}

func (r *Receiver) export(w http.ResponseWriter, req *http.Request) {
	if req.Header.Get("Content-Type") != "application/x-protobuf" {
		http.Error(w, "want application/x-protobuf", http.StatusUnsupportedMediaType)
		return
	}
	var body io.Reader = http.MaxBytesReader(w, req.Body, 16<<20)
	if req.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = zr
	}
	b, err := io.ReadAll(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var ex collectortrace.ExportTraceServiceRequest
	if err := proto.Unmarshal(b, &ex); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var got []Span
	for _, rs := range ex.ResourceSpans {
		service := ""
		for _, a := range rs.GetResource().GetAttributes() {
			if a.Key == "service.name" {
				service = a.Value.GetStringValue()
			}
		}
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				sp := Span{Service: service, Name: s.Name, TraceID: hex.EncodeToString(s.TraceId),
					SpanID: hex.EncodeToString(s.SpanId), ParentSpanID: hex.EncodeToString(s.ParentSpanId),
					Kind: s.Kind, Attrs: map[string]string{},
					StatusError: s.GetStatus().GetCode() == tracepb.Status_STATUS_CODE_ERROR}
				for _, a := range s.Attributes {
					sp.Attrs[a.Key] = text(a.Value)
				}
				got = append(got, sp)
			}
		}
	}
	r.mu.Lock()
	r.spans = append(r.spans, got...)
	r.exports++
	r.headers = append(r.headers, req.Header.Clone())
	close(r.changed)
	r.changed = make(chan struct{})
	r.mu.Unlock()
	out, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.Write(out)
}

func text(v *commonpb.AnyValue) string {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return strconv.FormatInt(x.IntValue, 10)
	case *commonpb.AnyValue_BoolValue:
		if x.BoolValue {
			return "true"
		}
		return "false"
	}
	return v.String()
}

// Spans returns the spans received so far.
func (r *Receiver) Spans() []Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Span(nil), r.spans...)
}

// Exports is the number of export requests received.
func (r *Receiver) Exports() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.exports
}

// Headers returns the request headers of each export received so far.
func (r *Receiver) Headers() []http.Header {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]http.Header(nil), r.headers...)
}

// Wait waits until done reports true of the spans received so far, and
// returns them; it fails the test when ctx ends first.
func (r *Receiver) Wait(tb testing.TB, ctx context.Context, done func([]Span) bool) []Span {
	tb.Helper()
	for {
		r.mu.Lock()
		spans, changed := append([]Span(nil), r.spans...), r.changed
		r.mu.Unlock()
		if done(spans) {
			return spans
		}
		select {
		case <-changed:
		case <-ctx.Done():
			tb.Fatalf("spans not received: %v; got %d:\n%v", ctx.Err(), len(spans), spans)
			return nil
		}
	}
}

// StartOn is Start on a given address, such as the default OTLP/HTTP port
// (127.0.0.1:4318); it returns the error when the address is taken.
func StartOn(tb testing.TB, addr string) (*Receiver, error) {
	tb.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	return serve(tb, ln), nil
}
