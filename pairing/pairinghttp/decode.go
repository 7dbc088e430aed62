package pairinghttp

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"unicode/utf8"

	"github.com/listgate/listgate/pairing"
)

// member is one top-level member of a JSON object body.
type member struct {
	name string
	raw  json.RawMessage
	dup  bool
}

// splitObject reads body as one JSON object and returns its members in
// order, marking repeated names; msg says what is wrong with a body that is
// not one JSON object. A leading UTF-8 byte order mark is skipped.
func splitObject(body []byte) (members []member, msg string) {
	body = bytes.TrimPrefix(body, []byte("\xef\xbb\xbf"))
	if !utf8.Valid(body) {
		return nil, "is not valid UTF-8"
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	tok, err := dec.Token()
	if errors.Is(err, io.EOF) {
		return nil, "is empty: send a JSON object"
	}
	if err != nil {
		return nil, "is not valid JSON"
	}
	if tok != json.Delim('{') {
		return nil, "must be a JSON object"
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, "is not valid JSON"
		}
		name, _ := tok.(string) // inside an object, Token returns keys as strings
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, "is not valid JSON"
		}
		members = append(members, member{name: name, raw: raw, dup: seen[name]})
		seen[name] = true
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, "is not valid JSON"
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, "has data after the JSON object"
	}
	return members, ""
}

// jsonString decodes raw as a string: present is false for null, ok false
// for another type.
func jsonString(raw json.RawMessage) (s string, present, ok bool) {
	if string(raw) == "null" {
		return "", false, true
	}
	if len(raw) == 0 || raw[0] != '"' {
		return "", true, false
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", true, false
	}
	return s, true, true
}

// decodeStart reads a start request body. It returns every problem at
// once, keyed by field (or "body"): unknown, repeated and mistyped fields,
// and what pairing.StartRequest.Validate finds.
func decodeStart(body []byte) (pairing.StartRequest, map[string]string) {
	members, msg := splitObject(body)
	if msg != "" {
		return pairing.StartRequest{}, map[string]string{"body": msg}
	}
	var req pairing.StartRequest
	problems := map[string]string{}
	for _, m := range members {
		var dst *string
		switch m.name {
		case "home_url":
			dst = &req.HomeURL
		case "site_name":
			dst = &req.SiteName
		case "plugin_version":
			dst = &req.PluginVersion
		default:
			problems[m.name] = "is not a field of this request"
			continue
		}
		if m.dup {
			problems[m.name] = "is given more than once"
			continue
		}
		s, _, ok := jsonString(m.raw)
		if !ok {
			problems[m.name] = "must be a string"
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
	members, msg := splitObject(body)
	if msg != "" {
		return "", &oauthError{errInvalidRequest, "the body " + msg}
	}
	var grant, device json.RawMessage
	for _, m := range members {
		switch {
		case m.dup:
			return "", &oauthError{errInvalidRequest, "a parameter is given more than once"}
		case m.name == "grant_type":
			grant = m.raw
		case m.name == "device_code":
			device = m.raw
		default:
			return "", &oauthError{errInvalidRequest, "unknown parameter: only grant_type and device_code are accepted"}
		}
	}
	g, present, ok := jsonString(grant)
	switch {
	case grant == nil || !present:
		return "", &oauthError{errInvalidRequest, "grant_type is required"}
	case !ok:
		return "", &oauthError{errInvalidRequest, "grant_type must be a string"}
	case g != DeviceCodeGrant:
		return "", &oauthError{errUnsupportedGrantType, "grant_type must be " + DeviceCodeGrant}
	}
	d, present, ok := jsonString(device)
	switch {
	case device == nil || !present:
		return "", &oauthError{errInvalidRequest, "device_code is required"}
	case !ok:
		return "", &oauthError{errInvalidRequest, "device_code must be a string"}
	}
	return d, nil
}
