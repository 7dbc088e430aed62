package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/VictoriaMetrics/metrics"

	"github.com/listgate/listgate/pkg/apierror"
	"github.com/listgate/listgate/pkg/promtext"
)

func init() {
	promtext.Describe("listgate_origin_request_timeouts_total",
		"Requests answered 503 because their work ran past request_timeout (or a statement past statement_timeout), by route.")
}

// unboundedKey holds, in a request's context, its *bound.
const unboundedKey ctxKey = -1

// bound is what deadline records of a request: the context it had before,
// and whether its handler is LongLived. Only the request's goroutine uses
// it.
type bound struct {
	parent    context.Context
	longLived bool
}

// deadline gives the request's context the server's RequestTimeout. It is
// the innermost middleware: the context it keeps for LongLived holds every
// value the others added.
func (s *Server) deadline(next http.Handler) http.Handler {
	if s.requestTimeout <= 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b := &bound{parent: r.Context()}
		ctx, cancel := context.WithTimeout(context.WithValue(b.parent, unboundedKey, b), s.requestTimeout)
		defer cancel()
		rc := r.WithContext(ctx)
		next.ServeHTTP(w, rc)
		r.Pattern = rc.Pattern
	})
}

// LongLived lets h run past the request deadline (Config.RequestTimeout):
// h gets the request with the context it had before, which still ends
// when the client leaves. For handlers whose work is long by design and
// bounded otherwise: the event stream (write deadlines, the client's
// life), feed uploads (their own body read timeout), profiles (the
// seconds asked for).
func LongLived(h HandlerFunc) HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		if b, ok := r.Context().Value(unboundedKey).(*bound); ok {
			b.longLived = true
			r = r.WithContext(b.parent)
		}
		return h(w, r)
	}
}

// timeout reports whether err, returned for r, means that the request ran
// out of time: its deadline passed, or the work it waited for ran past a
// bound of its own (Config.TimedOut). An *apierror.Error the handler
// chose is kept as it is, unless it is SERVICE_UNAVAILABLE for such a
// cause (a handler's own mapping of database errors).
func (s *Server) timeout(r *http.Request, err error) bool {
	if e, ok := errors.AsType[*apierror.Error](err); ok {
		if e.Code != apierror.CodeServiceUnavailable || e.Err == nil {
			return false
		}
		err = e.Err
	}
	if b, ok := r.Context().Value(unboundedKey).(*bound); ok && !b.longLived && errors.Is(r.Context().Err(), context.DeadlineExceeded) {
		return true
	}
	return errors.Is(err, context.DeadlineExceeded) || (s.timedOut != nil && s.timedOut(err))
}

// errTimedOut is the client's answer to a request that ran out of time: it
// may be retried.
var errTimedOut = apierror.New(apierror.CodeServiceUnavailable, "the request took too long; retry shortly")

// writeTimeout answers a request that ran out of time 503 with Retry-After
// (1 s, or the handler's own when it chose one) and logs one line with its
// request id and route (never its headers).
func (s *Server) writeTimeout(w http.ResponseWriter, r *http.Request, err error) {
	e := *errTimedOut
	e.RetryAfter = 1
	if ae, ok := errors.AsType[*apierror.Error](err); ok && ae.RetryAfter > 0 {
		e.RetryAfter = ae.RetryAfter
	}
	e.Err = err
	apierror.WriteHTTP(w, RequestID(r.Context()), &e)
	route := r.Pattern
	if route == "" {
		route = "unmatched"
	}
	timeoutCounter(route).Inc()
	s.log.WarnContext(r.Context(), "request timed out", "request_id", RequestID(r.Context()),
		"method", r.Method, "route", route, "timeout", s.requestTimeout.String(), "err", err)
}

// timeoutCounter is listgate_origin_request_timeouts_total of a route.
// Each registered route's is made when it is (Server.handle), so the
// family is exposed, at zero, before anything times out.
func timeoutCounter(route string) *metrics.Counter {
	return metrics.GetOrCreateCounter(fmt.Sprintf(`listgate_origin_request_timeouts_total{route=%q}`, route))
}
