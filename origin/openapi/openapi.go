// Package openapi holds the OpenAPI 3 document of Listgate's public HTTP
// API (openapi.json, embedded in the binary) and serves it at
// GET /v1/openapi.json without a key.
//
// The document describes every route of API.md: the read API, lead
// submission, pairing, the upload API and the service endpoints. It is
// checked three ways by tests: it loads and validates with kin-openapi; the
// routes the origin registers are exactly the routes it documents; and
// every request and response of the origin's HTTP tests, and every
// exchange of the end-to-end tests with the real edge and origin, is
// validated against it (package contract). docs/api-reference.md is generated from
// it (go run ./origin/openapi/gen).
//
// This package has no dependency beyond the standard library and
// origin/api: kin-openapi is used only by tests and tools.
package openapi

import (
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"net/http"
	"strconv"

	"github.com/listgate/listgate/origin/api"
)

//go:embed openapi.json
var document []byte

// Path is where the document is served.
const Path = "/v1/openapi.json"

// CacheControl is the Cache-Control of the document's responses: it changes
// only with a release.
const CacheControl = "public, max-age=300"

// Document returns the OpenAPI document (JSON). The slice is shared: callers
// must not modify it.
func Document() []byte { return document }

// Service serves the document. Its zero value is not usable: build it with
// New. Safe for concurrent use.
type Service struct {
	etag string
}

var _ api.Mounter = (*Service)(nil)

// New returns the service serving Document.
func New() *Service {
	sum := sha256.Sum256(document)
	return &Service{etag: `"` + base64.RawURLEncoding.EncodeToString(sum[:18]) + `"`}
}

// Mount registers GET /v1/openapi.json (and so HEAD).
func (s *Service) Mount(handle func(pattern string, h api.HandlerFunc)) {
	handle("GET "+Path, s.serve)
}

// serve writes the document with a strong ETag, or 304 when If-None-Match
// names it. It needs no key and ignores query parameters.
func (s *Service) serve(w http.ResponseWriter, r *http.Request) error {
	h := w.Header()
	h.Set("ETag", s.etag)
	h.Set("Cache-Control", CacheControl)
	if api.ETagMatch(r.Header.Get("If-None-Match"), s.etag) {
		w.WriteHeader(http.StatusNotModified)
		return nil
	}
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(len(document)))
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return nil
	}
	_, err := w.Write(document)
	return err
}
