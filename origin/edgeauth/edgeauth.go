// Package edgeauth authenticates the edge on the origin's internal routes
// (/internal/v1/…): a request is the edge's when it carries the shared
// internal token in X-Listgate-Internal-Token.
//
// The origin API's identify middleware (origin/api) compares the token only
// to decide whether to believe the identity headers, and deletes the token
// header before any handler runs. So the comparison for internal routes is
// made here, in front of the API's handler: Middleware compares the token in
// constant time and marks the request's context; handlers call Require,
// which fails closed (401) when the mark is missing, including when the
// middleware was not installed at all.
package edgeauth

import (
	"context"
	"crypto/subtle"
	"net/http"

	"github.com/listgate/listgate/pkg/apierror"
)

// Header is the request header that carries the internal token. It is the
// same header as origin/api's HeaderInternalToken.
const Header = "X-Listgate-Internal-Token"

type ctxKey struct{}

// Middleware returns middleware that marks requests carrying token in Header
// (constant-time comparison) as coming from the edge. It never rejects a
// request and never changes its headers: public routes pass as they are, and
// the API's own middleware still strips the header. An empty token marks
// nothing.
func Middleware(token string) func(http.Handler) http.Handler {
	want := []byte(token)
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			got := r.Header.Get(Header)
			if len(want) > 0 && got != "" && subtle.ConstantTimeCompare([]byte(got), want) == 1 {
				r = r.WithContext(context.WithValue(r.Context(), ctxKey{}, true))
			}
			next.ServeHTTP(w, r)
		})
	}
}

// Verified reports whether Middleware found a valid internal token on the
// request ctx belongs to.
func Verified(ctx context.Context) bool {
	ok, _ := ctx.Value(ctxKey{}).(bool)
	return ok
}

// Require returns nil for a request from the edge and an UNAUTHORIZED error
// otherwise, for an internal route's handler to return.
func Require(r *http.Request) error {
	if Verified(r.Context()) {
		return nil
	}
	return apierror.Unauthorized("internal token required")
}
