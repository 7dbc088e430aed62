package main

import (
	"context"
	"crypto/sha256"
	"strings"
	"testing"
	"time"

	json "github.com/goccy/go-json"
	"github.com/jackc/pgx/v5"

	"github.com/listgate/listgate/origin/store"
	"github.com/listgate/listgate/origin/store/storetest"
)

func TestOAuthClientsCommands(t *testing.T) {
	ctx := context.Background()
	url := storetest.URL(t)
	c := newCLI(t, url)
	var site struct{ ID string }
	c.mustJSON(&site, "sites", "create", "--name", "Harbour Realty", "--plan", "professional", "--json")

	var client struct {
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
		SiteID       string `json:"site_id"`
		Name         string `json:"name"`
	}
	code, out, errOut := c.run("oauth-clients", "create", "--site", site.ID, "--name", "Agency CRM", "--json")
	if code != 0 || !strings.Contains(errOut, "shown once") {
		t.Fatalf("create: exit %d, stderr %q", code, errOut)
	}
	if err := json.Unmarshal([]byte(out), &client); err != nil {
		t.Fatalf("create printed %q: %v", out, err)
	}
	var other struct {
		ClientID string `json:"client_id"`
	}
	c.mustJSON(&other, "oauth-clients", "create", "--site", site.ID, "--name", "Backup CRM", "--json")
	if !strings.HasPrefix(client.ClientID, "lgc_") || len(client.ClientID) != 28 ||
		!strings.HasPrefix(client.ClientSecret, "lgs_") || len(client.ClientSecret) != 44 ||
		client.SiteID != site.ID || client.Name != "Agency CRM" {
		t.Fatalf("created client %+v", client)
	}
	if strings.Contains(errOut, "lgs_") || strings.Count(out, "lgs_") != 1 {
		t.Errorf("the secret is printed other than once on stdout: %q / %q", out, errOut)
	}

	// The secret is stored only as its hash.
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var inClear, hashed bool
	conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM oauth_clients c WHERE position($1 in c::text) > 0)`,
		client.ClientSecret).Scan(&inClear)
	sum := sha256.Sum256([]byte(client.ClientSecret))
	conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM oauth_clients WHERE client_id = $1 AND secret_hash = $2)`,
		client.ClientID, sum[:]).Scan(&hashed)
	if inClear || !hashed {
		t.Fatalf("secret in clear %v, stored as its SHA-256 %v", inClear, hashed)
	}

	var list struct {
		Clients []map[string]any `json:"clients"`
	}
	c.mustJSON(&list, "oauth-clients", "list", "--site", site.ID, "--json")
	if len(list.Clients) != 2 || list.Clients[0]["revoked_at"] != nil {
		t.Fatalf("list %+v", list)
	}
	for _, cl := range list.Clients {
		if _, ok := cl["client_secret"]; ok {
			t.Errorf("list shows a secret field: %v", cl)
		}
	}
	if code, out, _ := c.run("oauth-clients", "list", "--site", site.ID); code != 0 ||
		!strings.Contains(out, client.ClientID) || strings.Contains(out, "lgs_") {
		t.Fatalf("text list: exit %d %q", code, out)
	}

	// Revoking deletes the client's tokens.
	db, err := store.Open(ctx, url, store.Options{MaxConns: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tok := store.OAuthToken{Hash: sha256.Sum256([]byte("lgt_x")), ClientID: client.ClientID, Scope: "feeds:write",
		ExpiresAt: time.Now().Add(time.Hour)}
	if err := db.CreateOAuthToken(ctx, &tok); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := c.run("oauth-clients", "revoke", client.ClientID); code != 0 || !strings.Contains(out, "revoked") {
		t.Fatalf("revoke: exit %d %q %q", code, out, errOut)
	}
	var tokens int
	conn.QueryRow(ctx, `SELECT count(*) FROM oauth_tokens WHERE client_id = $1`, client.ClientID).Scan(&tokens)
	if tokens != 0 {
		t.Errorf("%d tokens left after revoke", tokens)
	}
	c.mustJSON(&list, "oauth-clients", "list", "--site", site.ID, "--json")
	revoked := 0
	for _, cl := range list.Clients {
		if cl["revoked_at"] != nil {
			revoked++
			if cl["client_id"] != client.ClientID {
				t.Errorf("revoked the wrong client: %v", cl)
			}
		}
	}
	if revoked != 1 {
		t.Errorf("%d clients revoked, want 1", revoked)
	}
	if code, _, errOut := c.run("oauth-clients", "revoke", client.ClientID); code != 0 {
		t.Errorf("revoking again: exit %d %q", code, errOut)
	}

	for name, tc := range map[string]struct {
		args []string
		code int
		want string
	}{
		"missing name":   {[]string{"oauth-clients", "create", "--site", site.ID}, 2, "--name"},
		"missing site":   {[]string{"oauth-clients", "list"}, 2, "--site"},
		"unknown site":   {[]string{"oauth-clients", "create", "--site", "6f1c2a8e-0000-4000-8000-000000000000", "--name", "x"}, 1, "site not found"},
		"malformed site": {[]string{"oauth-clients", "list", "--site", "nope"}, 1, "site not found"},
		"blank name":     {[]string{"oauth-clients", "create", "--site", site.ID, "--name", "  "}, 2, "--name"},
		"revoke unknown": {[]string{"oauth-clients", "revoke", "lgc_000000000000000000000000"}, 1, "client not found"},
		"revoke no arg":  {[]string{"oauth-clients", "revoke"}, 2, "takes 1"},
		"unknown sub":    {[]string{"oauth-clients", "rotate"}, 2, "unknown command"},
	} {
		t.Run(name, func(t *testing.T) {
			code, _, errOut := c.run(tc.args...)
			if code != tc.code || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, stderr %q; want exit %d mentioning %q", code, errOut, tc.code, tc.want)
			}
		})
	}
}
