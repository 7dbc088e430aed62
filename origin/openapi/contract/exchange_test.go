package contract

import (
	"bytes"
	"compress/gzip"
	"net/http"
	"strings"
	"testing"
)

// CheckExchange checks an exchange a client made as Wrap checks one the
// server answered: a body off the document, an Allow without the edge's
// OPTIONS or with methods the document does not have, a preflight without
// its headers, a gzip body (inflated first); and leaves paths the document
// does not have alone.
func TestCheckExchange(t *testing.T) {
	t.Setenv(CoverageEnv, "") // made-up answers are no coverage
	gz := func(s string) []byte {
		var b bytes.Buffer
		w := gzip.NewWriter(&b)
		w.Write([]byte(s))
		w.Close()
		return b.Bytes()
	}
	hdr := func(kv ...string) http.Header {
		h := http.Header{}
		for k, v := range readHeaders() {
			h.Set(k, v)
		}
		for i := 0; i+1 < len(kv); i += 2 {
			h.Set(kv[i], kv[i+1])
		}
		return h
	}
	errorHdr := http.Header{"Content-Type": {"application/json; charset=utf-8"}, "X-Request-Id": {"req-1"}}
	methodNotAllowed := []byte(`{"error":{"code":"METHOD_NOT_ALLOWED","message":"method not allowed","request_id":"req-1"}}`)
	agentPath := "/v1/sites/" + site + "/agents/7"
	for name, tc := range map[string]struct {
		method, path string
		reqBody      string
		status       int
		header       http.Header
		body         []byte
		fails        string // "" when the exchange matches
	}{
		"an agent":                {"GET", agentPath, "", 200, hdr(), []byte(agent), ""},
		"an agent, gzip":          {"GET", agentPath, "", 200, hdr("Content-Encoding", "gzip"), gz(agent), ""},
		"an agent off the schema": {"GET", agentPath, "", 200, hdr(), []byte(`{"agent_id":7}`), "does not match"},
		"gzip that is not":        {"GET", agentPath, "", 200, hdr("Content-Encoding", "gzip"), []byte(agent), "does not inflate"},
		"the edge's 405":          {"DELETE", agentPath, "", 405, withAllow(errorHdr, "GET, HEAD, OPTIONS"), methodNotAllowed, ""},
		"a 405 with a method too many": {"DELETE", agentPath, "", 405, withAllow(errorHdr, "GET, HEAD, POST"),
			methodNotAllowed, "Allow"},
		"OPTIONS with Allow":              {"OPTIONS", agentPath, "", 200, withAllow(http.Header{}, "GET, HEAD, OPTIONS"), nil, ""},
		"OPTIONS without OPTIONS":         {"OPTIONS", agentPath, "", 200, withAllow(http.Header{}, "GET, HEAD"), nil, "Allow"},
		"a preflight":                     {"OPTIONS", agentPath, "", 204, http.Header{"Access-Control-Allow-Origin": {"https://a.example"}, "Access-Control-Allow-Methods": {"GET, HEAD"}}, nil, ""},
		"a preflight without its headers": {"OPTIONS", agentPath, "", 204, http.Header{}, nil, "preflight"},
		"a beacon's listing as digits": {"POST", "/v1/sites/" + site + "/views", `{"listing":"42"}`, 204,
			http.Header{"X-Request-Id": {"req-1"}, "Cache-Control": {"no-store"}}, nil, ""},
		"a beacon's listing as a word": {"POST", "/v1/sites/" + site + "/views", `{"listing":"forty"}`, 204,
			http.Header{"X-Request-Id": {"req-1"}, "Cache-Control": {"no-store"}}, nil, "calls invalid"},
		"a path the document does not have": {"GET", "/dashboard", "", 200, http.Header{}, []byte("<html>"), ""},
	} {
		t.Run(name, func(t *testing.T) {
			ftb := &fakeTB{TB: t}
			req, _ := http.NewRequest(tc.method, "http://edge.example"+tc.path, strings.NewReader(tc.reqBody))
			if tc.reqBody != "" {
				req.Header.Set("Content-Type", "application/json")
			}
			CheckExchange(ftb, req, []byte(tc.reqBody), tc.status, tc.header, tc.body)
			got := strings.Join(ftb.errs, "\n")
			switch {
			case tc.fails == "" && got != "":
				t.Errorf("reported:\n%s", got)
			case tc.fails != "" && !strings.Contains(got, tc.fails):
				t.Errorf("want a report of %q, got %q", tc.fails, got)
			}
		})
	}
}

func withAllow(h http.Header, allow string) http.Header {
	h = h.Clone()
	h.Set("Allow", allow)
	return h
}
