package upload

import (
	"context"
	"crypto/rand"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/listgate/listgate/origin/store"
)

// An access token that is valid but lacks feeds:write is 403 FORBIDDEN
// naming the scope, on both feed routes, as the document says (checked by
// contract.Wrap). The token endpoint issues no other scope today, so the
// token is stored directly, as a token of a later scope would be.
func TestFeedsForbidATokenWithoutTheScope(t *testing.T) {
	h := newHarness(t, nil)
	site, good := h.mustSiteToken()
	id := h.mustUpload(good, mustSample(t, "openrealestate_residential_deleted.xml"), false)
	clientID, _ := mustClient(t, h.db, site.ID)
	other, err := newCredential(rand.Reader, TokenPrefix, TokenLen-len(TokenPrefix))
	if err != nil {
		t.Fatal(err)
	}
	rec := store.OAuthToken{Hash: hashSecret(other), ClientID: clientID, Scope: "feeds:read", ExpiresAt: time.Now().Add(time.Hour)}
	if err := h.db.CreateOAuthToken(context.Background(), &rec); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		req   *http.Request
		token string
		want  int
		code  string
	}{
		{"upload, feeds:write", h.newRequest("POST", "/v1/feeds", strings.NewReader("<propertyList/>")), good, 202, ""},
		{"upload, another scope", h.newRequest("POST", "/v1/feeds", strings.NewReader("<propertyList/>")), other, 403, "FORBIDDEN"},
		{"status, feeds:write", h.newRequest("GET", "/v1/feeds/"+id, nil), good, 200, ""},
		{"status, another scope", h.newRequest("GET", "/v1/feeds/"+id, nil), other, 403, "FORBIDDEN"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.req.Header.Set("Content-Type", "application/xml")
			tc.req.Header.Set("Authorization", "Bearer "+tc.token)
			r := h.do(tc.req)
			if r.status != tc.want {
				t.Fatalf("%d %s, want %d", r.status, r.body, tc.want)
			}
			if tc.code == "" {
				return
			}
			var env struct {
				Error struct{ Code, Message string } `json:"error"`
			}
			r.json(t, &env)
			if env.Error.Code != tc.code || !strings.Contains(env.Error.Message, ScopeFeedsWrite) {
				t.Errorf("%s, want code %s and a message naming %s", r.body, tc.code, ScopeFeedsWrite)
			}
		})
	}
}
