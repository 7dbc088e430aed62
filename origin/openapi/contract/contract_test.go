package contract

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// fakeTB records what Wrap reports instead of failing the test.
type fakeTB struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (f *fakeTB) Helper() {}

func (f *fakeTB) Errorf(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errs = append(f.errs, fmt.Sprintf(format, args...))
}

const (
	site    = "6f1c2a8e-0000-4000-8000-000000000000"
	agent   = `{"agent_id":"7","name":"Al","email":null,"phones":{"mobile":null,"office":"03 9000 0000"},"photo_url":null,"listing_count":2}`
	created = `{"lead_id":1,"status":"new","duplicate":false,"assigned_to":null}`
)

// answer is a canned response.
type answer struct {
	status int
	header map[string]string
	body   string
}

func (a answer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	for k, v := range a.header {
		w.Header().Set(k, v)
	}
	w.WriteHeader(a.status)
	if r.Method != http.MethodHead {
		fmt.Fprint(w, a.body)
	}
}

func readHeaders(extra ...string) map[string]string {
	h := map[string]string{"Content-Type": "application/json; charset=utf-8", "X-Request-Id": "req-1",
		"ETag": `"abc"`, "Cache-Control": "private, max-age=60"}
	for i := 0; i+1 < len(extra); i += 2 {
		if extra[i+1] == "" {
			delete(h, extra[i])
		} else {
			h[extra[i]] = extra[i+1]
		}
	}
	return h
}

func errorHeaders(extra ...string) map[string]string {
	return readHeaders(append([]string{"ETag", "", "Cache-Control", "no-store"}, extra...)...)
}

func envelope(code, extra string) string {
	return `{"error":{"code":"` + code + `","message":"m"` + extra + `,"request_id":"req-1"}}`
}

func TestWrap(t *testing.T) {
	agentPath := "/v1/sites/" + site + "/agents/7"
	for name, tc := range map[string]struct {
		method, path, body string
		header             map[string]string
		answer             answer
		want               string // part of the one failure, "" for none
	}{
		"conforming read":            {"GET", agentPath, "", nil, answer{200, readHeaders(), agent}, ""},
		"HEAD of a read":             {"HEAD", agentPath, "", nil, answer{200, readHeaders(), agent}, ""},
		"stray field":                {"GET", agentPath, "", nil, answer{200, readHeaders(), strings.Replace(agent, `"name"`, `"nickname":"A","name"`, 1)}, `"nickname" is unsupported`},
		"null not nullable":          {"GET", agentPath, "", nil, answer{200, readHeaders(), strings.Replace(agent, `"listing_count":2`, `"listing_count":null`, 1)}, "listing_count"},
		"missing field":              {"GET", agentPath, "", nil, answer{200, readHeaders(), strings.Replace(agent, `"photo_url":null,`, ``, 1)}, "photo_url"},
		"no ETag":                    {"GET", agentPath, "", nil, answer{200, readHeaders("ETag", ""), agent}, `"ETag" missing`},
		"no request id":              {"GET", agentPath, "", nil, answer{200, readHeaders("X-Request-Id", ""), agent}, `"X-Request-Id" missing`},
		"not JSON":                   {"GET", agentPath, "", nil, answer{200, readHeaders("Content-Type", "text/html"), "<p>"}, "Content-Type"},
		"undocumented":               {"GET", agentPath, "", nil, answer{418, errorHeaders(), envelope("NOT_FOUND", "")}, "status is not supported"},
		"304":                        {"GET", agentPath, "", map[string]string{"If-None-Match": `"abc"`}, answer{304, readHeaders("Content-Type", ""), ""}, ""},
		"304 without ETag":           {"GET", agentPath, "", nil, answer{304, readHeaders("ETag", ""), ""}, "ETag"},
		"error envelope":             {"GET", agentPath, "", nil, answer{404, errorHeaders(), envelope("NOT_FOUND", "")}, ""},
		"wrong code":                 {"GET", agentPath, "", nil, answer{404, errorHeaders(), envelope("FORBIDDEN", "")}, "code"},
		"details on 404":             {"GET", agentPath, "", nil, answer{404, errorHeaders(), envelope("NOT_FOUND", `,"details":{}`)}, `"details" is unsupported`},
		"422 needs details":          {"GET", agentPath + "?x=1", "", nil, answer{422, errorHeaders(), envelope("VALIDATION_ERROR", "")}, "details"},
		"429 Retry-After":            {"GET", agentPath, "", nil, answer{429, errorHeaders(), envelope("RATE_LIMIT_EXCEEDED", "")}, "Retry-After"},
		"unknown path":               {"GET", "/v1/nothing", "", nil, answer{404, errorHeaders(), envelope("NOT_FOUND", "")}, "no such path"},
		"405":                        {"POST", agentPath, "", nil, answer{405, errorHeaders("Allow", "GET, HEAD"), envelope("METHOD_NOT_ALLOWED", "")}, ""},
		"405 wrong Allow":            {"POST", agentPath, "", nil, answer{405, errorHeaders("Allow", "GET"), envelope("METHOD_NOT_ALLOWED", "")}, "Allow"},
		"undocumented method served": {"DELETE", agentPath, "", nil, answer{200, readHeaders(), agent}, "want 405"},
		"invalid query accepted":     {"GET", "/v1/sites/" + site + "/agents?per_page=0", "", nil, answer{200, readHeaders(), `{"data":[],"meta":{"page":1,"per_page":20,"total":0,"total_exact":true,"total_pages":0}}`}, "accepted a request the document calls invalid"},
		"invalid query rejected":     {"GET", "/v1/sites/" + site + "/agents?per_page=0", "", nil, answer{422, errorHeaders(), envelope("VALIDATION_ERROR", `,"details":{"per_page":"must be between 1 and 100"}`)}, ""},
		"bad site accepted":          {"GET", "/v1/sites/not-a-uuid/agents/7", "", nil, answer{200, readHeaders(), agent}, "accepted a request"},
		"lead":                       {"POST", "/v1/leads", `{"name":"Ann","email":"ann@example.com"}`, map[string]string{"Content-Type": "application/json"}, answer{201, errorHeaders(), created}, ""},
		"lead without contact accepted": {"POST", "/v1/leads", `{"name":"Ann"}`, map[string]string{"Content-Type": "application/json"},
			answer{201, errorHeaders(), created}, "accepted a request"},
		"lead with a fifth field": {"POST", "/v1/leads", `{"name":"Ann","email":"ann@example.com"}`, map[string]string{"Content-Type": "application/json"},
			answer{201, errorHeaders(), strings.Replace(created, `"new"`, `"new","location":"/x"`, 1)}, `"location" is unsupported`},
		"leading path to search": {"GET", "/v1/sites/" + site + "/listings/search?q=kew", "", nil,
			answer{200, readHeaders(), `{"data":[],"meta":{"page":1,"per_page":20,"total":0,"total_exact":true,"total_pages":0}}`}, ""},
	} {
		t.Run(name, func(t *testing.T) {
			ftb := &fakeTB{TB: t}
			h := wrap(ftb, tc.answer, false)
			req := httptest.NewRequest(tc.method, tc.path, strings.NewReader(tc.body))
			for k, v := range tc.header {
				req.Header.Set(k, v)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tc.answer.status {
				t.Errorf("the client got %d, the handler answered %d", rec.Code, tc.answer.status)
			}
			switch {
			case tc.want == "" && len(ftb.errs) > 0:
				t.Errorf("unexpected failure: %s", ftb.errs)
			case tc.want != "" && len(ftb.errs) != 1:
				t.Errorf("%d failures, want one about %q: %s", len(ftb.errs), tc.want, ftb.errs)
			case tc.want != "" && !strings.Contains(ftb.errs[0], tc.want):
				t.Errorf("failure %q does not mention %q", ftb.errs[0], tc.want)
			case tc.want != "" && !strings.Contains(ftb.errs[0], fmt.Sprintf("→ %d", tc.answer.status)):
				t.Errorf("failure %q does not name the status", ftb.errs[0])
			}
		})
	}
}

// The handler sees the request body it was sent, read through the check.
func TestWrapPassesBodyThrough(t *testing.T) {
	var got string
	h := wrap(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		buf := make([]byte, 100)
		n, _ := r.Body.Read(buf)
		got = string(buf[:n])
		answer{201, errorHeaders(), created}.ServeHTTP(w, r)
	}), false)
	req := httptest.NewRequest("POST", "/v1/leads", strings.NewReader(`{"name":"Ann","phone":"03 9000 0000"}`))
	req.Header.Set("Content-Type", "application/json")
	h.ServeHTTP(httptest.NewRecorder(), req)
	if got != `{"name":"Ann","phone":"03 9000 0000"}` {
		t.Errorf("handler read %q", got)
	}
}

func TestMatchPrefersLiterals(t *testing.T) {
	c, err := loadChecker()
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		"/v1/sites/" + site + "/listings/search":   "/v1/sites/{site}/listings/search",
		"/v1/sites/" + site + "/listings/featured": "/v1/sites/{site}/listings/featured",
		"/v1/sites/" + site + "/listings/AG%3AL1":  "/v1/sites/{site}/listings/{listing}",
		"/healthz":          "/healthz",
		"/v1/healthz":       "",
		"/v1/sites//agents": "",
	} {
		rt, params := c.match(path)
		got := ""
		if rt != nil {
			got = rt.full
		}
		if got != want {
			t.Errorf("%s matched %q, want %q", path, got, want)
		}
		if strings.HasSuffix(path, "AG%3AL1") && params["listing"] != "AG:L1" {
			t.Errorf("listing param %q", params["listing"])
		}
	}
}

func TestCoverageCounts(t *testing.T) {
	t.Setenv(CoverageEnv, "") // these made-up answers are no coverage of the origin
	h := Wrap(t, answer{200, readHeaders(), agent})
	before, err := Coverage()
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/v1/sites/"+site+"/agents/1", nil))
	}
	after, _ := Coverage()
	p := Pair{"GET", "/v1/sites/{site}/agents/{agent_id}", 200}
	if after.Exercised[p]-before.Exercised[p] != 3 {
		t.Errorf("counted %d, want 3", after.Exercised[p]-before.Exercised[p])
	}
	if !strings.Contains(after.String(), "/v1/sites/{site}/agents/{agent_id}") {
		t.Errorf("report:\n%s", after)
	}
	dir := t.TempDir()
	if err := writeCoverage(dir); err != nil {
		t.Fatal(err)
	}
	merged, err := ReadCoverage(dir)
	if err != nil {
		t.Fatal(err)
	}
	if merged.Exercised[p] != 2*after.Exercised[p] {
		t.Errorf("merged %d, want twice %d", merged.Exercised[p], after.Exercised[p])
	}
}
