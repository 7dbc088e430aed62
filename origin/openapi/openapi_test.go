package openapi_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/listgate/listgate/origin/api"
	"github.com/listgate/listgate/origin/ingest"
	"github.com/listgate/listgate/origin/leads"
	"github.com/listgate/listgate/origin/listings"
	"github.com/listgate/listgate/origin/openapi"
	"github.com/listgate/listgate/origin/openapi/contract"
	"github.com/listgate/listgate/origin/store"
	"github.com/listgate/listgate/origin/upload"
	"github.com/listgate/listgate/pairing"
	"github.com/listgate/listgate/pairing/pairinghttp"
	"github.com/listgate/listgate/pkg/apierror"
)

func mustDoc(tb testing.TB) *openapi3.T {
	tb.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(openapi.Document())
	if err != nil {
		tb.Fatalf("load: %v", err)
	}
	return doc
}

// The document loads and validates with kin-openapi, examples included.
func TestDocumentValidates(t *testing.T) {
	doc := mustDoc(t)
	if err := doc.Validate(t.Context()); err != nil {
		t.Fatalf("validate: %v", err)
	}
	if doc.OpenAPI != "3.0.3" {
		t.Errorf("openapi %q, want 3.0.3", doc.OpenAPI)
	}
	if len(doc.Servers) != 1 || doc.Servers[0].URL != "{base_url}" ||
		!strings.HasSuffix(doc.Servers[0].Variables["base_url"].Default, "/v1") {
		t.Errorf("servers: want one, {base_url} whose default ends in /v1")
	}
}

// operations calls f for every operation with its method and full path.
func operations(tb testing.TB, doc *openapi3.T, f func(method, path string, op *openapi3.Operation)) {
	tb.Helper()
	for _, p := range doc.Paths.InMatchingOrder() {
		item := doc.Paths.Value(p)
		base, err := contract.ServerBasePath(doc, item)
		if err != nil {
			tb.Fatal(err)
		}
		for m, op := range item.Operations() {
			f(m, base+p, op)
		}
	}
}

// Every operation says what it needs (security, x-scope) and every
// response carries X-Request-Id; every error response's code is the one
// pkg/apierror maps its status to.
func TestDocumentConventions(t *testing.T) {
	doc := mustDoc(t)
	var codes []string
	for _, c := range apierror.Codes() {
		codes = append(codes, string(c))
	}
	// The codes of the two envelopes are pkg/apierror's, each once.
	var enum []string
	for _, name := range []string{"Error", "ValidationError"} {
		for _, v := range doc.Components.Schemas[name].Value.Properties["code"].Value.Enum {
			enum = append(enum, v.(string))
		}
	}
	slices.Sort(enum)
	codes = slices.Sorted(slices.Values(codes))
	if !slices.Equal(enum, codes) {
		t.Errorf("error codes %v in the document, pkg/apierror has %v", enum, codes)
	}
	scopes := map[string]bool{"listings:read": true, "agents:read": true, "stats:read": true, "leads:write": true, "views:write": true}
	operations(t, doc, func(method, path string, op *openapi3.Operation) {
		name := method + " " + path
		if op.OperationID == "" || op.Summary == "" || len(op.Tags) != 1 {
			t.Errorf("%s: needs operationId, summary and one tag", name)
		}
		if op.Security == nil {
			t.Errorf("%s: no security requirement (use [] for public routes)", name)
		}
		scope, _ := op.Extensions["x-scope"].(string)
		keyed := op.Security != nil && len(*op.Security) > 0 && (*op.Security)[0]["ApiKeyBearer"] != nil
		if keyed && !scopes[scope] && name != "DELETE /v1/pairing" {
			t.Errorf("%s: x-scope %q is not an API key scope", name, scope)
		}
		if scope != "" && !strings.Contains(op.Description, "Scope: `"+scope+"`") {
			t.Errorf("%s: the description does not say Scope: `%s`", name, scope)
		}
		for code, ref := range op.Responses.Map() {
			resp := ref.Value
			if resp.Headers["X-Request-Id"] == nil {
				t.Errorf("%s %s: no X-Request-Id header", name, code)
			}
			status, _ := strconv.Atoi(code)
			if status < 400 {
				continue
			}
			mt := resp.Content.Get("application/json")
			if mt == nil {
				t.Errorf("%s %s: no JSON body", name, code)
				continue
			}
			if got := envelopeCode(mt.Schema); got != "" && apierror.Code(got).Status() != status {
				t.Errorf("%s %s: envelope code %s is status %d", name, code, got, apierror.Code(got).Status())
			}
		}
	})
}

// envelopeCode returns the code an error envelope schema pins, "" for
// another schema (an OAuth error, say).
func envelopeCode(s *openapi3.SchemaRef) string {
	if s.Ref == "#/components/schemas/ValidationErrorEnvelope" {
		return string(apierror.CodeValidationError)
	}
	for _, sub := range s.Value.AllOf {
		if e := sub.Value.Properties["error"]; e != nil {
			if c := e.Value.Properties["code"]; c != nil && len(c.Value.Enum) == 1 {
				return c.Value.Enum[0].(string)
			}
		}
	}
	return ""
}

// notServedYet are documented routes the origin does not serve yet: none
// since the pairing flow (pairing/pairinghttp) is mounted.
var notServedYet = []string{}

// edgeOnly are documented routes the edge answers alone (x-edge-only): the
// origin never sees them.
var edgeOnly = []string{"POST /v1/sites/{site}/views", "GET /v1/sites/{site}/views.gif"}

// serviceRoutes are the routes api.New registers itself.
var serviceRoutes = []string{"GET /healthz", "GET /metrics", "GET /readyz"}

// recording is a Mounter that records the patterns m registers.
type recording struct {
	m   api.Mounter
	got *[]string
}

func (r recording) Mount(handle func(string, api.HandlerFunc)) {
	r.m.Mount(func(pattern string, h api.HandlerFunc) {
		*r.got = append(*r.got, pattern)
		handle(pattern, h)
	})
}

// newServer builds the origin's API server with every Mounter the origin
// has, without a database: enough to register routes and answer what needs
// no database. It returns the server and the patterns the Mounters
// registered.
func newServer(tb testing.TB) (*api.Server, []string) {
	tb.Helper()
	log := slog.New(slog.DiscardHandler)
	feeds, err := upload.New(upload.Config{DB: &store.DB{}, Importer: ingest.New(nil, log), Log: log})
	if err != nil {
		tb.Fatal(err)
	}
	svc, err := pairing.New(pairing.Config{Store: (&store.DB{}).Pairings(), PublicURL: "https://api.listgate.example", Log: log})
	if err != nil {
		tb.Fatal(err)
	}
	pairings, err := pairinghttp.New(pairinghttp.Config{Service: svc})
	if err != nil {
		tb.Fatal(err)
	}
	var got []string
	var mounts []api.Mounter
	for _, m := range []api.Mounter{listings.New(listings.Config{}), leads.New(leads.Config{Log: log}), feeds, pairings, openapi.New()} {
		mounts = append(mounts, recording{m, &got})
	}
	return api.New(api.Config{Log: log, Mounts: mounts}), got
}

// The routes the origin registers are the document's, and the other way
// round, less the routes not served yet.
func TestRoutesMatchServer(t *testing.T) {
	doc := mustDoc(t)
	srv, mounted := newServer(t)
	served := append(slices.Clone(mounted), serviceRoutes...)
	slices.Sort(served)

	var documented []string
	operations(t, doc, func(method, path string, op *openapi3.Operation) {
		name := method + " " + path
		if only, _ := op.Extensions["x-edge-only"].(bool); only != slices.Contains(edgeOnly, name) {
			t.Errorf("%s: x-edge-only %v, listed in edgeOnly %v", name, only, slices.Contains(edgeOnly, name))
		}
		if !slices.Contains(edgeOnly, name) {
			documented = append(documented, name)
		}
	})
	slices.Sort(documented)
	var want []string
	for _, r := range documented {
		if !slices.Contains(notServedYet, r) {
			want = append(want, r)
		}
	}
	for _, r := range notServedYet {
		if !slices.Contains(documented, r) {
			t.Errorf("%s is listed as not served yet but is not documented", r)
		}
		if slices.Contains(served, r) {
			t.Errorf("%s is served now: drop it from notServedYet", r)
		}
	}
	for _, r := range served {
		if !slices.Contains(want, r) {
			t.Errorf("the origin serves %s, the document does not have it", r)
		}
	}
	for _, r := range want {
		if !slices.Contains(served, r) {
			t.Errorf("the document has %s, the origin does not serve it", r)
		}
	}

	// The server's own answer agrees: a method no route has is 405 with the
	// document's methods on every served path, and 404 on the others.
	byPath := map[string][]string{}
	for _, r := range documented {
		m, p, _ := strings.Cut(r, " ")
		byPath[p] = append(byPath[p], m)
		if m == http.MethodGet {
			byPath[p] = append(byPath[p], http.MethodHead)
		}
	}
	for p, methods := range byPath {
		slices.Sort(methods)
		path := strings.NewReplacer("{site}", "6f1c2a8e-0000-4000-8000-000000000000", "{listing}", "1",
			"{media_id}", "1", "{agent_id}", "1", "{feed_id}", "6f1c2a8e-0000-4000-8000-000000000001").Replace(p)
		rec := httptest.NewRecorder()
		srv.Handler().ServeHTTP(rec, httptest.NewRequest("PATCH", path, nil))
		want, allow := http.StatusMethodNotAllowed, strings.Join(methods, ", ")
		if slices.Contains(notServedYet, methods[0]+" "+p) {
			want, allow = http.StatusNotFound, ""
		}
		if rec.Code != want || rec.Header().Get("Allow") != allow {
			t.Errorf("PATCH %s = %d Allow %q, want %d Allow %q", path, rec.Code, rec.Header().Get("Allow"), want, allow)
		}
	}
}

// GET /v1/openapi.json serves the document without a key, with an ETag that
// If-None-Match turns into 304; every exchange is checked by the contract.
func TestServeDocument(t *testing.T) { checkServeDocument(t) }

func checkServeDocument(t *testing.T) {
	t.Helper()
	srv, _ := newServer(t)
	h := contract.Wrap(t, srv.Handler())
	do := func(method string, hdr map[string]string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, openapi.Path, nil)
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	r := do("GET", nil)
	if r.Code != 200 || r.Body.String() != string(openapi.Document()) {
		t.Fatalf("GET = %d, %d bytes", r.Code, r.Body.Len())
	}
	etag := r.Header().Get("ETag")
	if ct := r.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/json") || etag == "" ||
		r.Header().Get("Cache-Control") != "public, max-age=300" {
		t.Errorf("headers %v", r.Header())
	}
	if r := do("GET", map[string]string{"If-None-Match": `"other", ` + etag}); r.Code != 304 || r.Body.Len() != 0 ||
		r.Header().Get("ETag") != etag {
		t.Errorf("If-None-Match: %d %q", r.Code, r.Body)
	}
	if r := do("HEAD", nil); r.Code != 200 || r.Body.Len() != 0 || r.Header().Get("Content-Length") != strconv.Itoa(len(openapi.Document())) {
		t.Errorf("HEAD: %d, %d bytes, %v", r.Code, r.Body.Len(), r.Header())
	}
	if r := do("POST", nil); r.Code != 405 || r.Header().Get("Allow") != "GET, HEAD" {
		t.Errorf("POST: %d Allow %q", r.Code, r.Header().Get("Allow"))
	}
	if r := do("GET", map[string]string{"Accept": "text/html"}); r.Code != 200 {
		t.Errorf("a browser's Accept: %d", r.Code)
	}
	if r := do("GET", nil); r.Header().Get("ETag") != etag {
		t.Errorf("ETag changed between requests")
	}
	// The service endpoints that need no database.
	for _, path := range []string{"/healthz", "/v1/openapi.json"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		if rec.Code != 200 {
			t.Errorf("GET %s = %d", path, rec.Code)
		}
	}
}

// TestContractCoverage prints which (route, status) pairs of the document
// the tests exercised through contract.Wrap: this package's own, and, with
// LISTGATE_CONTRACT_COVERAGE set to the directory other test binaries wrote
// theirs to, theirs too (see package contract).
func TestContractCoverage(t *testing.T) {
	checkServeDocument(t) // something to report when run alone
	report, err := contract.Coverage()
	if dir := os.Getenv(contract.CoverageEnv); dir != "" {
		report, err = contract.ReadCoverage(dir)
	}
	if err != nil {
		t.Fatal(err)
	}
	covered, total := report.Covered()
	if covered == 0 || total < 100 {
		t.Errorf("covered %d of %d pairs", covered, total)
	}
	t.Logf("\n%s", report)
}
