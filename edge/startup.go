package main

import (
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/listgate/listgate/edge/upstream"
	"github.com/listgate/listgate/pkg/internalapi"
)

// checkOrigins asks each origin, once and at the same time, whether it
// takes this edge's internal token (a key introspection of a hash no key
// has), so that a start-up with a wrong token fails at once and says so,
// instead of serving 503s. An origin that refuses the token or is not a
// Listgate origin fails the start-up; so does finding none reachable. One
// unreachable while another answers is left ejected until its /readyz
// answers: origins are deployed one at a time, and an edge may start in
// the middle of it.
func checkOrigins(origins *upstream.Origins, timeout time.Duration, log *slog.Logger) error {
	list := origins.List()
	errs := make([]error, len(list))
	reachable := make([]bool, len(list))
	done := make(chan int, len(list))
	for i, or := range list {
		go func() {
			reachable[i], errs[i] = checkOrigin(or, timeout)
			done <- i
		}()
	}
	for range list {
		<-done
	}
	var unreachable []error
	for i, err := range errs {
		switch {
		case err == nil:
		case reachable[i]:
			return err
		default:
			unreachable = append(unreachable, err)
		}
	}
	if len(unreachable) == len(list) {
		return errors.Join(unreachable...)
	}
	for _, err := range unreachable {
		log.Warn("origin unreachable at start-up; it takes requests once its /readyz answers", "err", err)
	}
	return nil
}

func checkOrigin(or *upstream.Origin, timeout time.Duration) (reachable bool, err error) {
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.SetRequestURI(internalapi.PathIntrospect)
	req.Header.SetMethod(fasthttp.MethodPost)
	req.Header.SetContentType("application/json")
	var zero [32]byte
	req.SetBodyString(`{"key_hash":"` + hex.EncodeToString(zero[:]) + `"}`)
	if err := or.Do(req, resp, timeout); err != nil {
		return false, fmt.Errorf("origin %s unreachable: %w", or.URL, err)
	}
	switch st := resp.StatusCode(); {
	case st == fasthttp.StatusUnauthorized || st == fasthttp.StatusForbidden:
		return true, fmt.Errorf("origin %s refused this edge's internal token (%d): LISTGATE_INTERNAL_TOKEN must be the origin's", or.URL, st)
	case st != fasthttp.StatusOK:
		return true, fmt.Errorf("origin %s answered %d to a key introspection: is it a Listgate origin?", or.URL, st)
	}
	return true, nil
}
