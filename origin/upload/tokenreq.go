package upload

import (
	"encoding/base64"
	"net/url"
	"strings"
)

// OAuth 2.0 error codes of a token response (RFC 6749 §5.2).
const (
	errInvalidRequest       = "invalid_request"
	errInvalidClient        = "invalid_client"
	errUnauthorizedClient   = "unauthorized_client" // not issued: every client may use client_credentials
	errUnsupportedGrantType = "unsupported_grant_type"
	errInvalidScope         = "invalid_scope"
)

// ScopeFeedsWrite is the one scope an upload API token carries.
const ScopeFeedsWrite = "feeds:write"

// oauthError is a token endpoint error. Descriptions are fixed strings:
// they never echo a client id, a secret or any other input.
type oauthError struct {
	code, description string
}

func (e *oauthError) Error() string { return e.code + ": " + e.description }

// tokenRequest is a parsed token request: client credentials and what the
// client asked for. It says nothing yet about whether the credentials are
// right.
type tokenRequest struct {
	clientID, clientSecret string
	grantType, scope       string
}

// parseTokenRequest reads a token request from its Authorization header
// values and its application/x-www-form-urlencoded body (RFC 6749 §2.3.1,
// §3.2, §4.4.2). It checks the request's shape, not the credentials:
//
//   - the client authenticates by HTTP Basic (client id and secret each
//     form-urlencoded, then joined by ':' and base64-encoded) or by the
//     client_id and client_secret body parameters; both at once (a body
//     client_id equal to the Basic one is tolerated), a malformed Basic
//     header, a repeated parameter or a body that is not a form is
//     invalid_request; no credentials, or another authentication scheme, is
//     invalid_client;
//   - an empty parameter counts as absent; grant_type is required
//     (invalid_request).
//
// Whether the grant type and scope are acceptable is checked later, after
// the client has authenticated.
func parseTokenRequest(authorization []string, body string) (tokenRequest, *oauthError) {
	var req tokenRequest
	form, err := url.ParseQuery(body)
	if err != nil {
		return req, &oauthError{errInvalidRequest, "request body is not application/x-www-form-urlencoded"}
	}
	for _, vs := range form {
		if len(vs) > 1 {
			return req, &oauthError{errInvalidRequest, "a parameter is repeated"}
		}
	}
	req.grantType, req.scope = form.Get("grant_type"), form.Get("scope")
	formID, formSecret := form.Get("client_id"), form.Get("client_secret")

	if len(authorization) > 1 {
		return req, &oauthError{errInvalidRequest, "more than one Authorization header"}
	}
	hasHeader := len(authorization) == 1 && authorization[0] != ""
	var basicID, basicSecret string
	if hasHeader {
		var basic, ok bool
		basicID, basicSecret, basic, ok = parseBasic(authorization[0])
		switch {
		case formSecret != "" || (formID != "" && formID != basicID):
			return req, &oauthError{errInvalidRequest, "client credentials in both the Authorization header and the body"}
		case !basic:
			return req, &oauthError{errInvalidClient, "client authentication must use HTTP Basic or the request body"}
		case !ok:
			return req, &oauthError{errInvalidRequest, "malformed HTTP Basic credentials"}
		}
	}
	if req.grantType == "" {
		return req, &oauthError{errInvalidRequest, "grant_type is required"}
	}
	switch {
	case hasHeader:
		req.clientID, req.clientSecret = basicID, basicSecret
	case formSecret != "" && formID == "":
		return req, &oauthError{errInvalidRequest, "client_secret without client_id"}
	default:
		req.clientID, req.clientSecret = formID, formSecret
	}
	if req.clientID == "" || req.clientSecret == "" {
		return req, &oauthError{errInvalidClient, "client authentication required"}
	}
	return req, nil
}

// parseBasic parses an Authorization header value of the Basic scheme
// (RFC 7617) whose user and password are form-urlencoded (RFC 6749
// §2.3.1). basic reports whether the scheme is Basic (in any case); ok,
// whether the credentials are well formed.
func parseBasic(h string) (id, secret string, basic, ok bool) {
	scheme, rest, _ := strings.Cut(h, " ")
	if !strings.EqualFold(scheme, "Basic") {
		return "", "", false, false
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(rest))
	if err != nil {
		return "", "", true, false
	}
	rawID, rawSecret, found := strings.Cut(string(raw), ":")
	if !found {
		return "", "", true, false
	}
	if id, err = url.QueryUnescape(rawID); err != nil {
		return "", "", true, false
	}
	if secret, err = url.QueryUnescape(rawSecret); err != nil {
		return "", "", true, false
	}
	return id, secret, true, true
}
