package api

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"net/netip"
	"runtime/debug"
	"strings"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/listgate/listgate/pkg/apierror"
	"github.com/listgate/listgate/pkg/apikey"
	"github.com/listgate/listgate/pkg/internalapi"
	"github.com/listgate/listgate/pkg/logctx"
	"github.com/listgate/listgate/pkg/promtext"
)

// Headers the edge sets on forwarded requests. The origin believes them only
// with a valid internal token and strips them otherwise.
const (
	HeaderSite          = internalapi.HeaderSite
	HeaderKeyID         = internalapi.HeaderKeyID
	HeaderScopes        = internalapi.HeaderScopes
	HeaderInternalToken = internalapi.HeaderInternalToken
	HeaderClientIP      = internalapi.HeaderClientIP
	HeaderRequestID     = "X-Request-Id"
)

type ctxKey int

const (
	requestIDKey ctxKey = iota
	identityKey
	clientIPKey
	fromEdgeKey
)

// Identity is who a request comes from, as vouched for by the edge.
type Identity struct {
	SiteID string
	KeyID  string
	Scopes apikey.Scope
}

// RequestID returns the request's id, or "" outside a request.
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey).(string)
	return id
}

// IdentityFrom returns the identity the edge vouched for, if any.
func IdentityFrom(ctx context.Context) (Identity, bool) {
	id, ok := ctx.Value(identityKey).(Identity)
	return id, ok
}

// FromEdge reports whether the request carried the internal token: it came
// from an edge (or another part of Listgate that holds the token).
func FromEdge(ctx context.Context) bool {
	ok, _ := ctx.Value(fromEdgeKey).(bool)
	return ok
}

// RequireEdge is nil for a request from the edge and an UNAUTHORIZED error
// otherwise: the guard of the internal routes (/internal/v1/…).
func RequireEdge(r *http.Request) error {
	if FromEdge(r.Context()) {
		return nil
	}
	return apierror.Unauthorized("internal token required")
}

// ClientIP is the request's client address: the one the edge vouched for
// (X-Listgate-Client-Ip with the internal token), else the connection's
// peer.
func ClientIP(r *http.Request) string {
	if ip, ok := r.Context().Value(clientIPKey).(string); ok {
		return ip
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// recoverPanics turns a panic into a 500 and a log line with the stack.
func (s *Server) recoverPanics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.log.ErrorContext(r.Context(), "panic", "panic", fmt.Sprint(v), "stack", string(debug.Stack()),
					"request_id", RequestID(r.Context()))
				apierror.WriteHTTP(w, RequestID(r.Context()), apierror.Internal(fmt.Errorf("panic: %v", v)))
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// requestID takes the edge's X-Request-Id when it is sane, or makes one, and
// echoes it on the response.
func (s *Server) requestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get(HeaderRequestID)
		if !validRequestID(id) {
			id = newRequestID()
		}
		w.Header().Set(HeaderRequestID, id)
		ctx := logctx.With(context.WithValue(r.Context(), requestIDKey, id), slog.String(logctx.KeyRequestID, id))
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

func validRequestID(id string) bool {
	if len(id) == 0 || len(id) > 64 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

func newRequestID() string {
	var b [12]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// statusWriter records the status and size of a response.
type statusWriter struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += int64(n)
	return n, err
}

// Unwrap lets http.ResponseController reach Flush and deadlines.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// logRequests writes one structured line per request and counts it in the
// metrics by route pattern. Headers are never logged: they carry keys.
func (s *Server) logRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r)
		if sw.status == 0 {
			sw.status = http.StatusOK
		}
		d := time.Since(start)
		pattern := r.Pattern
		if pattern == "" || pattern == "/" {
			pattern = "unmatched"
		}
		metrics.GetOrCreateCounter(fmt.Sprintf(`listgate_origin_http_requests_total{route=%q,method=%q,status="%d"}`,
			pattern, r.Method, sw.status)).Inc()
		metrics.GetOrCreatePrometheusHistogramExt(fmt.Sprintf(`listgate_origin_http_request_duration_seconds{route=%q}`, pattern),
			durationBuckets).Update(d.Seconds())

		level := slog.LevelInfo
		switch {
		case sw.status >= 500:
			level = slog.LevelError
		case pattern == "/healthz" || pattern == "/readyz" || pattern == "/metrics":
			level = slog.LevelDebug
		}
		attrs := []slog.Attr{
			slog.String("request_id", RequestID(r.Context())),
			slog.String("method", r.Method),
			slog.String("path", r.URL.Path),
			slog.Int("status", sw.status),
			slog.Int64("bytes", sw.bytes),
			slog.Float64("duration_ms", float64(d.Microseconds())/1000),
		}
		if id, ok := IdentityFrom(r.Context()); ok {
			attrs = append(attrs, slog.String("site_id", id.SiteID), slog.String("key_id", id.KeyID))
		}
		s.log.LogAttrs(r.Context(), level, "request", attrs...)
	})
}

// identify believes the edge's identity headers only when the internal token
// matches (constant time), and strips them otherwise so no handler can read
// a forged identity.
func (s *Server) identify(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token := r.Header.Get(HeaderInternalToken)
		trusted := s.internalToken != "" && token != "" &&
			subtle.ConstantTimeCompare([]byte(token), []byte(s.internalToken)) == 1
		site, keyID, scopes := r.Header.Get(HeaderSite), r.Header.Get(HeaderKeyID), r.Header.Get(HeaderScopes)
		clientIP := r.Header.Get(HeaderClientIP)
		for _, h := range []string{HeaderInternalToken, HeaderSite, HeaderKeyID, HeaderScopes, HeaderClientIP} {
			r.Header.Del(h)
		}
		if !trusted {
			next.ServeHTTP(w, r)
			return
		}
		ctx := context.WithValue(r.Context(), fromEdgeKey, true)
		if ip, err := netip.ParseAddr(clientIP); err == nil {
			ctx = context.WithValue(ctx, clientIPKey, ip.String())
		}
		if site != "" && keyID != "" {
			if sc, err := apikey.ParseScopes(strings.TrimSpace(scopes)); err == nil {
				ctx = context.WithValue(ctx, identityKey, Identity{SiteID: site, KeyID: keyID, Scopes: sc})
			}
		}
		rc := r.WithContext(ctx)
		next.ServeHTTP(w, rc)
		// The mux records the route on the request it was given;
		// logRequests, outside, reads it from r.
		r.Pattern = rc.Pattern
	})
}

func init() {
	promtext.Describe("listgate_origin_http_requests_total", "HTTP requests answered by the origin, by route (the ServeMux pattern; unmatched for none), method and status.")
	promtext.Describe("listgate_origin_http_request_duration_seconds", "Time the origin took to answer a request, by route.")
}

// durationBuckets are the bounds of the request duration histograms.
var durationBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}

// metrics writes the Prometheus text exposition (every family with HELP
// and TYPE), process metrics included, then Config.Metrics'.
func (s *Server) metrics(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Content-Type", promtext.ContentType)
	w.Header().Set("Cache-Control", "no-store")
	if s.moreMetrics != nil {
		promtext.Write(w, s.moreMetrics)
	} else {
		promtext.Write(w)
	}
	return nil
}

// operatorOnly serves h to operators alone: a request that carries the
// internal token (X-Listgate-Internal-Token, or Authorization: Bearer
// TOKEN as Prometheus sends a scrape's credentials) or that comes from a
// loopback address. Anyone else gets 404, as for a path that does not
// exist. The guard of /metrics and /debug/pprof/.
func (s *Server) operatorOnly(h HandlerFunc) HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		if !s.fromOperator(r) {
			return apierror.NotFound("no such path")
		}
		return h(w, r)
	}
}

func (s *Server) fromOperator(r *http.Request) bool {
	if FromEdge(r.Context()) {
		return true
	}
	if token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && s.internalToken != "" &&
		subtle.ConstantTimeCompare([]byte(strings.TrimSpace(token)), []byte(s.internalToken)) == 1 {
		return true
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

// pprof serves the Go runtime's profiles (net/http/pprof) under
// /debug/pprof/.
func pprofHandler(w http.ResponseWriter, r *http.Request) error {
	switch strings.TrimPrefix(r.URL.Path, "/debug/pprof/") {
	case "cmdline":
		pprof.Cmdline(w, r)
	case "profile":
		pprof.Profile(w, r)
	case "symbol":
		pprof.Symbol(w, r)
	case "trace":
		pprof.Trace(w, r)
	default:
		pprof.Index(w, r)
	}
	return nil
}
