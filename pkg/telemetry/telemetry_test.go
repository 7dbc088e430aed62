package telemetry_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
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

// The exporter's variables come through Start's environment: the headers
// reach the collector (the _TRACES_ ones before the general ones), the
// traces endpoint is used as it is, gzip is sent when asked for.
func TestExporterVariables(t *testing.T) {
	recv := otlptest.Start(t)
	tr, err := telemetry.Start(context.Background(), "svc", env(map[string]string{
		"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT":    recv.Endpoint + "/v1/traces",
		"OTEL_EXPORTER_OTLP_ENDPOINT":           "http://127.0.0.1:1",
		"OTEL_EXPORTER_OTLP_HEADERS":            "X-General=1",
		"OTEL_EXPORTER_OTLP_TRACES_HEADERS":     "Authorization=Bearer%20abc,X-Tenant=t1",
		"OTEL_EXPORTER_OTLP_TRACES_COMPRESSION": "gzip",
		"OTEL_EXPORTER_OTLP_TIMEOUT":            "3000",
	}), nil)
	if err != nil || tr == nil {
		t.Fatalf("Start: %v", err)
	}
	_, span := tr.Tracer().Start(context.Background(), "with-headers")
	span.End()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := tr.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	recv.Wait(t, ctx, func(s []otlptest.Span) bool { return len(s) > 0 })
	h := recv.Headers()[0]
	if h.Get("Authorization") != "Bearer abc" || h.Get("X-Tenant") != "t1" || h.Get("X-General") != "" || h.Get("Content-Encoding") != "gzip" {
		t.Errorf("headers %v", h)
	}
	// A variable it cannot use stops the start, without repeating a
	// header's value.
	for name, vars := range map[string]map[string]string{
		"headers":     {"OTEL_EXPORTER_OTLP_HEADERS": "Authorization: Bearer s3cr3t"},
		"timeout":     {"OTEL_EXPORTER_OTLP_TIMEOUT": "10s"},
		"compression": {"OTEL_EXPORTER_OTLP_COMPRESSION": "br"},
		"endpoint":    {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "collector:4318"},
	} {
		vars["OTEL_EXPORTER_OTLP_ENDPOINT"] = "http://127.0.0.1:1"
		if _, err := telemetry.Start(context.Background(), "svc", env(vars), nil); err == nil || strings.Contains(err.Error(), "s3cr3t") {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// Ending spans never waits for the collector: while an export is held,
// many more spans than the queue holds end (past it they are dropped).
func TestSpansNeverWaitForTheCollector(t *testing.T) {
	entered, release := make(chan struct{}, 1), make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case entered <- struct{}{}:
		default:
		}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "10")
	tr, err := telemetry.Start(context.Background(), "svc", env(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": srv.URL}), nil)
	if err != nil || tr == nil {
		t.Fatalf("Start: %v", err)
	}
	defer func() {
		close(release)
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		tr.Shutdown(ctx)
	}()
	_, first := tr.Tracer().Start(context.Background(), "first")
	first.End()
	<-entered // the export is in flight, held by the collector
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 20000 {
			_, s := tr.Tracer().Start(context.Background(), "more")
			s.End()
		}
	}()
	select {
	case <-done:
	case <-time.After(time.Minute): // a bound on the test, not a speed asserted
		t.Fatal("ending spans waits for the collector")
	}
}

// lines is a log destination the test can wait on.
type lines chan string

func (l lines) Write(p []byte) (int, error) { l <- string(p); return len(p), nil }

// A failed export is logged with the collector's answer and the spans
// lost, without the headers' values or the endpoint's credentials.
func TestExportFailureLogged(t *testing.T) {
	const secret = "s3cr3t-token"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+secret {
			t.Errorf("Authorization %q", r.Header.Get("Authorization"))
		}
		http.Error(w, "unauthorized", http.StatusUnauthorized)
	}))
	defer srv.Close()
	logs := make(lines, 100)
	tr, err := telemetry.Start(context.Background(), "svc", env(map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT": strings.Replace(srv.URL, "http://", "http://user:"+secret+"@", 1),
		"OTEL_EXPORTER_OTLP_HEADERS":  "Authorization=Bearer%20" + secret,
	}), slog.New(slog.NewTextHandler(logs, nil)))
	if err != nil || tr == nil {
		t.Fatalf("Start: %v", err)
	}
	_, span := tr.Tracer().Start(context.Background(), "lost")
	span.End()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tr.Shutdown(ctx)
	for {
		select {
		case l := <-logs:
			if strings.Contains(l, secret) {
				t.Fatalf("a secret logged: %s", l)
			}
			if strings.Contains(l, "tracing: export failed") {
				if !strings.Contains(l, "401 Unauthorized") || !strings.Contains(l, "1 span lost") {
					t.Errorf("log line %s", l)
				}
				return
			}
		case <-ctx.Done():
			t.Fatal("no export failure logged")
		}
	}
}
