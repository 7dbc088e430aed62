// Package api is the origin's HTTP API on the standard library: the
// middleware chain of DESIGN.md §5, the route table, and the service
// endpoints (/healthz, /readyz, /metrics). Handlers return errors; one
// function turns them into responses.
package api

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"sort"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/listgate/listgate/pkg/apierror"
)

// Server serves the origin's HTTP API. Build it with New; its fields are
// read-only afterwards. Safe for concurrent use.
type Server struct {
	ready          func(context.Context) error
	unavailable    func(error) bool
	timedOut       func(error) bool
	requestTimeout time.Duration
	moreMetrics    func(io.Writer)
	log            *slog.Logger
	internalToken  string
	tracer         trace.Tracer
	routes         map[string]*route
	mux            *http.ServeMux
	handler        http.Handler
}

// Config holds what New needs. The server knows nothing of the database:
// whoever builds it says what readiness is and which errors mean that the
// service is unavailable (for the origin, store.DB's Ping and
// store.IsUnavailable).
type Config struct {
	// Ready reports whether the service can answer requests: GET /readyz
	// is 200 when it returns nil within two seconds, 503 otherwise. Nil:
	// always ready.
	Ready func(context.Context) error
	// Unavailable reports whether an error a handler returned means that
	// something the service needs could not be reached: such an error
	// (one that is not an *apierror.Error) is answered 503
	// SERVICE_UNAVAILABLE with Retry-After: 2 instead of 500. It must be
	// safe for concurrent use. Nil: no error is.
	Unavailable func(error) bool
	// RequestTimeout bounds each request's work: its context ends that
	// long after it reaches the handler, and an error of a request whose
	// deadline passed (or that TimedOut reports) is answered 503
	// SERVICE_UNAVAILABLE, "the request took too long", with Retry-After:
	// 1, and logged as one warning line with the request id and route.
	// Handlers that run longer by design opt out with LongLived. Zero: no
	// deadline.
	RequestTimeout time.Duration
	// TimedOut reports whether an error means that the work ran out of
	// time elsewhere (the database ended a statement at its
	// statement_timeout, say) before the request's deadline. Nil: only the
	// deadline counts.
	TimedOut func(error) bool
	// Metrics writes more Prometheus text lines after the process's on
	// GET /metrics (the database pool's gauges, say). Nil: none.
	Metrics func(io.Writer)
	// Log receives one line per request and every internal error. Nil:
	// slog.Default().
	Log *slog.Logger
	// InternalToken authenticates the edge's identity headers.
	InternalToken string
	// Mounts add the routes of other origin packages (upload API, read
	// API, …) to the route table.
	Mounts []Mounter
	// Tracer, when set, serves each request in a server span, child of
	// the caller's traceparent (trace.go). Nil: tracing off; a valid
	// traceparent's trace id still reaches the request's log lines.
	Tracer trace.Tracer
}

// Mounter is a package whose routes the server serves. Mount calls handle
// once per route with a pattern "METHOD /path/{param}" (net/http ServeMux
// syntax); a pattern must not be registered twice.
type Mounter interface {
	Mount(handle func(pattern string, h HandlerFunc))
}

// New builds the server and its route table.
func New(cfg Config) *Server {
	s := &Server{ready: cfg.Ready, unavailable: cfg.Unavailable, timedOut: cfg.TimedOut,
		requestTimeout: cfg.RequestTimeout, moreMetrics: cfg.Metrics, log: cfg.Log,
		internalToken: cfg.InternalToken, tracer: cfg.Tracer, routes: map[string]*route{}, mux: http.NewServeMux()}
	if s.log == nil {
		s.log = slog.Default()
	}
	s.mux.Handle("/", s.wrap(func(w http.ResponseWriter, r *http.Request) error {
		return apierror.NotFound("no such path")
	}))

	s.handle("GET /healthz", s.healthz)
	s.handle("GET /readyz", s.readyz)
	s.handle("GET /metrics", s.operatorOnly(s.metrics))
	// Profiles, for operators only as /metrics; not a route of the API
	// (no Allow, not in the OpenAPI document). A CPU profile or trace
	// lasts the seconds asked for, past the request deadline.
	s.mux.Handle("/debug/pprof/", s.wrap(LongLived(s.operatorOnly(pprofHandler))))
	for _, m := range cfg.Mounts {
		m.Mount(s.handle)
	}

	// The chain, outermost first; its order is the request path.
	s.handler = chain(s.mux,
		s.recoverPanics,
		s.requestID,
		s.traceRequests,
		s.logRequests,
		s.identify,
		s.deadline,
	)
	return s
}

// Handler returns the server's root handler.
func (s *Server) Handler() http.Handler { return s.handler }

// HandlerFunc is an HTTP handler that returns an error instead of writing
// one: the server turns the error into the API's envelope (an
// *apierror.Error as it says, anything else as INTERNAL_ERROR, logged).
type HandlerFunc = func(w http.ResponseWriter, r *http.Request) error

// route dispatches one path pattern by method, answering 405 with Allow for
// the others. GET handlers serve HEAD too.
type route struct {
	methods map[string]HandlerFunc
	allow   string
}

// handle registers h for "METHOD /pattern".
func (s *Server) handle(pattern string, h HandlerFunc) {
	method, path, ok := strings.Cut(pattern, " ")
	if !ok {
		panic("api: pattern without method: " + pattern)
	}
	rt := s.routes[path]
	if rt == nil {
		rt = &route{methods: map[string]HandlerFunc{}}
		s.routes[path] = rt
		s.mux.Handle(path, s.wrap(rt.serve))
		timeoutCounter(path)
	}
	if _, dup := rt.methods[method]; dup {
		panic("api: duplicate route " + pattern)
	}
	rt.methods[method] = h
	var allow []string
	for m := range rt.methods {
		allow = append(allow, m)
		if m == http.MethodGet {
			allow = append(allow, http.MethodHead)
		}
	}
	sort.Strings(allow)
	rt.allow = strings.Join(allow, ", ")
}

func (rt *route) serve(w http.ResponseWriter, r *http.Request) error {
	h, ok := rt.methods[r.Method]
	if !ok && r.Method == http.MethodHead {
		h, ok = rt.methods[http.MethodGet]
	}
	if !ok {
		return apierror.MethodNotAllowed(rt.allow)
	}
	return h(w, r)
}

// wrap turns a HandlerFunc into an http.Handler: the one place errors become
// responses.
func (s *Server) wrap(h HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			s.writeError(w, r, err)
		}
	})
}

// writeError writes err's envelope and logs it when it is the server's fault.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	if sw, ok := w.(*statusWriter); ok && sw.status != 0 {
		// The response has begun (the client went away mid-body, say): it
		// cannot become an error any more.
		if r.Context().Err() == nil {
			s.log.WarnContext(r.Context(), "error after the response began", "err", err,
				"request_id", RequestID(r.Context()))
		}
		return
	}
	if s.timeout(r, err) {
		s.writeTimeout(w, r, err)
		return
	}
	if _, ok := errors.AsType[*apierror.Error](err); !ok && s.unavailable != nil && s.unavailable(err) {
		// The database (say) could not be reached: the client may retry.
		err = apierror.Unavailable(2, err)
	}
	e := apierror.WriteHTTP(w, RequestID(r.Context()), err)
	switch e.Code {
	case apierror.CodeInternalError:
		s.log.ErrorContext(r.Context(), "internal error", "err", e.Err, "request_id", RequestID(r.Context()),
			"method", r.Method, "path", r.URL.Path)
	case apierror.CodeServiceUnavailable:
		s.log.WarnContext(r.Context(), "service unavailable", "err", e.Err, "request_id", RequestID(r.Context()))
	}
}

// chain applies middleware so that the first is outermost.
func chain(h http.Handler, mw ...func(http.Handler) http.Handler) http.Handler {
	for i := len(mw) - 1; i >= 0; i-- {
		h = mw[i](h)
	}
	return h
}

// healthz answers while the process runs.
func (s *Server) healthz(w http.ResponseWriter, r *http.Request) error {
	return WriteJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// readyz answers 200 when Config.Ready says ready within two seconds, 503
// otherwise.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) error {
	if s.ready != nil {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		if err := s.ready(ctx); err != nil {
			return apierror.Unavailable(1, err)
		}
	}
	return WriteJSON(w, http.StatusOK, map[string]string{"status": "ready"})
}
