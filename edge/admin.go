package main

import (
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/listgate/listgate/edge/keycache"
	"github.com/listgate/listgate/edge/respcache"
	"github.com/listgate/listgate/pkg/promtext"
)

func init() {
	promtext.Describe("listgate_edge_key_cache_lookups_total",
		"Lookups of API keys in the edge's key cache, by result (hit, miss: the origin was asked).")
	promtext.Describe("listgate_edge_response_cache_lookups_total",
		"Lookups of cacheable reads in the edge's response cache, by result (hit, miss).")
	promtext.Describe("listgate_edge_response_cache_stale_served_total",
		"Stale cached responses served (while one refresh runs, or while the origin is down).")
}

// admin is the operators' listener (LISTGATE_EDGE_ADMIN_ADDR): GET /metrics
// and /debug/pprof/ on net/http, apart from the public port, which answers
// 404 for both.
type admin struct {
	srv *http.Server
	ln  net.Listener
}

// listenAdmin takes the admin address; "off" is none (a nil *admin).
func listenAdmin(addr string) (*admin, error) {
	if addr == "off" {
		return nil, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	return &admin{ln: ln}, nil
}

// Addr is where the admin listener listens; empty when off.
func (a *admin) Addr() string {
	if a == nil {
		return ""
	}
	return a.ln.Addr().String()
}

// serve serves /metrics — every family of the process, the caches'
// counters included — and the Go profiles until Close.
func (a *admin) serve(keys *keycache.Cache, cache *respcache.Cache, log *slog.Logger) {
	if a == nil {
		return
	}
	caches := func(w io.Writer) { writeCacheMetrics(w, keys, cache) }
	mux := http.NewServeMux()
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", promtext.ContentType)
		w.Header().Set("Cache-Control", "no-store")
		promtext.Write(w, caches)
	})
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	a.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	go func() {
		if err := a.srv.Serve(a.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("admin listener stopped", "err", err)
		}
	}()
}

// Close stops the admin listener at once: scrapes and profiles in flight
// are cut.
func (a *admin) Close() {
	if a == nil {
		return
	}
	if a.srv != nil {
		a.srv.Close()
		return
	}
	a.ln.Close()
}

// writeCacheMetrics writes the key and response caches' counters; a
// cache's hit ratio is hits / (hits + misses).
func writeCacheMetrics(w io.Writer, keys *keycache.Cache, cache *respcache.Cache) {
	kh, km := keys.Stats()
	promtext.WriteFamily(w, "listgate_edge_key_cache_lookups_total", "counter",
		promtext.Sample{Labels: `result="hit"`, Value: float64(kh)}, promtext.Sample{Labels: `result="miss"`, Value: float64(km)})
	rh, rm, stale := cache.Stats()
	promtext.WriteFamily(w, "listgate_edge_response_cache_lookups_total", "counter",
		promtext.Sample{Labels: `result="hit"`, Value: float64(rh)}, promtext.Sample{Labels: `result="miss"`, Value: float64(rm)})
	promtext.WriteFamily(w, "listgate_edge_response_cache_stale_served_total", "counter",
		promtext.Sample{Value: float64(stale)})
}
