package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	json "github.com/goccy/go-json"

	"github.com/listgate/listgate/origin/store/storetest"
	"github.com/listgate/listgate/pkg/telemetry/otlptest"
)

const (
	clientTraceID     = "4bf92f3577b34da6a3ce929d0e0e4736"
	clientSpanID      = "00f067aa0ba902b7"
	clientTraceParent = "00-" + clientTraceID + "-" + clientSpanID + "-01"
)

// tracedSystem starts an origin and an edge with env added to both.
func tracedSystem(t *testing.T, env ...string) (*system, *proc) {
	t.Helper()
	s := &system{tb: t, dbURL: storetest.URL(t)}
	s.origin = start(t, "origin", bins.Origin, append([]string{"LISTGATE_DATABASE_URL=" + s.dbURL,
		"LISTGATE_INTERNAL_TOKEN=" + token, "LISTGATE_ORIGIN_ADDR=127.0.0.1:0"}, env...), "serve")
	edge := start(t, "edge", bins.Edge, append([]string{"LISTGATE_INTERNAL_TOKEN=" + token,
		"LISTGATE_EDGE_ADDR=127.0.0.1:0", "LISTGATE_EDGE_ADMIN_ADDR=127.0.0.1:0", "LISTGATE_ORIGIN_URL=" + s.origin.url()}, env...))
	awaitReady(t, edge)
	return s, edge
}

// originLines are the origin's JSON log lines that carry requestID.
// The origin writes a request's line once it has answered, so the client
// may see the answer first: it waits (up to 5 s) for at least one line.
func originLines(t *testing.T, s *system, requestID string) []map[string]any {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		var lines []map[string]any
		for l := range strings.SplitSeq(s.origin.Logs(), "\n") {
			var m map[string]any
			if json.Unmarshal([]byte(l), &m) == nil && m["request_id"] == requestID {
				lines = append(lines, m)
			}
		}
		if len(lines) > 0 || time.Now().After(deadline) {
			return lines
		}
	}
}

// A request with a traceparent through the edge to the origin to Postgres
// yields, at a real OTLP/HTTP receiver, spans of both programs in the
// client's trace: the edge's server span child of the client's span, its
// origin span child of that, the origin's server span child of the edge's
// origin span, the queries children of the origin's span; the origin's
// log lines carry the trace id.
func TestTraceAcrossEdgeOriginPostgres(t *testing.T) {
	recv := otlptest.Start(t)
	s, edge := tracedSystem(t, "OTEL_EXPORTER_OTLP_ENDPOINT="+recv.Endpoint, "OTEL_BSP_SCHEDULE_DELAY=50")
	site := s.site("professional")
	k := s.key(site, "listings:read,leads:write")

	hdr := bearer(k.Key)
	hdr["traceparent"] = clientTraceParent
	hdr["X-Request-Id"] = "e2e-traced-1"
	r := do(t, "GET", edge.url()+"/v1/sites/"+site+"/listings", nil, hdr)
	if r.status != 200 || r.header.Get("X-Cache") != "MISS" {
		t.Fatalf("%d %s %s", r.status, r.header.Get("X-Cache"), r.body)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var edgeServer, edgeOrigin, originServer otlptest.Span
	var queries []otlptest.Span
	recv.Wait(t, ctx, func(spans []otlptest.Span) bool {
		queries = queries[:0]
		edgeServer, edgeOrigin, originServer = otlptest.Span{}, otlptest.Span{}, otlptest.Span{}
		for _, sp := range spans {
			if sp.TraceID != clientTraceID {
				continue
			}
			switch {
			case sp.Service == "listgate-edge" && sp.Name == "GET /v1/sites/{site}/listings":
				edgeServer = sp
			case sp.Service == "listgate-edge" && sp.Name == "origin GET":
				edgeOrigin = sp
			case sp.Service == "listgate-origin" && sp.Attrs["db.system.name"] == "postgresql":
				queries = append(queries, sp)
			case sp.Service == "listgate-origin" && strings.HasPrefix(sp.Name, "GET /v1/sites/"):
				originServer = sp
			}
		}
		return edgeServer.SpanID != "" && edgeOrigin.SpanID != "" && originServer.SpanID != "" && len(queries) > 0
	})
	if edgeServer.ParentSpanID != clientSpanID {
		t.Errorf("edge span's parent %s, want the client's %s", edgeServer.ParentSpanID, clientSpanID)
	}
	if edgeOrigin.ParentSpanID != edgeServer.SpanID {
		t.Errorf("edge's origin span's parent %s, want the edge span %s", edgeOrigin.ParentSpanID, edgeServer.SpanID)
	}
	if originServer.ParentSpanID != edgeOrigin.SpanID {
		t.Errorf("origin span's parent %s, want the edge's origin span %s", originServer.ParentSpanID, edgeOrigin.SpanID)
	}
	for _, q := range queries {
		if q.ParentSpanID != originServer.SpanID || (q.Attrs["db.query.text"] == "" && q.Name != "BATCH") {
			t.Errorf("query span %q parent %s, want the origin span %s", q.Name, q.ParentSpanID, originServer.SpanID)
		}
	}
	if edgeServer.Attrs["http.response.status_code"] != "200" || edgeServer.Attrs["listgate.site_id"] != site ||
		originServer.Attrs["http.response.status_code"] != "200" {
		t.Errorf("attributes: edge %v, origin %v", edgeServer.Attrs, originServer.Attrs)
	}

	lines := originLines(t, s, "e2e-traced-1")
	if len(lines) == 0 {
		t.Fatalf("no origin log line with the request id:\n%s", s.origin.Logs())
	}
	for _, l := range lines {
		if l["trace_id"] != clientTraceID || l["span_id"] != originServer.SpanID {
			t.Errorf("origin log line %v, want trace %s span %s", l, clientTraceID, originServer.SpanID)
		}
	}

	// A cache hit is traced at the edge alone.
	hdr["X-Request-Id"] = "e2e-traced-2"
	if r := do(t, "GET", edge.url()+"/v1/sites/"+site+"/listings", nil, hdr); r.header.Get("X-Cache") != "HIT" {
		t.Fatalf("second read %s", r.header.Get("X-Cache"))
	}
	recv.Wait(t, ctx, func(spans []otlptest.Span) bool {
		for _, sp := range spans {
			if sp.Attrs["listgate.request_id"] == "e2e-traced-2" && sp.Attrs["listgate.cache"] == "HIT" && sp.ParentSpanID == clientSpanID {
				return true
			}
		}
		return false
	})
}

// With no OTLP endpoint set, nothing is exported (a receiver on the
// default OTLP/HTTP port hears nothing), while the client's valid
// traceparent still reaches the origin, whose log lines carry its trace id.
func TestTracingOffExportsNothing(t *testing.T) {
	recv, err := otlptest.StartOn(t, "127.0.0.1:4318")
	if err != nil {
		t.Logf("the default OTLP port is taken (%v): the receiver part is left out", err)
	}
	s, edge := tracedSystem(t, "OTEL_SERVICE_NAME=should-not-export", "OTEL_BSP_SCHEDULE_DELAY=50")
	site := s.site("professional")
	k := s.key(site, "listings:read")
	hdr := bearer(k.Key)
	hdr["traceparent"] = clientTraceParent
	hdr["X-Request-Id"] = "e2e-untraced-1"
	if r := do(t, "GET", edge.url()+"/v1/sites/"+site+"/listings", nil, hdr); r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	lines := originLines(t, s, "e2e-untraced-1")
	if len(lines) == 0 {
		t.Fatalf("no origin log line with the request id:\n%s", s.origin.Logs())
	}
	for _, l := range lines {
		if l["trace_id"] != clientTraceID {
			t.Errorf("origin log line %v, want trace %s", l, clientTraceID)
		}
	}
	// Stopping flushes whatever a tracer would have queued.
	edge.stop()
	s.origin.stop()
	if recv != nil && recv.Exports() != 0 {
		t.Errorf("%d exports with tracing off", recv.Exports())
	}
	for _, p := range []*proc{edge, s.origin} {
		if !strings.Contains(p.Logs(), `"tracing":false`) {
			t.Errorf("%s does not say tracing is off:\n%s", p.name, p.Logs())
		}
	}
}

// A request whose path is not UTF-8 is traced, the bytes that are not
// replaced by U+FFFD in its url.path: an OTLP string must be UTF-8, and
// its batch — the other requests' spans with it — is not lost for it.
func TestTraceOfAPathNotUTF8(t *testing.T) {
	recv := otlptest.Start(t)
	_, edge := tracedSystem(t, "OTEL_EXPORTER_OTLP_ENDPOINT="+recv.Endpoint, "OTEL_BSP_SCHEDULE_DELAY=50")
	status, _ := raw(t, edge.addr, "GET /v1/sites/\xff\xfe/listings HTTP/1.1\r\nHost: edge\r\nX-Request-Id: e2e-not-utf8\r\nConnection: close\r\n\r\n")
	t.Logf("answered %d", status)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	spans := recv.Wait(t, ctx, func(spans []otlptest.Span) bool {
		for _, sp := range spans {
			if sp.Attrs["listgate.request_id"] == "e2e-not-utf8" {
				return true
			}
		}
		return false
	})
	for _, sp := range spans {
		if sp.Attrs["listgate.request_id"] == "e2e-not-utf8" && sp.Attrs["url.path"] != "/v1/sites/\uFFFD/listings" {
			t.Errorf("url.path %q", sp.Attrs["url.path"])
		}
	}
}
