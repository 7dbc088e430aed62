package keycache

import (
	"context"
	"encoding/hex"
	"fmt"
	"net/url"
	"sync"
	"time"

	json "github.com/goccy/go-json"
	"github.com/valyala/fasthttp"

	"github.com/listgate/listgate/edge/upstream"
	"github.com/listgate/listgate/pkg/apikey"
	"github.com/listgate/listgate/pkg/cors"
	"github.com/listgate/listgate/pkg/internalapi"
)

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
		req.SetRequestURI(internalapi.PathIntrospect)
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
		var in internalapi.Introspection
		if err := json.Unmarshal(resp.Body(), &in); err != nil {
			return Info{}, fmt.Errorf("introspection: %w", err)
		}
		if !in.Active {
			return Info{}, nil
		}
		scopes, err := apikey.ParseScopeList(in.Scopes)
		if err != nil || in.SiteID == "" || in.KeyID == "" || in.Limit == nil || *in.Limit < 0 {
			return Info{}, fmt.Errorf("introspection: malformed answer")
		}
		return Info{Active: true, KeyID: in.KeyID, SiteID: in.SiteID, Scopes: scopes, Limit: *in.Limit,
			CORS: in.CORSOrigins, TTL: time.Duration(in.TTLSeconds) * time.Second, Zone: zone(in.Timezone)}, nil
	}
}

// zones caches loaded time zones by name: a site's zone is loaded once per
// process, not per introspection.
var zones sync.Map // name → *time.Location

// zone loads an IANA time zone; nil for "" or an unknown name (UTC).
func zone(name string) *time.Location {
	if name == "" {
		return nil
	}
	if z, ok := zones.Load(name); ok {
		return z.(*time.Location)
	}
	z, err := time.LoadLocation(name)
	if err != nil || name == "Local" {
		return nil
	}
	zones.Store(name, z)
	return z
}

// OriginCORSFetcher returns a CORSFetcher that asks the origins
// (GET /internal/v1/sites/{site}/cors), each call bounded by timeout
// (default 2 s).
func OriginCORSFetcher(origins *upstream.Origins, timeout time.Duration) CORSFetcher {
	if timeout <= 0 {
		timeout = 2 * time.Second
	}
	return func(ctx context.Context, siteID string) ([]string, bool, error) {
		req := fasthttp.AcquireRequest()
		resp := fasthttp.AcquireResponse()
		defer fasthttp.ReleaseRequest(req)
		defer fasthttp.ReleaseResponse(resp)
		req.SetRequestURI(internalapi.SiteCORSPath(url.PathEscape(siteID)))
		deadline := time.Now().Add(timeout)
		if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
			deadline = d
		}
		if err := origins.DoSafe(req, resp, deadline); err != nil {
			return nil, false, err
		}
		switch resp.StatusCode() {
		case fasthttp.StatusOK:
		case fasthttp.StatusNotFound:
			return nil, false, nil
		default:
			return nil, false, fmt.Errorf("site origins: origin answered %d", resp.StatusCode())
		}
		var sc internalapi.SiteCORS
		if err := json.Unmarshal(resp.Body(), &sc); err != nil || sc.SiteID != siteID || len(sc.Origins) > cors.MaxOrigins {
			return nil, false, fmt.Errorf("site origins: malformed answer")
		}
		return sc.Origins, true, nil
	}
}
