package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/listgate/listgate/pkg/devproc"
)

func init() {
	scenarios["edge-hit-tracing"] = benchEdgeHitTracing
	plans["edge-hit-tracing"] = func(q bool) time.Duration {
		d, r := 5*time.Second, 2
		if q {
			d, r = 2*time.Second, 1
		}
		return systemSetup + 10*time.Second + time.Duration(3*r)*d
	}
}

// benchEdgeHitTracing is the cost of tracing on the edge's cache-hit path,
// side by side, alternating: the cached listing page of edge-hit without a
// traceparent; with a (sampled) traceparent on every request to an edge
// with tracing off, which must cost nothing; and with the same traceparent
// to a second edge with tracing on, exporting every request's span over
// OTLP/HTTP to a receiver in this process (decoding the official protobuf
// types, counting the spans).
func benchEdgeHitTracing(args []string) error {
	fs := flag.NewFlagSet("edge-hit-tracing", flag.ContinueOnError)
	dur := fs.Duration("duration", def(5*time.Second, 2*time.Second), "duration of each wrk run")
	conns := fs.Int("connections", 64, "wrk connections")
	rounds := fs.Int("rounds", def(2, 1), "alternating rounds")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ctx := context.Background()
	sys, err := startSystem(ctx)
	if err != nil {
		return err
	}
	defer sys.close()
	recv, err := startSpanCounter()
	if err != nil {
		return err
	}
	defer recv.srv.Close()
	// A second edge, stopped by sys.close, exporting its spans.
	traced, err := sys.addEdge("", 1, "OTEL_EXPORTER_OTLP_ENDPOINT="+recv.url, "OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf")
	if err != nil {
		return err
	}

	path := "/v1/sites/" + sys.siteID + "/listings?per_page=4"
	auth := "Authorization: Bearer " + sys.readKey
	const parent = "traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	for _, e := range []*devproc.Process{sys.edge, traced} {
		if _, err := fetch(e.URL()+path, "Bearer "+sys.readKey); err != nil { // fills the cache
			return err
		}
	}
	targets := []struct {
		name, url string
		headers   []string
	}{
		{"edge-hit", sys.edge.URL() + path, []string{auth}},
		{"edge-hit-traceparent-off", sys.edge.URL() + path, []string{auth, parent}},
		{"edge-hit-tracing-on", traced.URL() + path, []string{auth, parent}},
	}
	fmt.Printf("edge-hit-tracing: wrk -t2 -c%d -d%v, %d alternating rounds\n", *conns, *dur, *rounds)
	best := map[string]wrkResult{}
	var onRequests int
	for round := 1; round <= *rounds; round++ {
		for _, t := range targets {
			r, err := runWrk(ctx, t.name, t.url, *dur, *conns, t.headers)
			if err != nil {
				return err
			}
			fmt.Printf("edge-hit-tracing: round %d  %s\n", round, r)
			if r.Non2xx > 0 {
				return fmt.Errorf("%s: %d of %d answers were not 2xx", t.name, r.Non2xx, r.Requests)
			}
			if r.RPS > best[t.name].RPS {
				best[t.name] = r
			}
			if t.name == "edge-hit-tracing-on" {
				onRequests += r.Requests
			}
		}
	}
	// The traced edge's last spans are exported when it stops.
	traced.Stop()
	plain, off, on := best["edge-hit"], best["edge-hit-traceparent-off"], best["edge-hit-tracing-on"]
	spans := recv.spans.Load()
	summarize("edge-hit-tracing", "best of %d wrk rounds (-c%d -d%v): no traceparent %s req/s, traceparent with tracing off %s (ratio %s), tracing on exporting over OTLP %s (ratio %s); %d spans received for %d traced requests (the SDK's batch queue drops what it cannot export in time)",
		*rounds, *conns, *dur, fmtRate(plain.RPS), fmtRate(off.RPS), fmtRatio(off.RPS/plain.RPS), fmtRate(on.RPS), fmtRatio(on.RPS/plain.RPS), spans, onRequests)
	addTable("edge-hit-tracing", wrkTable("The cached listing page of edge-hit, `wrk -t2 -c64`, best of alternating rounds:", []wrkResult{plain, off, on}, 0))
	if spans == 0 {
		return fmt.Errorf("the edge with tracing on exported no span")
	}
	return writeResults("edge-hit-tracing", map[string]any{"connections": *conns, "duration_s": dur.Seconds(), "rounds": *rounds,
		"best": best, "traceparent_off_over_plain": off.RPS / plain.RPS, "tracing_on_over_plain": on.RPS / plain.RPS,
		"spans_received": spans, "traced_requests": onRequests, "exports": recv.exports.Load()})
}

// spanCounter is an OTLP/HTTP trace receiver that counts what it decodes.
type spanCounter struct {
	srv            *http.Server
	url            string
	spans, exports atomic.Int64
}

func startSpanCounter() (*spanCounter, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	c := &spanCounter{url: "http://" + ln.Addr().String()}
	c.srv = &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 32<<20))
		var req collectortrace.ExportTraceServiceRequest
		if err == nil {
			err = proto.Unmarshal(b, &req)
		}
		if err != nil || r.URL.Path != "/v1/traces" {
			http.Error(w, "bad export", http.StatusBadRequest)
			return
		}
		c.exports.Add(1)
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				c.spans.Add(int64(len(ss.Spans)))
			}
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
	})}
	go c.srv.Serve(ln)
	return c, nil
}
