package introspect

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	json "github.com/goccy/go-json"

	"github.com/listgate/listgate/origin/api"
	"github.com/listgate/listgate/pkg/apikey"
	"github.com/listgate/listgate/pkg/internalapi"
	"github.com/listgate/listgate/pkg/model"
)

// get sends GET path with the internal token unless token is "" and
// returns the response and its body.
func (e *env) get(tb testing.TB, method, path, token string) (*http.Response, string) {
	tb.Helper()
	req := httptest.NewRequest(method, path, nil)
	if token != "" {
		req.Header.Set(api.HeaderInternalToken, token)
	}
	rec := httptest.NewRecorder()
	e.h.ServeHTTP(rec, req)
	resp := rec.Result()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func TestSiteCORS(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	site, _, _ := mustSiteKey(t, e.db, model.Starter, apikey.ListingsRead)
	bare, _, _ := mustSiteKey(t, e.db, model.Starter, apikey.ListingsRead)
	if _, err := e.db.SetCORS(ctx, site.ID, []string{"https://Bayside.example/", "http://localhost:3000"}); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		path, body string
	}{
		"origins":     {SiteCORSPath(site.ID), `{"site_id":"` + site.ID + `","origins":["https://bayside.example","http://localhost:3000"]}`},
		"none":        {SiteCORSPath(bare.ID), `{"site_id":"` + bare.ID + `","origins":[]}`},
		"upper case":  {SiteCORSPath(strings.ToUpper(bare.ID)), `{"site_id":"` + bare.ID + `","origins":[]}`},
		"as a struct": {SiteCORSPath(site.ID), ""},
	} {
		t.Run(name, func(t *testing.T) {
			resp, body := e.get(t, "GET", tc.path, token)
			if resp.StatusCode != 200 || resp.Header.Get("Cache-Control") != "no-store" ||
				!strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
				t.Fatalf("%d %v: %s", resp.StatusCode, resp.Header, body)
			}
			if tc.body != "" && strings.TrimSpace(body) != tc.body {
				t.Fatalf("body %s\nwant %s", body, tc.body)
			}
			var sc internalapi.SiteCORS
			if err := json.Unmarshal([]byte(body), &sc); err != nil || sc.SiteID == "" || sc.Origins == nil {
				t.Fatalf("as internalapi.SiteCORS: %+v, %v", sc, err)
			}
		})
	}
	// A change shows at once: the answer is never cached.
	if _, err := e.db.SetCORS(ctx, site.ID, []string{"https://new.example"}); err != nil {
		t.Fatal(err)
	}
	if _, body := e.get(t, "GET", SiteCORSPath(site.ID), token); !strings.Contains(body, `"origins":["https://new.example"]`) {
		t.Fatalf("after a change: %s", body)
	}
	if resp, _ := e.get(t, "HEAD", SiteCORSPath(site.ID), token); resp.StatusCode != 200 {
		t.Fatalf("HEAD: %d", resp.StatusCode)
	}
}

func TestSiteCORSRejects(t *testing.T) {
	e := newEnv(t)
	site, _, _ := mustSiteKey(t, e.db, model.Starter, apikey.ListingsRead)
	if _, err := e.db.SetCORS(context.Background(), site.ID, []string{"https://bayside.example"}); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		method, path, token string
		status              int
		code                string
	}{
		"no token":        {"GET", SiteCORSPath(site.ID), "", 401, "UNAUTHORIZED"},
		"wrong token":     {"GET", SiteCORSPath(site.ID), token[:len(token)-1] + "X", 401, "UNAUTHORIZED"},
		"unknown site":    {"GET", SiteCORSPath("6f1c2a8e-0000-4000-8000-000000000000"), token, 404, "NOT_FOUND"},
		"not a uuid":      {"GET", SiteCORSPath("bayside"), token, 404, "NOT_FOUND"},
		"braced uuid":     {"GET", SiteCORSPath("{" + site.ID + "}"), token, 404, "NOT_FOUND"},
		"uuid, no dashes": {"GET", SiteCORSPath(strings.ReplaceAll(site.ID, "-", "")), token, 404, "NOT_FOUND"},
		"POST":            {"POST", SiteCORSPath(site.ID), token, 405, "METHOD_NOT_ALLOWED"},
	} {
		t.Run(name, func(t *testing.T) {
			resp, body := e.get(t, tc.method, tc.path, tc.token)
			var env struct {
				Error struct{ Code string } `json:"error"`
			}
			if err := json.Unmarshal([]byte(body), &env); resp.StatusCode != tc.status || err != nil || env.Error.Code != tc.code {
				t.Fatalf("%d %s, want %d %s", resp.StatusCode, body, tc.status, tc.code)
			}
			if strings.Contains(body, "bayside.example") {
				t.Errorf("the refusal shows the origins: %s", body)
			}
		})
	}
}
