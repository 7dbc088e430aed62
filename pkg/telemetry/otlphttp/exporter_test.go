package otlphttp_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/listgate/listgate/pkg/telemetry/otlphttp"
)

// collector is a real HTTP server on loopback that records each request
// and answers with the next of its answers (the last one repeated).
type collector struct {
	srv     *httptest.Server
	mu      sync.Mutex
	reqs    []received
	answers []func(w http.ResponseWriter)
}

type received struct {
	header http.Header
	body   []byte // as sent
	spans  []string
}

func newCollector(t *testing.T, answers ...func(w http.ResponseWriter)) *collector {
	c := &collector{answers: answers}
	c.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		body := raw
		if r.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(bytes.NewReader(raw))
			if err == nil {
				body, err = io.ReadAll(zr)
			}
			if err != nil {
				http.Error(w, err.Error(), 400)
				return
			}
		}
		var req collectortrace.ExportTraceServiceRequest
		if err := proto.Unmarshal(body, &req); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		rec := received{header: r.Header.Clone(), body: body}
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					rec.spans = append(rec.spans, s.Name)
				}
			}
		}
		c.mu.Lock()
		c.reqs = append(c.reqs, rec)
		answer := func(w http.ResponseWriter) {}
		if len(c.answers) > 0 {
			answer = c.answers[min(len(c.reqs), len(c.answers))-1]
		}
		c.mu.Unlock()
		answer(w)
	}))
	t.Cleanup(c.srv.Close)
	return c
}

func (c *collector) received() []received {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]received(nil), c.reqs...)
}

func status(code int, header ...string) func(w http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		w.WriteHeader(code)
	}
}

func spans(names ...string) []sdktrace.ReadOnlySpan {
	out := make([]sdktrace.ReadOnlySpan, len(names))
	for i, n := range names {
		out[i] = tracetest.SpanStub{Name: n,
			SpanContext: trace.NewSpanContext(trace.SpanContextConfig{TraceID: traceID, SpanID: spanID})}.Snapshot()
	}
	return out
}

func newExporter(t *testing.T, cfg otlphttp.Config) *otlphttp.Exporter {
	t.Helper()
	e, err := otlphttp.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// Spans arrive as protobuf with the configured headers, compressed or not.
func TestExportsWithHeaders(t *testing.T) {
	for _, gz := range []bool{false, true} {
		t.Run(fmt.Sprint("gzip=", gz), func(t *testing.T) {
			c := newCollector(t)
			e := newExporter(t, otlphttp.Config{URL: c.srv.URL + "/v1/traces", Gzip: gz,
				Headers: map[string]string{"Authorization": "Bearer t0ken", "X-Scope-OrgID": "tenant-1"}})
			if err := e.ExportSpans(context.Background(), spans("a", "b")); err != nil {
				t.Fatal(err)
			}
			got := c.received()
			if len(got) != 1 || strings.Join(got[0].spans, ",") != "a,b" {
				t.Fatalf("received %+v", got)
			}
			h := got[0].header
			if h.Get("Content-Type") != "application/x-protobuf" || h.Get("Authorization") != "Bearer t0ken" || h.Get("X-Scope-Orgid") != "tenant-1" {
				t.Errorf("headers %v", h)
			}
			if (h.Get("Content-Encoding") == "gzip") != gz {
				t.Errorf("Content-Encoding %q with gzip %v", h.Get("Content-Encoding"), gz)
			}
			if err := e.Shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}
			if err := e.ExportSpans(context.Background(), spans("c")); !errors.Is(err, otlphttp.ErrShutdown) {
				t.Errorf("export after shutdown: %v", err)
			}
		})
	}
}

// 429 and 503 are retried after their Retry-After (seconds or a date);
// a Retry-After longer than the exporter waits is not retried, nor is a
// 400, nor anything past the retries.
func TestRetries(t *testing.T) {
	ok := status(200)
	for _, tc := range []struct {
		name     string
		answers  []func(http.ResponseWriter)
		requests int
		fail     string
	}{
		{"503 then ok", []func(http.ResponseWriter){status(503, "Retry-After", "0"), ok}, 2, ""},
		{"429 then ok", []func(http.ResponseWriter){status(429, "Retry-After", "1"), ok}, 2, ""},
		{"429 with a date", []func(http.ResponseWriter){status(429, "Retry-After", time.Now().Add(-time.Second).UTC().Format(http.TimeFormat)), ok}, 2, ""},
		{"Retry-After too long", []func(http.ResponseWriter){status(503, "Retry-After", "3600"), ok}, 1, "Retry-After 1h0m0s"},
		{"400 not retried", []func(http.ResponseWriter){status(400), ok}, 1, "400 Bad Request"},
		{"always 503", []func(http.ResponseWriter){status(503, "Retry-After", "0")}, 3, "503 Service Unavailable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCollector(t, tc.answers...)
			e := newExporter(t, otlphttp.Config{URL: c.srv.URL + "/v1/traces"})
			err := e.ExportSpans(context.Background(), spans("x"))
			if n := len(c.received()); n != tc.requests {
				t.Errorf("%d requests, want %d", n, tc.requests)
			}
			if tc.fail == "" && err != nil || tc.fail != "" && (err == nil || !strings.Contains(err.Error(), tc.fail)) {
				t.Errorf("err %v, want %q", err, tc.fail)
			}
		})
	}
}

// A batch over the body bound goes in several requests, each within it;
// a span over it alone is dropped, named in the error, and the others
// still go.
func TestBodyBound(t *testing.T) {
	c := newCollector(t)
	e := newExporter(t, otlphttp.Config{URL: c.srv.URL + "/v1/traces", MaxBody: 1000})
	var names []string
	for i := range 100 {
		names = append(names, fmt.Sprintf("span-%03d", i))
	}
	batch := spans(names...)
	huge := tracetest.SpanStub{Name: "huge", Attributes: nil}
	huge.Name = "huge-" + strings.Repeat("x", 2000)
	batch = append(batch[:50], append([]sdktrace.ReadOnlySpan{huge.Snapshot()}, batch[50:]...)...)
	err := e.ExportSpans(context.Background(), batch)
	if err == nil || !strings.Contains(err.Error(), `span "huge-xxx`) || !strings.Contains(err.Error(), "over the 1000-byte request bound") {
		t.Errorf("err %v", err)
	}
	var got []string
	reqs := c.received()
	for _, r := range reqs {
		if len(r.body) > 1000 {
			t.Errorf("a body of %d bytes", len(r.body))
		}
		got = append(got, r.spans...)
	}
	if strings.Join(got, ",") != strings.Join(names, ",") || len(reqs) < 2 {
		t.Errorf("%d requests received %v", len(reqs), got)
	}
}

// An export ends within the exporter's timeout when the collector does
// not answer, and within ctx.
func TestTimeout(t *testing.T) {
	release := make(chan struct{})
	c := newCollector(t, func(w http.ResponseWriter) { <-release })
	defer close(release)
	e := newExporter(t, otlphttp.Config{URL: c.srv.URL + "/v1/traces", Timeout: 100 * time.Millisecond})
	done := make(chan error, 1)
	go func() { done <- e.ExportSpans(context.Background(), spans("x")) }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "deadline exceeded") {
			t.Errorf("err %v", err)
		}
	case <-time.After(time.Minute): // a bound on the test, not a speed asserted
		t.Fatal("the export waits for a collector that does not answer")
	}
	e = newExporter(t, otlphttp.Config{URL: c.srv.URL + "/v1/traces"})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := e.ExportSpans(ctx, spans("x")); err == nil {
		t.Error("no error past ctx")
	}
}

// Errors name the collector without its credentials: no header value, no
// password, no query, whatever goes wrong; a redirect is not followed (it
// would carry the headers elsewhere).
func TestErrorsHoldNoSecrets(t *testing.T) {
	const secret = "s3cr3t-value"
	elsewhere := newCollector(t)
	c := newCollector(t,
		func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(401)
			io.WriteString(w, "bad token")
		},
		func(w http.ResponseWriter) {
			w.Header().Set("Location", elsewhere.srv.URL+"/v1/traces")
			w.WriteHeader(http.StatusTemporaryRedirect)
		})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	hdr := map[string]string{"Authorization": "Bearer " + secret, "Api-Key": secret}
	for _, u := range []string{c.srv.URL, c.srv.URL, "http://127.0.0.1:1", "http://" + closed} {
		u := strings.Replace(u, "http://", "http://user:"+secret+"@", 1) + "/v1/traces?token=" + secret
		e := newExporter(t, otlphttp.Config{URL: u, Headers: hdr, Timeout: 2 * time.Second})
		err := e.ExportSpans(context.Background(), spans("x"))
		if err == nil {
			t.Fatalf("%s: no error", u)
		}
		if strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), "token=") {
			t.Errorf("the error shows a secret: %v", err)
		}
		t.Log(err)
	}
	if got := c.received(); len(got) != 2 || got[0].header.Get("Api-Key") != secret || !strings.Contains(got[0].header.Get("Authorization"), secret) {
		t.Errorf("the collector got %d requests: %v", len(got), got)
	}
	if n := len(elsewhere.received()); n != 0 {
		t.Errorf("the redirect was followed (%d requests)", n)
	}
	// A malformed header variable names the entry, never its text.
	for _, v := range []string{"Authorization: Bearer " + secret, "a=b," + secret, "Key=" + secret + "\x01", "k=" + secret + "%zz"} {
		_, err := otlphttp.FromEnv(env(map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": v}), "http://c/v1/traces")
		if err == nil || strings.Contains(err.Error(), secret) {
			t.Errorf("%q: %v", v, err)
		}
	}
}

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// The standard variables, each _TRACES_ one before its general one.
func TestFromEnv(t *testing.T) {
	cfg, err := otlphttp.FromEnv(env(map[string]string{
		"OTEL_EXPORTER_OTLP_HEADERS":     "Authorization=Basic%20YWxh, x-tenant = a%2Cb ,,",
		"OTEL_EXPORTER_OTLP_TIMEOUT":     "2500",
		"OTEL_EXPORTER_OTLP_COMPRESSION": "gzip",
	}), "http://c:4318/v1/traces")
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(cfg.Headers) != "map[Authorization:Basic YWxh x-tenant:a,b]" || cfg.Timeout != 2500*time.Millisecond || !cfg.Gzip || cfg.TLS != nil {
		t.Errorf("%+v", cfg)
	}
	cfg, err = otlphttp.FromEnv(env(map[string]string{
		"OTEL_EXPORTER_OTLP_HEADERS": "a=1", "OTEL_EXPORTER_OTLP_TRACES_HEADERS": "b=2",
		"OTEL_EXPORTER_OTLP_TIMEOUT": "2500", "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT": "70",
		"OTEL_EXPORTER_OTLP_COMPRESSION": "gzip", "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION": "none",
	}), "http://c:4318/v1/traces")
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(cfg.Headers) != "map[b:2]" || cfg.Timeout != 70*time.Millisecond || cfg.Gzip {
		t.Errorf("the _TRACES_ variables do not win: %+v", cfg)
	}
	dir := t.TempDir()
	ca := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(ca, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, vars := range map[string]map[string]string{
		"timeout not a number": {"OTEL_EXPORTER_OTLP_TIMEOUT": "10s"},
		"timeout zero":         {"OTEL_EXPORTER_OTLP_TRACES_TIMEOUT": "0"},
		"compression":          {"OTEL_EXPORTER_OTLP_COMPRESSION": "zstd"},
		"missing CA":           {"OTEL_EXPORTER_OTLP_CERTIFICATE": filepath.Join(dir, "none.pem")},
		"not a CA":             {"OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE": ca},
		"a cert without a key": {"OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE": ca},
		"bad header name":      {"OTEL_EXPORTER_OTLP_HEADERS": "a b=c"},
	} {
		if _, err := otlphttp.FromEnv(env(vars), "http://c/v1/traces"); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	for _, u := range []string{"c:4318", "ftp://c/v1/traces", "http:///v1/traces", "://x"} {
		if _, err := otlphttp.New(otlphttp.Config{URL: u}); err == nil {
			t.Errorf("%q: no error", u)
		}
	}
}

// A collector's answer: its partial success is read, whatever else it
// holds; bytes that are not a response are an error, never a panic.
func FuzzParsePartialSuccess(f *testing.F) {
	for _, m := range []*collectortrace.ExportTraceServiceResponse{{},
		{PartialSuccess: &collectortrace.ExportTracePartialSuccess{RejectedSpans: 3, ErrorMessage: "too old"}},
		{PartialSuccess: &collectortrace.ExportTracePartialSuccess{RejectedSpans: -1}}} {
		b, _ := proto.Marshal(m)
		f.Add(b)
	}
	f.Add([]byte{0x0a, 0x05, 0x08})
	f.Add([]byte{0x0d, 1, 2, 3, 4, 0x0a, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		rejected, msg, err := otlphttp.ParsePartialSuccess(b)
		var want collectortrace.ExportTraceServiceResponse
		if perr := (proto.UnmarshalOptions{}).Unmarshal(b, &want); perr != nil {
			return // the official types refuse it too (or for UTF-8 alone)
		}
		if err != nil {
			t.Fatalf("%x: %v, the official types read it", b, err)
		}
		if rejected != want.GetPartialSuccess().GetRejectedSpans() || msg != want.GetPartialSuccess().GetErrorMessage() {
			t.Errorf("%x: %d %q, want %d %q", b, rejected, msg, want.GetPartialSuccess().GetRejectedSpans(), want.GetPartialSuccess().GetErrorMessage())
		}
	})
}

// A partial success is an error naming what was rejected.
func TestPartialSuccess(t *testing.T) {
	answer, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{
		PartialSuccess: &collectortrace.ExportTracePartialSuccess{RejectedSpans: 2, ErrorMessage: "too old"}})
	c := newCollector(t, func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.Write(answer)
	})
	e := newExporter(t, otlphttp.Config{URL: c.srv.URL + "/v1/traces"})
	if err := e.ExportSpans(context.Background(), spans("x", "y")); err == nil || !strings.Contains(err.Error(), `rejected 2 spans: "too old"`) {
		t.Errorf("err %v", err)
	}
}
