package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/jackc/pgx/v5"

	"github.com/listgate/listgate/origin/store/storetest"
	"github.com/listgate/listgate/pkg/apikey"
	"github.com/listgate/listgate/pkg/devdb/devdbtest"
)

func TestMain(m *testing.M) { os.Exit(devdbtest.RunTests(m)) }

// cli runs origin commands in-process against one database.
type cli struct {
	tb  testing.TB
	env map[string]string
}

func newCLI(tb testing.TB, dbURL string) *cli {
	return &cli{tb: tb, env: map[string]string{"LISTGATE_DATABASE_URL": dbURL}}
}

// run returns the exit status, stdout and stderr of one command line.
func (c *cli) run(args ...string) (int, string, string) {
	c.tb.Helper()
	var out, errOut bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errOut, getenv: func(k string) (string, bool) {
		v, ok := c.env[k]
		return v, ok
	}}
	code := run(context.Background(), args, e)
	return code, out.String(), errOut.String()
}

// mustJSON runs a command that must succeed and decodes its --json output.
func (c *cli) mustJSON(dst any, args ...string) {
	c.tb.Helper()
	code, out, errOut := c.run(args...)
	if code != 0 {
		c.tb.Fatalf("origin %s: exit %d: %s", strings.Join(args, " "), code, errOut)
	}
	if err := json.Unmarshal([]byte(out), dst); err != nil {
		c.tb.Fatalf("origin %s: output %q: %v", strings.Join(args, " "), out, err)
	}
}

func TestMigrateCommand(t *testing.T) {
	c := newCLI(t, devdbtest.NewDatabase(t, nil))
	code, out, errOut := c.run("migrate")
	if code != 0 || !strings.Contains(out, "applied 0001_init") {
		t.Fatalf("first migrate: exit %d, %q, %q", code, out, errOut)
	}
	code, out, _ = c.run("migrate")
	if code != 0 || strings.Contains(out, "applied") || !strings.Contains(out, "schema at version") {
		t.Fatalf("second migrate: exit %d, %q", code, out)
	}
	delete(c.env, "LISTGATE_DATABASE_URL")
	if code, _, errOut := c.run("migrate"); code != 1 || !strings.Contains(errOut, "LISTGATE_DATABASE_URL") {
		t.Fatalf("migrate without a database: exit %d, %q", code, errOut)
	}
}

func TestSitesAndKeysCommands(t *testing.T) {
	url := storetest.URL(t)
	c := newCLI(t, url)

	var site struct{ ID, Name, Plan string }
	c.mustJSON(&site, "sites", "create", "--name", "Bayside Realty", "--plan", "starter", "--json")
	if site.ID == "" || site.Name != "Bayside Realty" || site.Plan != "starter" {
		t.Fatalf("site %+v", site)
	}
	if code, out, _ := c.run("sites", "set-plan", site.ID, "enterprise"); code != 0 || !strings.Contains(out, "enterprise") {
		t.Fatalf("set-plan: %d %q", code, out)
	}
	var sites struct{ Sites []struct{ ID, Plan string } }
	c.mustJSON(&sites, "sites", "list", "--json")
	if len(sites.Sites) != 1 || sites.Sites[0].Plan != "enterprise" {
		t.Fatalf("sites list %+v", sites)
	}

	var key struct {
		ID, Key string
		Scopes  []string
	}
	c.mustJSON(&key, "keys", "create", "--site", site.ID, "--name", "WordPress", "--scopes", "listings:read, leads:write", "--json")
	if err := apikey.Check(key.Key); err != nil {
		t.Fatalf("printed key %q: %v", key.Key, err)
	}
	if strings.Join(key.Scopes, ",") != "listings:read,leads:write" {
		t.Errorf("scopes %v", key.Scopes)
	}
	// The secret is printed once and never stored in clear.
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var inClear bool
	conn.QueryRow(context.Background(), `SELECT EXISTS (SELECT 1 FROM api_keys k WHERE position($1 in k::text) > 0)`, key.Key).Scan(&inClear)
	if inClear {
		t.Fatal("key stored in clear")
	}
	var list struct {
		Keys []struct {
			ID        string
			RevokedAt *string `json:"revoked_at"`
			Key       string
		}
	}
	c.mustJSON(&list, "keys", "list", "--site", site.ID, "--json")
	if len(list.Keys) != 1 || list.Keys[0].ID != key.ID || list.Keys[0].RevokedAt != nil || list.Keys[0].Key != "" {
		t.Fatalf("keys list %+v", list)
	}
	if code, out, _ := c.run("keys", "list", "--site", site.ID); code != 0 || strings.Contains(out, key.Key) || !strings.Contains(out, key.Key[36:]) {
		t.Fatalf("keys list shows the secret or not the hint: %q", out)
	}
	if code, _, errOut := c.run("keys", "revoke", key.ID); code != 0 {
		t.Fatalf("revoke: %d %s", code, errOut)
	}
	c.mustJSON(&list, "keys", "list", "--site", site.ID, "--json")
	if list.Keys[0].RevokedAt == nil {
		t.Fatal("key not revoked")
	}

	for name, tc := range map[string]struct {
		args []string
		code int
		want string
	}{
		"unknown scope":   {[]string{"keys", "create", "--site", site.ID, "--name", "x", "--scopes", "admin"}, 2, "admin"},
		"missing name":    {[]string{"keys", "create", "--site", site.ID, "--scopes", "leads:write"}, 2, "--name"},
		"unknown site":    {[]string{"keys", "create", "--site", "6f1c2a8e-0000-4000-8000-000000000000", "--name", "x", "--scopes", "leads:write"}, 1, "site not found"},
		"revoke unknown":  {[]string{"keys", "revoke", "6f1c2a8e-0000-4000-8000-000000000000"}, 1, "key not found"},
		"bad plan":        {[]string{"sites", "create", "--name", "x", "--plan", "gold"}, 1, "unknown plan"},
		"set-plan args":   {[]string{"sites", "set-plan", site.ID}, 2, "takes 2"},
		"unknown command": {[]string{"keys", "rotate"}, 2, "unknown command"},
	} {
		t.Run(name, func(t *testing.T) {
			code, _, errOut := c.run(tc.args...)
			if code != tc.code || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, stderr %q; want exit %d mentioning %q", code, errOut, tc.code, tc.want)
			}
		})
	}
}

func TestSeedDemo(t *testing.T) {
	type key struct {
		Key    string
		Scopes []string
	}
	c := newCLI(t, storetest.URL(t))
	var d struct {
		Site     struct{ ID string }
		ReadKey  key `json:"read_key"`
		LeadKey  key `json:"lead_key"`
		Listings struct{ Created, Errors int }
	}
	c.mustJSON(&d, "seed", "demo", "--json")
	if d.Site.ID == "" || apikey.Check(d.ReadKey.Key) != nil || apikey.Check(d.LeadKey.Key) != nil {
		t.Fatalf("seed demo printed %+v", d)
	}
	if d.Listings.Created < DemoListings*9/10 || d.Listings.Errors != 0 {
		t.Errorf("demo listings %+v", d.Listings)
	}
	if strings.Join(d.ReadKey.Scopes, ",") != "listings:read,agents:read,stats:read" || strings.Join(d.LeadKey.Scopes, ",") != "leads:write" {
		t.Errorf("scopes %v / %v", d.ReadKey.Scopes, d.LeadKey.Scopes)
	}
}

func TestSitesSetCORSCommand(t *testing.T) {
	c := newCLI(t, storetest.URL(t))
	var site struct{ ID string }
	c.mustJSON(&site, "sites", "create", "--name", "Bayside Realty", "--plan", "starter", "--json")

	// Origins are normalized, repeats dropped; --json may come last.
	var got struct {
		SiteID  string   `json:"site_id"`
		Origins []string `json:"origins"`
	}
	c.mustJSON(&got, "sites", "set-cors", site.ID, "https://WWW.Bayside.example/", "http://localhost:3000",
		"https://www.bayside.example:443", "--json")
	if got.SiteID != site.ID || strings.Join(got.Origins, " ") != "https://www.bayside.example http://localhost:3000" {
		t.Fatalf("set-cors --json: %+v", got)
	}
	code, out, errOut := c.run("sites", "set-cors", site.ID, "https://bayside.example")
	if code != 0 || out != "site "+site.ID+" allows these browser origins:\n  https://bayside.example\n" {
		t.Fatalf("set-cors: %d %q %q", code, out, errOut)
	}
	var sites struct {
		Sites []struct {
			ID          string
			CORSOrigins []string `json:"cors_origins"`
		}
	}
	c.mustJSON(&sites, "sites", "list", "--json")
	if len(sites.Sites) != 1 || strings.Join(sites.Sites[0].CORSOrigins, " ") != "https://bayside.example" {
		t.Fatalf("sites list --json: %+v", sites)
	}
	if code, out, _ := c.run("sites", "list"); code != 0 || !strings.Contains(out, "BROWSER ORIGINS") ||
		!strings.Contains(out, "https://bayside.example") {
		t.Fatalf("sites list: %d %q", code, out)
	}

	// No origins clears the list.
	code, out, _ = c.run("sites", "set-cors", site.ID)
	if code != 0 || !strings.Contains(out, "allows no browser origins") {
		t.Fatalf("clear: %d %q", code, out)
	}
	c.mustJSON(&got, "sites", "set-cors", "--json", site.ID)
	if got.Origins == nil || len(got.Origins) != 0 {
		t.Fatalf("cleared --json: %+v", got)
	}
	if code, out, _ := c.run("sites", "list"); code != 0 || !strings.Contains(out, " -\n") {
		t.Fatalf("sites list without origins: %q", out)
	}

	for name, tc := range map[string]struct {
		args []string
		code int
		want string
	}{
		"no site":      {[]string{"sites", "set-cors"}, 2, "takes a SITE_ID"},
		"only --json":  {[]string{"sites", "set-cors", "--json"}, 2, "takes a SITE_ID"},
		"unknown flag": {[]string{"sites", "set-cors", site.ID, "--all"}, 2, "not defined: -all"},
		"wildcard":     {[]string{"sites", "set-cors", site.ID, "https://*.bayside.example"}, 1, "wildcards are not allowed"},
		"with a path":  {[]string{"sites", "set-cors", site.ID, "https://bayside.example/app"}, 1, "origins:"},
		"unknown site": {[]string{"sites", "set-cors", "6f1c2a8e-0000-4000-8000-000000000000", "https://a.example"}, 1, "site not found"},
		"bad site id":  {[]string{"sites", "set-cors", "bayside", "https://a.example"}, 1, "site not found"},
	} {
		t.Run(name, func(t *testing.T) {
			code, _, errOut := c.run(tc.args...)
			if code != tc.code || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, stderr %q; want exit %d mentioning %q", code, errOut, tc.code, tc.want)
			}
		})
	}
	c.mustJSON(&sites, "sites", "list", "--json")
	if len(sites.Sites[0].CORSOrigins) != 0 {
		t.Errorf("a refused set-cors changed the list: %q", sites.Sites[0].CORSOrigins)
	}
}

func TestSitesBeaconIDCommand(t *testing.T) {
	c := newCLI(t, storetest.URL(t))
	var site struct{ ID string }
	c.mustJSON(&site, "sites", "create", "--name", "Beacon Realty", "--plan", "starter", "--json")
	var got struct {
		SiteID   string `json:"site_id"`
		KeyID    string `json:"key_id"`
		BeaconID string `json:"beacon_id"`
	}
	c.mustJSON(&got, "sites", "beacon-id", site.ID, "--json")
	if got.SiteID != site.ID || !strings.HasPrefix(got.BeaconID, "lgk_") || got.KeyID == "" {
		t.Fatalf("beacon-id --json: %+v", got)
	}
	// The same id again, as plain text; --rotate makes another.
	if code, out, errOut := c.run("sites", "beacon-id", site.ID); code != 0 || out != got.BeaconID+"\n" {
		t.Fatalf("beacon-id: %d %q %q", code, out, errOut)
	}
	first := got.BeaconID
	c.mustJSON(&got, "sites", "beacon-id", "--rotate", site.ID, "--json")
	if got.BeaconID == first {
		t.Fatal("--rotate kept the id")
	}
	var keys struct {
		Keys []struct {
			Scopes    []string
			RevokedAt *string `json:"revoked_at"`
		}
	}
	c.mustJSON(&keys, "keys", "list", "--site", site.ID, "--json")
	if len(keys.Keys) != 2 || strings.Join(keys.Keys[0].Scopes, ",") != "views:write" {
		t.Fatalf("keys: %+v", keys)
	}
	if code, _, errOut := c.run("sites", "beacon-id"); code != 2 || !strings.Contains(errOut, "takes a SITE_ID") {
		t.Fatalf("no site: %d %q", code, errOut)
	}
	if code, _, errOut := c.run("keys", "create", "--site", site.ID, "--name", "x", "--scopes", "views:write,listings:read"); code == 0 {
		t.Fatalf("a views:write key that reads was created: %q", errOut)
	}
}
