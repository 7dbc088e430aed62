// Package telemetry starts OpenTelemetry tracing from the standard OTEL_*
// environment variables, for the edge and the origin alike: spans are
// exported over OTLP/HTTP (protobuf) when OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set, and tracing is off otherwise.
//
// What the OpenTelemetry SDK reads itself is left to it: OTEL_SERVICE_NAME
// and OTEL_RESOURCE_ATTRIBUTES, OTEL_TRACES_SAMPLER and
// OTEL_TRACES_SAMPLER_ARG (default parentbased_always_on), and the batch
// processor's OTEL_BSP_*. This package decides whether tracing is on and
// refuses what the programs cannot do (a gRPC exporter) at start-up; the
// exporter is its own (otlphttp), configured from the OTEL_EXPORTER_OTLP_*
// headers, timeout, compression and certificates (otlphttp.FromEnv).
package telemetry

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/listgate/listgate/pkg/telemetry/otlphttp"
)

// Getenv looks up an environment variable (os.LookupEnv in production; nil
// is os.LookupEnv).
type Getenv func(name string) (string, bool)

// Tracing is a running tracer provider and its exporter. A nil *Tracing is
// tracing off: Tracer returns nil and Shutdown does nothing.
type Tracing struct {
	tp       *sdktrace.TracerProvider
	tracer   trace.Tracer
	endpoint string
}

// Start starts tracing for the named service ("listgate-edge",
// "listgate-origin"; OTEL_SERVICE_NAME overrides it) when the environment
// asks for it, and returns nil, nil when it does not: no OTLP endpoint set,
// OTEL_SDK_DISABLED=true, or OTEL_TRACES_EXPORTER=none. A protocol or
// exporter this program does not have (gRPC, say) is an error. Spans are
// exported in batches in the background; log receives export failures.
func Start(ctx context.Context, service string, getenv Getenv, log *slog.Logger) (*Tracing, error) {
	if getenv == nil {
		getenv = os.LookupEnv
	}
	get := func(k string) string { v, _ := getenv(k); return strings.TrimSpace(v) }
	if strings.EqualFold(get("OTEL_SDK_DISABLED"), "true") {
		return nil, nil
	}
	switch e := get("OTEL_TRACES_EXPORTER"); e {
	case "", "otlp":
	case "none":
		return nil, nil
	default:
		return nil, fmt.Errorf("OTEL_TRACES_EXPORTER=%s: only otlp (or none) is supported", e)
	}
	// The traces endpoint is used as it is; the general one is a base URL
	// the signal's path is added to.
	endpoint := get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
	if base := get("OTEL_EXPORTER_OTLP_ENDPOINT"); endpoint == "" && base != "" {
		endpoint = strings.TrimRight(base, "/") + "/v1/traces"
	}
	if endpoint == "" {
		return nil, nil
	}
	proto := get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
	if proto == "" {
		proto = get("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	if proto != "" && proto != "http/protobuf" {
		return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL=%s: only http/protobuf is supported", proto)
	}
	if log != nil {
		otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
			log.Warn("tracing: export failed", "err", err)
		}))
	}
	cfg, err := otlphttp.FromEnv(get, endpoint)
	if err != nil {
		return nil, fmt.Errorf("tracing: %w", err)
	}
	exp, err := otlphttp.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("tracing: %w", err)
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", service)),
		resource.WithFromEnv(), // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win
		resource.WithTelemetrySDK(),
		resource.WithHost(),
		resource.WithProcessPID(),
	)
	if err != nil {
		return nil, fmt.Errorf("tracing: resource: %w", err)
	}
	// The sampler comes from OTEL_TRACES_SAMPLER (default: follow the
	// caller's sampled flag, sample every new trace).
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	return &Tracing{tp: tp, tracer: tp.Tracer("github.com/listgate/listgate"), endpoint: endpoint}, nil
}

// Tracer returns the tracer spans are started with; nil when t is nil.
func (t *Tracing) Tracer() trace.Tracer {
	if t == nil {
		return nil
	}
	return t.tracer
}

// Endpoint is the URL spans are posted to; "" when t is nil.
func (t *Tracing) Endpoint() string {
	if t == nil {
		return ""
	}
	return t.endpoint
}

// Shutdown exports the spans still queued, within ctx, and stops. Safe on
// a nil *Tracing.
func (t *Tracing) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	return t.tp.Shutdown(ctx)
}
