package pairinghttp

import (
	"encoding/json"
	"errors"

	"github.com/listgate/listgate/pairing"
	"github.com/listgate/listgate/pkg/jsonobject"
)

// bodyProblem says what is wrong with a body that is not one JSON object:
// what jsonobject.Split found, without the decoder's detail.
func bodyProblem(err error) string {
	if je, ok := errors.AsType[*jsonobject.Error](err); ok {
		return je.Problem
	}
	return "is not valid JSON"
}

// decodeStart reads a start request body. It returns every problem at
// once, keyed by field (or "body"): unknown, repeated and mistyped fields,
// and what pairing.StartRequest.Validate finds.
func decodeStart(body []byte) (pairing.StartRequest, map[string]string) {
	members, err := jsonobject.Split(body)
	if err != nil {
		return pairing.StartRequest{}, map[string]string{"body": bodyProblem(err)}
	}
	var req pairing.StartRequest
	problems := map[string]string{}
	for _, m := range members {
		var dst *string
		switch m.Name {
		case "home_url":
			dst = &req.HomeURL
		case "site_name":
			dst = &req.SiteName
		case "plugin_version":
			dst = &req.PluginVersion
		default:
			problems[m.Name] = "is not a field of this request"
			continue
		}
		if m.Repeated {
			problems[m.Name] = "is given more than once"
			continue
		}
		s, _, ok := jsonobject.String(m.Raw)
		if !ok {
			problems[m.Name] = "must be a string"
			continue
		}
		*dst = s
	}
	req, verr := req.Validate()
	if verr != nil {
		for f, msg := range verr.Problems {
			if _, ok := problems[f]; !ok {
				problems[f] = msg
			}
		}
	}
	if len(problems) > 0 {
		return pairing.StartRequest{}, problems
	}
	return req, nil
}

// The RFC 6749 §5.2 error codes the token endpoint answers for a request it
// cannot read (the others are pairing.PollError's).
const (
	errInvalidRequest       = "invalid_request"
	errUnsupportedGrantType = "unsupported_grant_type"
)

// DeviceCodeGrant is the grant_type of a poll (RFC 8628 §3.4).
const DeviceCodeGrant = "urn:ietf:params:oauth:grant-type:device_code"

// oauthError is a token endpoint error: {"error", "error_description"}.
type oauthError struct {
	Code        string `json:"error"`
	Description string `json:"error_description"`
}

// decodeToken reads a poll's body and returns its device code, or the
// error to answer. Parameters are checked in this order: the body is one
// JSON object, no parameter is unknown or repeated, grant_type is given
// and is the device code grant, device_code is a string.
func decodeToken(body []byte) (string, *oauthError) {
	members, err := jsonobject.Split(body)
	if err != nil {
		return "", &oauthError{errInvalidRequest, "the body " + bodyProblem(err)}
	}
	var grant, device json.RawMessage
	for _, m := range members {
		switch {
		case m.Repeated:
			return "", &oauthError{errInvalidRequest, "a parameter is given more than once"}
		case m.Name == "grant_type":
			grant = m.Raw
		case m.Name == "device_code":
			device = m.Raw
		default:
			return "", &oauthError{errInvalidRequest, "unknown parameter: only grant_type and device_code are accepted"}
		}
	}
	g, present, ok := jsonobject.String(grant)
	switch {
	case grant == nil || !present:
		return "", &oauthError{errInvalidRequest, "grant_type is required"}
	case !ok:
		return "", &oauthError{errInvalidRequest, "grant_type must be a string"}
	case g != DeviceCodeGrant:
		return "", &oauthError{errUnsupportedGrantType, "grant_type must be " + DeviceCodeGrant}
	}
	d, present, ok := jsonobject.String(device)
	switch {
	case device == nil || !present:
		return "", &oauthError{errInvalidRequest, "device_code is required"}
	case !ok:
		return "", &oauthError{errInvalidRequest, "device_code must be a string"}
	}
	return d, nil
}
