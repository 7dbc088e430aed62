package introspect

import (
	"context"
	"encoding/hex"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	json "github.com/goccy/go-json"

	"github.com/listgate/listgate/origin/api"
	"github.com/listgate/listgate/origin/store"
	"github.com/listgate/listgate/origin/store/storetest"
	"github.com/listgate/listgate/pkg/apikey"
	"github.com/listgate/listgate/pkg/devdb/devdbtest"
	"github.com/listgate/listgate/pkg/internalapi"
	"github.com/listgate/listgate/pkg/model"
)

func TestMain(m *testing.M) { os.Exit(devdbtest.RunTests(m)) }

const token = "0123456789abcdef0123456789abcdef-introspect"

type env struct {
	db *store.DB
	h  http.Handler
}

func newEnv(tb testing.TB) *env {
	tb.Helper()
	db := storetest.NewDB(tb)
	srv := api.New(api.Config{Ready: db.Ping, Unavailable: store.IsUnavailable, Metrics: db.WritePoolMetrics,
		InternalToken: token, Log: slog.New(slog.DiscardHandler),
		Mounts: []api.Mounter{New(Config{DB: db})}})
	return &env{db: db, h: srv.Handler()}
}

// post sends body to the endpoint with the internal token (unless hdr says
// otherwise) and returns the response and its body.
func (e *env) post(tb testing.TB, body string, hdr map[string]string) (*http.Response, []byte) {
	tb.Helper()
	req := httptest.NewRequest("POST", Path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(api.HeaderInternalToken, token)
	for k, v := range hdr {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	rec := httptest.NewRecorder()
	e.h.ServeHTTP(rec, req)
	resp := rec.Result()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

func hashBody(secret string) string {
	h := apikey.Hash(secret)
	return `{"key_hash": "` + hex.EncodeToString(h[:]) + `"}`
}

func mustSiteKey(tb testing.TB, db *store.DB, plan model.Plan, scopes apikey.Scope) (store.Site, store.Key, string) {
	tb.Helper()
	ctx := context.Background()
	s, err := db.CreateSite(ctx, "Introspect Realty", plan, "")
	if err != nil {
		tb.Fatal(err)
	}
	k, secret, err := db.CreateKey(ctx, store.NewKey{SiteID: s.ID, Name: "k", Scopes: scopes, Source: store.SourceCLI})
	if err != nil {
		tb.Fatal(err)
	}
	return s, k, secret
}

func TestIntrospect(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	starter, starterKey, starterSecret := mustSiteKey(t, e.db, model.Starter, apikey.ListingsRead|apikey.LeadsWrite)
	pro, proKey, proSecret := mustSiteKey(t, e.db, model.Professional, apikey.ReadOnly)
	ent, entKey, entSecret := mustSiteKey(t, e.db, model.Enterprise, apikey.ReadOnly|apikey.LeadsWrite)
	_, revokedKey, revokedSecret := mustSiteKey(t, e.db, model.Starter, apikey.ListingsRead)
	if _, err := e.db.RevokeKey(ctx, revokedKey.ID); err != nil {
		t.Fatal(err)
	}
	intp := func(n int) *int { return &n }
	starterHash := apikey.Hash(starterSecret)
	upper := `{"key_hash": "` + strings.ToUpper(hex.EncodeToString(starterHash[:])) + `"}`
	starterAnswer := internalapi.Introspection{Active: true, KeyID: starterKey.ID, SiteID: starter.ID,
		Scopes: []string{"listings:read", "leads:write"}, Plan: model.Starter, Limit: intp(60), TTLSeconds: 30, Timezone: "Australia/Sydney"}

	for name, tc := range map[string]struct {
		body string
		want internalapi.Introspection
	}{
		"starter key": {hashBody(starterSecret), starterAnswer},
		"professional key": {hashBody(proSecret), internalapi.Introspection{Active: true, KeyID: proKey.ID, SiteID: pro.ID,
			Scopes: []string{"listings:read", "agents:read", "stats:read"}, Plan: model.Professional, Limit: intp(600), TTLSeconds: 30, Timezone: "Australia/Sydney"}},
		"enterprise key, unlimited": {hashBody(entSecret), internalapi.Introspection{Active: true, KeyID: entKey.ID, SiteID: ent.ID,
			Scopes: []string{"listings:read", "agents:read", "stats:read", "leads:write"}, Plan: model.Enterprise, Limit: intp(0), TTLSeconds: 30, Timezone: "Australia/Sydney"}},
		"upper-case hex": {upper, starterAnswer},
		"revoked key":    {hashBody(revokedSecret), internalapi.Introspection{Active: false}},
		"unknown hash":   {`{"key_hash": "` + strings.Repeat("ab", 32) + `"}`, internalapi.Introspection{Active: false}},
	} {
		t.Run(name, func(t *testing.T) {
			resp, body := e.post(t, tc.body, nil)
			if resp.StatusCode != 200 {
				t.Fatalf("status %d: %s", resp.StatusCode, body)
			}
			if cc := resp.Header.Get("Cache-Control"); cc != "no-store" {
				t.Errorf("Cache-Control %q", cc)
			}
			want, _ := json.Marshal(tc.want)
			if got := strings.TrimSpace(string(body)); got != string(want) {
				t.Errorf("body %s\nwant %s", got, want)
			}
			if !tc.want.Active && strings.TrimSpace(string(body)) != `{"active":false}` {
				t.Errorf("negative answer %s carries more than active", body)
			}
		})
	}
}

func TestIntrospectLimitFollowsPlan(t *testing.T) {
	e := newEnv(t)
	site, _, secret := mustSiteKey(t, e.db, model.Starter, apikey.ListingsRead)
	for _, plan := range []model.Plan{model.Professional, model.Enterprise, model.Starter} {
		if err := e.db.SetPlan(context.Background(), site.ID, plan); err != nil {
			t.Fatal(err)
		}
		_, body := e.post(t, hashBody(secret), nil)
		var got internalapi.Introspection
		if err := json.Unmarshal(body, &got); err != nil || got.Limit == nil {
			t.Fatalf("%s: %s (%v)", plan, body, err)
		}
		if got.Plan != plan || *got.Limit != plan.Limit() {
			t.Errorf("after set-plan %s: plan %s limit %d, want limit %d", plan, got.Plan, *got.Limit, plan.Limit())
		}
	}
}

func TestIntrospectRejects(t *testing.T) {
	e := newEnv(t)
	_, _, secret := mustSiteKey(t, e.db, model.Starter, apikey.ListingsRead)
	good := hashBody(secret)
	h := apikey.Hash(secret)
	hexHash := hex.EncodeToString(h[:])
	for name, tc := range map[string]struct {
		body   string
		hdr    map[string]string
		status int
		code   string
		field  string // the details key of a VALIDATION_ERROR
	}{
		"no token":          {good, map[string]string{api.HeaderInternalToken: ""}, 401, "UNAUTHORIZED", ""},
		"wrong token":       {good, map[string]string{api.HeaderInternalToken: token[:len(token)-1] + "X"}, 401, "UNAUTHORIZED", ""},
		"not JSON":          {`key_hash=` + hexHash, nil, 422, "VALIDATION_ERROR", "body"},
		"empty body":        {``, nil, 422, "VALIDATION_ERROR", "body"},
		"array":             {`["` + hexHash + `"]`, nil, 422, "VALIDATION_ERROR", "body"},
		"missing key_hash":  {`{}`, nil, 422, "VALIDATION_ERROR", "key_hash"},
		"null key_hash":     {`{"key_hash": null}`, nil, 422, "VALIDATION_ERROR", "key_hash"},
		"number key_hash":   {`{"key_hash": 12}`, nil, 422, "VALIDATION_ERROR", "key_hash"},
		"short hash":        {`{"key_hash": "` + hexHash[:62] + `"}`, nil, 422, "VALIDATION_ERROR", "key_hash"},
		"long hash":         {`{"key_hash": "` + hexHash + `00"}`, nil, 422, "VALIDATION_ERROR", "key_hash"},
		"not hex":           {`{"key_hash": "` + hexHash[:63] + `g"}`, nil, 422, "VALIDATION_ERROR", "key_hash"},
		"the key itself":    {`{"key_hash": "` + secret + `"}`, nil, 422, "VALIDATION_ERROR", "key_hash"},
		"unknown field":     {`{"key_hash": "` + hexHash + `", "key": "x"}`, nil, 422, "VALIDATION_ERROR", "body"},
		"trailing data":     {good + `{}`, nil, 422, "VALIDATION_ERROR", "body"},
		"trailing garbage":  {good + `x`, nil, 422, "VALIDATION_ERROR", "body"},
		"body over 4 KiB":   {`{"key_hash": "` + strings.Repeat("a", 5000) + `"}`, nil, 413, "PAYLOAD_TOO_LARGE", ""},
		"identity, no auth": {good, map[string]string{api.HeaderInternalToken: "", api.HeaderSite: "x", api.HeaderKeyID: "y"}, 401, "UNAUTHORIZED", ""},
	} {
		t.Run(name, func(t *testing.T) {
			resp, body := e.post(t, tc.body, tc.hdr)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, body)
			}
			var env struct {
				Error struct {
					Code    string            `json:"code"`
					Details map[string]string `json:"details"`
				} `json:"error"`
			}
			if err := json.Unmarshal(body, &env); err != nil || env.Error.Code != tc.code {
				t.Fatalf("body %s, want code %s", body, tc.code)
			}
			if tc.field != "" && env.Error.Details[tc.field] == "" {
				t.Errorf("details %v, want a message for %s", env.Error.Details, tc.field)
			}
			if strings.Contains(string(body), secret) {
				t.Error("the response echoes the key")
			}
		})
	}

	t.Run("GET", func(t *testing.T) {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("GET", Path, nil)
		req.Header.Set(api.HeaderInternalToken, token)
		e.h.ServeHTTP(rec, req)
		if rec.Code != 405 || rec.Header().Get("Allow") != "POST" {
			t.Fatalf("GET = %d Allow %q", rec.Code, rec.Header().Get("Allow"))
		}
	})
}

func TestIntrospectRecordsUseAtMostOnceAMinute(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	_, key, secret := mustSiteKey(t, e.db, model.Starter, apikey.ListingsRead)
	lastUsed := func() *time.Time {
		t.Helper()
		var at *time.Time
		if err := e.db.Pool.QueryRow(ctx, `SELECT last_used_at FROM api_keys WHERE id = $1`, key.ID).Scan(&at); err != nil {
			t.Fatal(err)
		}
		return at
	}
	if lastUsed() != nil {
		t.Fatal("new key already used")
	}
	introspect := func() {
		t.Helper()
		if resp, body := e.post(t, hashBody(secret), nil); resp.StatusCode != 200 {
			t.Fatalf("status %d: %s", resp.StatusCode, body)
		}
	}
	introspect()
	first := lastUsed()
	if first == nil {
		t.Fatal("last_used_at not written")
	}
	for i := 0; i < 5; i++ {
		introspect()
	}
	if again := lastUsed(); !again.Equal(*first) {
		t.Fatalf("last_used_at moved within the minute: %s → %s", first, again)
	}
	// A minute later it moves again.
	if _, err := e.db.Pool.Exec(ctx, `UPDATE api_keys SET last_used_at = now() - interval '61 seconds' WHERE id = $1`, key.ID); err != nil {
		t.Fatal(err)
	}
	old := lastUsed()
	introspect()
	if now := lastUsed(); !now.After(*old) {
		t.Fatalf("last_used_at not written after a minute: %s → %s", old, now)
	}
	// A revoked key is not recorded as used.
	if _, err := e.db.RevokeKey(ctx, key.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.db.Pool.Exec(ctx, `UPDATE api_keys SET last_used_at = NULL WHERE id = $1`, key.ID); err != nil {
		t.Fatal(err)
	}
	introspect()
	if at := lastUsed(); at != nil {
		t.Fatalf("revoked key's last_used_at written: %s", at)
	}
}

// The answer carries the site's allowed browser origins, as set, and
// follows a change; none: the field is left out.
func TestIntrospectCORSOrigins(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	site, _, secret := mustSiteKey(t, e.db, model.Starter, apikey.ListingsRead)
	_, _, otherSecret := mustSiteKey(t, e.db, model.Starter, apikey.ListingsRead)
	answer := func(secret string) (internalapi.Introspection, string) {
		t.Helper()
		resp, body := e.post(t, hashBody(secret), nil)
		var got internalapi.Introspection
		if err := json.Unmarshal(body, &got); resp.StatusCode != 200 || err != nil {
			t.Fatalf("status %d: %s (%v)", resp.StatusCode, body, err)
		}
		return got, string(body)
	}
	if got, body := answer(secret); got.CORSOrigins != nil || strings.Contains(body, "cors_origins") {
		t.Fatalf("no origins: %s", body)
	}
	if _, err := e.db.SetCORS(ctx, site.ID, []string{"https://Bayside.example", "http://localhost:3000"}); err != nil {
		t.Fatal(err)
	}
	got, body := answer(secret)
	if strings.Join(got.CORSOrigins, " ") != "https://bayside.example http://localhost:3000" ||
		!strings.Contains(body, `"cors_origins":["https://bayside.example","http://localhost:3000"]`) {
		t.Fatalf("with origins: %s", body)
	}
	if other, body := answer(otherSecret); other.CORSOrigins != nil {
		t.Fatalf("another site's key carries the origins: %s", body)
	}
	if _, err := e.db.SetCORS(ctx, site.ID, nil); err != nil {
		t.Fatal(err)
	}
	if got, body := answer(secret); got.CORSOrigins != nil {
		t.Fatalf("after clearing: %s", body)
	}
}
