package gateway

import (
	"bytes"

	"github.com/valyala/fasthttp"

	"github.com/listgate/listgate/pkg/apierror"
)

// credential reads the key from Authorization: Bearer or X-API-Key. Both
// present must name the same key; a missing key and a non-Bearer
// Authorization are 401s. The returned bytes alias the request headers.
func credential(h *fasthttp.RequestHeader) ([]byte, *apierror.Error) {
	return parseCredential(h.Peek("Authorization"), h.Peek("X-API-Key"))
}

// parseCredential is credential over the two header values; split out for
// the fuzz test.
func parseCredential(auth, apiKey []byte) ([]byte, *apierror.Error) {
	var bearer []byte
	if len(auth) > 0 {
		scheme, rest, ok := bytes.Cut(bytes.TrimSpace(auth), []byte(" "))
		if !ok || !bytes.EqualFold(scheme, []byte("Bearer")) {
			return nil, errInvalidKey
		}
		bearer = bytes.TrimSpace(rest)
		if len(bearer) == 0 {
			return nil, errInvalidKey
		}
	}
	apiKey = bytes.TrimSpace(apiKey)
	switch {
	case bearer != nil && len(apiKey) > 0:
		if !bytes.Equal(bearer, apiKey) {
			return nil, errConflictingKey
		}
		return bearer, nil
	case bearer != nil:
		return bearer, nil
	case len(apiKey) > 0:
		return apiKey, nil
	default:
		return nil, errMissingKey
	}
}
