// Package contract checks HTTP traffic against Listgate's OpenAPI document
// (origin/openapi). It is a test helper: only tests import it.
//
// Wrap puts a handler behind a checker that validates every request and
// response pair with kin-openapi's openapi3filter and fails the test on any
// mismatch:
//
//   - a request to a path the document does not have;
//   - a method the document does not give the path, unless the answer is
//     405 METHOD_NOT_ALLOWED whose Allow header lists exactly the
//     document's methods (GET routes serve HEAD too);
//   - a response whose status the operation does not document, or whose
//     headers or body do not match the documented response (the document's
//     response objects forbid unknown fields, so a stray field fails);
//   - a request the document calls invalid that the server nevertheless
//     answered with a success (below 400): the document is stricter than
//     the server, or the server too lenient. Invalid requests answered 4xx
//     are what tests of the error paths send, and are fine.
//
// Authentication is not checked: the origin learns who is calling from the
// edge's identity headers, not from keys.
//
// Coverage reports which (route, status) pairs the wrapped handlers have
// answered in this process, and the exchanges CheckExchange checked (the
// end-to-end tests' requests through the edge). With
// LISTGATE_CONTRACT_COVERAGE set to a directory, every test binary that
// uses either also writes its pairs there
// (one file per binary), and ReadCoverage merges them; origin/openapi's
// TestContractCoverage prints the merged report:
//
//	dir=$(mktemp -d)
//	LISTGATE_CONTRACT_COVERAGE=$dir go test -count=1 ./origin/... ./pairing/... ./edge/e2e/
//	LISTGATE_CONTRACT_COVERAGE=$dir go test -count=1 -run TestContractCoverage -v ./origin/openapi
package contract

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"

	"github.com/listgate/listgate/origin/openapi"
)

// Limits of what a check captures. A body over its limit is not validated
// (its status and headers still are).
const (
	maxRequestBody  = 4 << 20
	maxResponseBody = 32 << 20
	maxMessage      = 2000 // characters of a validator's message in a test failure
)

func init() {
	// Feeds are XML, which openapi3filter has no decoder for: take the body
	// as the string its schema says it is.
	openapi3filter.RegisterBodyDecoder("application/xml", openapi3filter.FileBodyDecoder)
	openapi3filter.RegisterBodyDecoder("text/xml", openapi3filter.FileBodyDecoder)
}

// Wrap returns a handler that serves every request through h and then
// checks the request and its response against the OpenAPI document,
// reporting each mismatch with tb.Errorf (naming the route, the status and
// the validator's message). The handler is safe for concurrent use, as h
// is; it must not serve requests after the test tb belongs to has ended.
// Wrap fails the test at once if the document does not load.
func Wrap(tb testing.TB, h http.Handler) http.Handler {
	tb.Helper()
	return wrap(tb, h, true)
}

// wrap is Wrap; record says whether the exchanges count for Coverage (this
// package's tests of made-up answers do not).
func wrap(tb testing.TB, h http.Handler, record bool) http.Handler {
	tb.Helper()
	c, err := loadChecker()
	if err != nil {
		tb.Fatalf("contract: %v", err)
	}
	if dir := coverageDir(); dir != "" && record {
		tb.Cleanup(func() {
			if err := writeCoverage(dir); err != nil {
				tb.Errorf("contract: %v", err)
			}
		})
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req := r.Clone(r.Context()) // the handler may change r's headers
		var tee *bodyTee
		if r.Body != nil && r.Body != http.NoBody {
			tee = &bodyTee{ReadCloser: r.Body, max: maxRequestBody}
			r.Body = tee
		}
		rec := &recorder{ResponseWriter: w, max: maxResponseBody}
		h.ServeHTTP(rec, r)
		rec.finish()
		body, complete := []byte(nil), true
		if tee != nil {
			if rec.status < 400 {
				tee.drain() // what the server accepted is checked whole
			}
			body, complete = tee.captured()
		}
		for _, msg := range c.check(req, body, complete, rec, record) {
			tb.Errorf("%s", msg)
		}
	})
}

// checker holds the document and its routes. Read-only once built.
type checker struct {
	doc    *openapi3.T
	routes []*route
	opts   []openapi3.SchemaValidationOption
}

// route is one path of the document, with its full path on the server.
type route struct {
	full     string // the path as the server sees it: "/v1/sites/{site}/listings"
	docPath  string // the document's key: "/sites/{site}/listings"
	segs     []string
	literals int
	item     *openapi3.PathItem
}

var loadChecker = sync.OnceValues(func() (*checker, error) {
	doc, err := openapi3.NewLoader().LoadFromData(openapi.Document())
	if err != nil {
		return nil, fmt.Errorf("load the OpenAPI document: %w", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("the OpenAPI document is invalid: %w", err)
	}
	c := &checker{doc: doc, opts: []openapi3.SchemaValidationOption{
		openapi3.DisableSchemaErrorDetails(),
		openapi3.WithStringFormatValidator("uuid", openapi3.NewRegexpFormatValidator(
			`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)),
		openapi3.WithStringFormatValidator("email", openapi3.NewRegexpFormatValidator(openapi3.FormatOfStringForEmail)),
	}}
	for _, p := range doc.Paths.InMatchingOrder() {
		item := doc.Paths.Value(p)
		base, err := ServerBasePath(doc, item)
		if err != nil {
			return nil, fmt.Errorf("path %s: %w", p, err)
		}
		rt := &route{full: base + p, docPath: p, item: item}
		rt.segs = strings.Split(rt.full, "/")
		for _, s := range rt.segs {
			if !isParam(s) {
				rt.literals++
			}
		}
		c.routes = append(c.routes, rt)
	}
	return c, nil
})

// ServerBasePath returns the path part of the server a path item is served
// from: its own servers, else the document's, with variables at their
// defaults ("/v1" for the API's routes, "" for the service endpoints).
func ServerBasePath(doc *openapi3.T, item *openapi3.PathItem) (string, error) {
	servers := item.Servers
	if len(servers) == 0 {
		servers = doc.Servers
	}
	if len(servers) == 0 {
		return "", nil
	}
	srv := servers[0]
	raw := srv.URL
	for name, v := range srv.Variables {
		raw = strings.ReplaceAll(raw, "{"+name+"}", v.Default)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("server %q: %w", srv.URL, err)
	}
	return strings.TrimSuffix(u.Path, "/"), nil
}

func isParam(seg string) bool { return strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}") }

// match finds the route of a request path (escaped, as on the wire) and its
// path parameters, the most literal route winning as in net/http.
func (c *checker) match(escapedPath string) (*route, map[string]string) {
	segs := strings.Split(escapedPath, "/")
	var best *route
	var params map[string]string
	for _, rt := range c.routes {
		if len(rt.segs) != len(segs) || best != nil && rt.literals <= best.literals {
			continue
		}
		p, ok := rt.bind(segs)
		if ok {
			best, params = rt, p
		}
	}
	return best, params
}

func (rt *route) bind(segs []string) (map[string]string, bool) {
	params := map[string]string{}
	for i, s := range rt.segs {
		if !isParam(s) {
			if s != segs[i] {
				return nil, false
			}
			continue
		}
		v, err := url.PathUnescape(segs[i])
		if err != nil || v == "" {
			return nil, false
		}
		params[s[1:len(s)-1]] = v
	}
	return params, true
}

// methods returns the methods the route serves, as an Allow header lists
// them.
func (rt *route) methods() []string {
	var ms []string
	for m := range rt.item.Operations() {
		ms = append(ms, m)
		if m == http.MethodGet {
			ms = append(ms, http.MethodHead)
		}
	}
	slices.Sort(ms)
	return ms
}

// check validates one exchange and records it for Coverage. It returns the
// failures, each a complete message.
func (c *checker) check(req *http.Request, body []byte, bodyComplete bool, rec *recorder, count bool) []string {
	status := rec.status
	record := func(p Pair) {
		if count {
			recordPair(p)
		}
	}
	rt, params := c.match(req.URL.EscapedPath())
	if rt == nil {
		record(Pair{Method: req.Method, Route: "(none) " + req.URL.Path, Status: status})
		return []string{fmt.Sprintf("contract: %s %s → %d: the document has no such path", req.Method, req.URL.RequestURI(), status)}
	}
	label := fmt.Sprintf("%s %s (route %s %s) → %d", req.Method, req.URL.RequestURI(), req.Method, rt.full, status)
	record(Pair{Method: req.Method, Route: rt.full, Status: status})

	opMethod := req.Method
	if opMethod == http.MethodHead {
		opMethod = http.MethodGet
	}
	op := rt.item.GetOperation(opMethod)
	if op == nil && req.Method == http.MethodOptions && rec.status != http.StatusMethodNotAllowed {
		// The edge's own answer to OPTIONS (the document's conventions and
		// CORS section describe it; no operation does): 200 with Allow, or
		// a preflight's 204, 403 or 404.
		if err := c.checkOptions(rt, rec); err != nil {
			return []string{fmt.Sprintf("contract: %s: %v", label, err)}
		}
		return nil
	}
	if op == nil {
		if err := c.checkMethodNotAllowed(rt, rec); err != nil {
			return []string{fmt.Sprintf("contract: %s: the document has no %s operation here: %v", label, req.Method, err)}
		}
		return nil
	}

	ctx := context.Background()
	vreq := req.Clone(ctx)
	vreq.Body = io.NopCloser(bytes.NewReader(body))
	vreq.ContentLength = int64(len(body))
	in := &openapi3filter.RequestValidationInput{
		Request:    vreq,
		PathParams: params,
		Route:      &routers.Route{Spec: c.doc, Path: rt.docPath, PathItem: rt.item, Method: opMethod, Operation: op},
		Options: &openapi3filter.Options{
			AuthenticationFunc:      openapi3filter.NoopAuthenticationFunc,
			SkipSettingDefaults:     true,
			ExcludeRequestBody:      !bodyComplete,
			MultiError:              true,
			SchemaValidationOptions: c.opts,
		},
	}
	var failures []string
	if err := openapi3filter.ValidateRequest(ctx, in); err != nil && status < 400 {
		failures = append(failures, fmt.Sprintf("contract: %s: the server accepted a request the document calls invalid: %s",
			label, short(err)))
	}

	if req.Method == http.MethodHead || status == http.StatusNotModified {
		// openapi3filter skips these: check the status and the required
		// headers here.
		if err := checkBodyless(op, status, rec.header); err != nil {
			failures = append(failures, fmt.Sprintf("contract: %s: %v", label, err))
		}
		return failures
	}
	out := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in,
		Status:                 status,
		Header:                 rec.header,
		Options: &openapi3filter.Options{
			IncludeResponseStatus:   true,
			ExcludeResponseBody:     rec.overflow,
			MultiError:              true,
			SchemaValidationOptions: c.opts,
		},
	}
	out.SetBodyBytes(rec.body.Bytes())
	if err := openapi3filter.ValidateResponse(ctx, out); err != nil {
		failures = append(failures, fmt.Sprintf("contract: %s: the response does not match the document: %s\nbody: %s",
			label, short(err), shortBody(rec.body.Bytes())))
	}
	return failures
}

// checkMethodNotAllowed checks the answer to a method the path does not
// have: 405 METHOD_NOT_ALLOWED listing the document's methods in Allow.
func (c *checker) checkMethodNotAllowed(rt *route, rec *recorder) error {
	if rec.status != http.StatusMethodNotAllowed {
		return fmt.Errorf("want 405 METHOD_NOT_ALLOWED, got %d", rec.status)
	}
	// The edge answers OPTIONS itself (preflights, and RFC 9110's OPTIONS),
	// so its Allow lists OPTIONS after the document's methods.
	want := strings.Join(rt.methods(), ", ")
	if got := rec.header.Get("Allow"); got != want && got != want+", OPTIONS" {
		return fmt.Errorf("405 with Allow %q, the document's methods are %q", got, want)
	}
	if rec.header.Get("X-Request-Id") == "" {
		return fmt.Errorf("405 without X-Request-Id")
	}
	// No operation documents a 405 (it answers methods the document does
	// not list): its body is the error envelope with its code.
	schema := c.doc.Components.Schemas["ErrorEnvelope"]
	if schema == nil {
		return fmt.Errorf("the document has no ErrorEnvelope schema")
	}
	v, err := decodeJSON(rec.body.Bytes())
	if err != nil {
		return fmt.Errorf("405 body %s: %v", shortBody(rec.body.Bytes()), err)
	}
	if err := schema.Value.VisitJSON(v, c.opts...); err != nil {
		return fmt.Errorf("405 body: %s", short(err))
	}
	if env, _ := v.(map[string]any); env != nil {
		if e, _ := env["error"].(map[string]any); e == nil || e["code"] != "METHOD_NOT_ALLOWED" {
			return fmt.Errorf("405 body %s: code is not METHOD_NOT_ALLOWED", shortBody(rec.body.Bytes()))
		}
	}
	return nil
}

// checkOptions checks the edge's answer to OPTIONS on a known path: a plain
// OPTIONS is 200 with Allow (the document's methods and OPTIONS); a
// preflight is 204 with the CORS headers, or refused 403 or 404.
func (c *checker) checkOptions(rt *route, rec *recorder) error {
	switch rec.status {
	case http.StatusOK:
		if want := strings.Join(rt.methods(), ", ") + ", OPTIONS"; rec.header.Get("Allow") != want {
			return fmt.Errorf("OPTIONS 200 with Allow %q, want %q", rec.header.Get("Allow"), want)
		}
	case http.StatusNoContent:
		if rec.header.Get("Access-Control-Allow-Origin") == "" || rec.header.Get("Access-Control-Allow-Methods") == "" {
			return fmt.Errorf("a preflight's 204 without Access-Control-Allow-Origin and -Methods")
		}
	case http.StatusForbidden, http.StatusNotFound:
	default:
		return fmt.Errorf("OPTIONS answered %d", rec.status)
	}
	return nil
}

// checkBodyless checks a response openapi3filter does not (HEAD, 304): its
// status is documented and its required headers are present.
func checkBodyless(op *openapi3.Operation, status int, h http.Header) error {
	ref := op.Responses.Status(status)
	if ref == nil || ref.Value == nil {
		return fmt.Errorf("status %d is not documented", status)
	}
	var missing []string
	for name, hr := range ref.Value.Headers {
		if hr.Value != nil && hr.Value.Required && h.Get(name) == "" {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return fmt.Errorf("required response headers missing: %s", strings.Join(missing, ", "))
	}
	return nil
}

func decodeJSON(b []byte) (any, error) {
	dec := jsonDecoder(b)
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// short bounds a validator's message.
func short(err error) string {
	s := err.Error()
	if len(s) > maxMessage {
		s = s[:maxMessage] + "…"
	}
	return s
}

func shortBody(b []byte) string {
	const max = 600
	if len(b) > max {
		return string(b[:max]) + "…"
	}
	return string(b)
}
