package main

import (
	"encoding/hex"
	"fmt"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/listgate/listgate/pkg/config"
)

// checkOrigin asks the origin, once, whether it takes this edge's internal
// token (a key introspection of a hash no key has), so that a start-up
// with a wrong token or an unreachable origin fails at once and says which,
// instead of serving 503s.
func checkOrigin(cfg config.Edge, timeout time.Duration) error {
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.SetRequestURI(cfg.OriginURL + "/internal/v1/keys/introspect")
	req.Header.SetMethod(fasthttp.MethodPost)
	req.Header.SetContentType("application/json")
	req.Header.Set("X-Listgate-Internal-Token", cfg.InternalToken)
	var zero [32]byte
	req.SetBodyString(`{"key_hash":"` + hex.EncodeToString(zero[:]) + `"}`)
	c := &fasthttp.Client{NoDefaultUserAgentHeader: true}
	if err := c.DoTimeout(req, resp, timeout); err != nil {
		return fmt.Errorf("origin %s unreachable: %w", cfg.OriginURL, err)
	}
	switch st := resp.StatusCode(); {
	case st == fasthttp.StatusUnauthorized || st == fasthttp.StatusForbidden:
		return fmt.Errorf("origin %s refused this edge's internal token (%d): LISTGATE_INTERNAL_TOKEN must be the origin's", cfg.OriginURL, st)
	case st != fasthttp.StatusOK:
		return fmt.Errorf("origin %s answered %d to a key introspection: is it a Listgate origin?", cfg.OriginURL, st)
	}
	return nil
}
