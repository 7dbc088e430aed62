package keycache

import (
	"context"
	"encoding/hex"
	"fmt"
	"time"

	json "github.com/goccy/go-json"
	"github.com/valyala/fasthttp"

	"github.com/listgate/listgate/edge/upstream"
	"github.com/listgate/listgate/pkg/apikey"
)

// introspection is the origin's answer to POST /internal/v1/keys/introspect.
type introspection struct {
	Active bool     `json:"active"`
	KeyID  string   `json:"key_id"`
	SiteID string   `json:"site_id"`
	Scopes []string `json:"scopes"`
	Limit  int      `json:"limit"`
}

// OriginIntrospector returns an Introspector that asks the origins, sending
// the key's hash (never the key). Each call is bounded by timeout (default
// 2 s); an introspection changes nothing, so any failure is tried again on
// the next origin.
func OriginIntrospector(origins *upstream.Origins, timeout time.Duration) Introspector {
	if timeout <= 0 {
		timeout = 2 * time.Second
	}
	return func(ctx context.Context, hash [32]byte) (Info, error) {
		req := fasthttp.AcquireRequest()
		resp := fasthttp.AcquireResponse()
		defer fasthttp.ReleaseRequest(req)
		defer fasthttp.ReleaseResponse(resp)
		req.SetRequestURI("/internal/v1/keys/introspect")
		req.Header.SetMethod("POST")
		req.Header.SetContentType("application/json")
		var body [80]byte
		b := append(body[:0], `{"key_hash":"`...)
		b = hex.AppendEncode(b, hash[:])
		req.SetBody(append(b, `"}`...))
		deadline := time.Now().Add(timeout)
		if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
			deadline = d
		}
		if err := origins.DoSafe(req, resp, deadline); err != nil {
			return Info{}, err
		}
		if resp.StatusCode() != fasthttp.StatusOK {
			return Info{}, fmt.Errorf("introspection: origin answered %d", resp.StatusCode())
		}
		var in introspection
		if err := json.Unmarshal(resp.Body(), &in); err != nil {
			return Info{}, fmt.Errorf("introspection: %w", err)
		}
		if !in.Active {
			return Info{}, nil
		}
		scopes, err := apikey.ParseScopeList(in.Scopes)
		if err != nil || in.SiteID == "" || in.KeyID == "" || in.Limit < 0 {
			return Info{}, fmt.Errorf("introspection: malformed answer")
		}
		return Info{Active: true, KeyID: in.KeyID, SiteID: in.SiteID, Scopes: scopes, Limit: in.Limit}, nil
	}
}
