package telemetry_test

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/listgate/listgate/pkg/telemetry"
	"github.com/listgate/listgate/pkg/telemetry/otlptest"
)

func env(m map[string]string) telemetry.Getenv {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestOff(t *testing.T) {
	for name, vars := range map[string]map[string]string{
		"no endpoint":   {"OTEL_SERVICE_NAME": "x"},
		"sdk disabled":  {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_SDK_DISABLED": "true"},
		"exporter none": {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_TRACES_EXPORTER": "none"},
	} {
		t.Run(name, func(t *testing.T) {
			tr, err := telemetry.Start(context.Background(), "svc", env(vars), nil)
			if err != nil || tr != nil {
				t.Fatalf("Start = %v, %v; want off", tr, err)
			}
			if tr.Tracer() != nil || tr.Shutdown(context.Background()) != nil {
				t.Error("a nil Tracing is not off")
			}
		})
	}
}

// A nil Getenv is the process's environment.
func TestNilGetenv(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	if tr, err := telemetry.Start(context.Background(), "svc", nil, nil); tr != nil || err != nil {
		t.Fatalf("Start = %v, %v; want off", tr, err)
	}
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1")
	if _, err := telemetry.Start(context.Background(), "svc", nil, nil); err == nil {
		t.Error("the process's environment was not read")
	}
}

// OTEL_TRACES_SAMPLER reaches the SDK: a ratio of 0 samples no new trace,
// while a sampled caller's trace is followed (parentbased).
func TestSamplerFromEnvironment(t *testing.T) {
	t.Setenv("OTEL_TRACES_SAMPLER", "parentbased_traceidratio")
	t.Setenv("OTEL_TRACES_SAMPLER_ARG", "0")
	tr, err := telemetry.Start(context.Background(), "svc", env(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1"}), nil)
	if err != nil || tr == nil {
		t.Fatalf("Start: %v", err)
	}
	defer func() { // nothing listens there: no waiting for the export
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		tr.Shutdown(ctx)
	}()
	_, root := tr.Tracer().Start(context.Background(), "root")
	if root.SpanContext().IsSampled() {
		t.Error("a new trace sampled at ratio 0")
	}
	parent := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{1},
		TraceFlags: trace.FlagsSampled, Remote: true})
	_, child := tr.Tracer().Start(trace.ContextWithRemoteSpanContext(context.Background(), parent), "child")
	if !child.SpanContext().IsSampled() {
		t.Error("a sampled caller's trace not followed")
	}
}

func TestRefusesWhatItCannotDo(t *testing.T) {
	for name, vars := range map[string]map[string]string{
		"grpc":   {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"},
		"zipkin": {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_TRACES_EXPORTER": "zipkin"},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := telemetry.Start(context.Background(), "svc", env(vars), nil); err == nil {
				t.Error("started")
			}
		})
	}
}

// A span reaches a real OTLP/HTTP receiver with the service's name, which
// OTEL_SERVICE_NAME overrides.
func TestExportsOverOTLP(t *testing.T) {
	recv := otlptest.Start(t)
	for _, tc := range []struct{ env, want string }{{"", "listgate-test"}, {"renamed", "renamed"}} {
		t.Setenv("OTEL_SERVICE_NAME", tc.env)
		tr, err := telemetry.Start(context.Background(), "listgate-test", env(map[string]string{
			"OTEL_EXPORTER_OTLP_ENDPOINT": recv.Endpoint, "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"}), nil)
		if err != nil || tr == nil {
			t.Fatalf("Start: %v", err)
		}
		_, span := tr.Tracer().Start(context.Background(), "work-"+tc.want)
		span.End()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := tr.Shutdown(ctx); err != nil {
			t.Fatal(err)
		}
		spans := recv.Wait(t, ctx, func(s []otlptest.Span) bool {
			for _, sp := range s {
				if sp.Name == "work-"+tc.want {
					return true
				}
			}
			return false
		})
		cancel()
		for _, sp := range spans {
			if sp.Name == "work-"+tc.want && sp.Service != tc.want {
				t.Errorf("service %q, want %q", sp.Service, tc.want)
			}
		}
	}
}
