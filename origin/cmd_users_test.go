package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	neturl "net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/listgate/listgate/origin/api"
	"github.com/listgate/listgate/origin/store"
	"github.com/listgate/listgate/origin/store/storetest"
	"github.com/listgate/listgate/pkg/config"
)

// runStdin runs one command line with stdin.
func (c *cli) runStdin(stdin string, args ...string) (int, string, string) {
	c.tb.Helper()
	var out, errOut bytes.Buffer
	e := &env{stdin: strings.NewReader(stdin), stdout: &out, stderr: &errOut, getenv: func(k string) (string, bool) {
		v, ok := c.env[k]
		return v, ok
	}}
	return run(context.Background(), args, e), out.String(), errOut.String()
}

func TestUsersCreateCommand(t *testing.T) {
	url := storetest.URL(t)
	c := newCLI(t, url)
	var site struct{ ID string }
	c.mustJSON(&site, "sites", "create", "--name", "Bayside Realty", "--plan", "starter", "--json")

	code, out, errOut := c.runStdin("a long password\n", "users", "create", "--email", "Sam@Bayside.example",
		"--password-stdin", "--account", "Bayside", "--site", site.ID, "--json")
	if code != 0 || !strings.Contains(out, `"email":"sam@bayside.example"`) || !strings.Contains(out, `"account_name":"Bayside"`) {
		t.Fatalf("create: %d %q %q", code, out, errOut)
	}
	if strings.Contains(out, "a long password") {
		t.Fatal("the password is printed")
	}
	db, err := store.Open(context.Background(), url, store.Options{MaxConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	u, err := db.UserByEmail(context.Background(), "SAM@bayside.example")
	if err != nil || !strings.HasPrefix(u.PasswordHash, "$2") || u.AccountName != "Bayside" {
		t.Fatalf("user %+v %v", u, err)
	}
	if sites, _ := db.AccountSites(context.Background(), u.AccountID); len(sites) != 1 || sites[0].ID != site.ID {
		t.Fatalf("account sites %+v", sites)
	}

	for _, tc := range []struct {
		name, stdin string
		args        []string
		code        int
		errOut      string
	}{
		{"no --password-stdin", "", []string{"--email", "x@y.example"}, 2, "--password-stdin"},
		{"no --email", "a long password\n", []string{"--password-stdin"}, 2, "--email"},
		{"short password", "short\n", []string{"--email", "x@y.example", "--password-stdin"}, 1, "password"},
		{"empty stdin", "", []string{"--email", "x@y.example", "--password-stdin"}, 1, "no password"},
		{"taken e-mail", "a long password\n", []string{"--email", "sam@bayside.example", "--password-stdin"}, 1, "exists"},
		{"another account's site", "a long password\n", []string{"--email", "x@y.example", "--password-stdin", "--site", site.ID}, 1, "another account"},
		{"unknown site", "a long password\n", []string{"--email", "x@y.example", "--password-stdin", "--site", "nope"}, 1, "site not found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := c.runStdin(tc.stdin, append([]string{"users", "create"}, tc.args...)...)
			if code != tc.code || !strings.Contains(errOut, tc.errOut) {
				t.Fatalf("exit %d %q; want %d and %q", code, errOut, tc.code, tc.errOut)
			}
		})
	}
}

// A site made with the CLI is in no dashboard until users grant gives it
// to a user's account; users revoke takes it away again. Checked by
// signing in to the dashboard over HTTP.
func TestUsersGrantAndRevokeCommands(t *testing.T) {
	url := storetest.URL(t)
	c := newCLI(t, url)
	var site, other struct{ ID string }
	c.mustJSON(&site, "sites", "create", "--name", "Granted Realty", "--plan", "starter", "--json")
	// The text output says how to give the site to someone.
	if code, out, _ := c.run("sites", "create", "--name", "Text Realty", "--plan", "starter"); code != 0 || !strings.Contains(out, "origin users grant --email EMAIL --site ") {
		t.Fatalf("sites create: %d %q", code, out)
	}
	c.mustJSON(&other, "sites", "create", "--name", "Other Realty", "--plan", "starter", "--json")
	const password = "a long password"
	if code, _, errOut := c.runStdin(password+"\n", "users", "create", "--email", "ann@granted.example", "--password-stdin"); code != 0 {
		t.Fatalf("users create: %d %s", code, errOut)
	}
	if code, _, errOut := c.runStdin(password+"\n", "users", "create", "--email", "bob@other.example", "--password-stdin",
		"--account", "Other", "--site", other.ID); code != 0 {
		t.Fatalf("users create: %d %s", code, errOut)
	}

	db, err := store.Open(context.Background(), url, store.Options{MaxConns: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	dash := newTestDashboard(t, db)
	ann := dash.signIn(t, "ann@granted.example", password)
	if code, body := ann.get(t, "/dashboard/sites/"+site.ID); code != http.StatusNotFound || strings.Contains(body, "Granted Realty") {
		t.Fatalf("before the grant, the site's page: %d", code)
	}

	var granted struct {
		Email   string
		SiteID  string `json:"site_id"`
		Access  bool
		Changed bool
	}
	c.mustJSON(&granted, "users", "grant", "--email", "ANN@granted.example", "--site", site.ID, "--json")
	if granted.SiteID != site.ID || !granted.Access || !granted.Changed {
		t.Fatalf("grant: %+v", granted)
	}
	if code, body := ann.get(t, "/dashboard"); code != http.StatusOK || !strings.Contains(body, "Granted Realty") || strings.Contains(body, "Other Realty") {
		t.Fatalf("after the grant, the dashboard: %d\n%s", code, body)
	}
	if code, body := ann.get(t, "/dashboard/sites/"+site.ID); code != http.StatusOK || !strings.Contains(body, "Granted Realty") {
		t.Fatalf("after the grant, the site's page: %d", code)
	}
	// Granting again changes nothing; the text output says so.
	if code, out, _ := c.run("users", "grant", "--site", site.ID, "--email", "ann@granted.example"); code != 0 || !strings.Contains(out, "already") {
		t.Fatalf("grant again: %d %q", code, out)
	}
	code, out, _ := c.run("users", "list")
	if code != 0 || !strings.Contains(out, "ann@granted.example") || !strings.Contains(out, site.ID) {
		t.Fatalf("users list: %d %q", code, out)
	}

	for _, tc := range []struct {
		args   []string
		code   int
		errOut string
	}{
		{[]string{"grant", "--email", "ann@granted.example", "--site", other.ID}, 1, "belongs to another account"},
		{[]string{"grant", "--email", "nobody@granted.example", "--site", site.ID}, 1, "create one with origin users create"},
		{[]string{"grant", "--email", "ann@granted.example", "--site", "nope"}, 1, "site not found"},
		{[]string{"grant", "--email", "ann@granted.example"}, 2, "users grant needs --site"},
		{[]string{"revoke", "--email", "ann@granted.example", "--site", other.ID}, 1, "is not one of the sites of ann@granted.example's account"},
		{[]string{"revoke", "--site", site.ID}, 2, "users revoke needs --email"},
	} {
		code, _, errOut := c.run(append([]string{"users"}, tc.args...)...)
		if code != tc.code || !strings.Contains(errOut, tc.errOut) {
			t.Errorf("users %s: exit %d %q; want %d and %q", strings.Join(tc.args, " "), code, errOut, tc.code, tc.errOut)
		}
	}
	// Bob's site stayed his.
	bob := dash.signIn(t, "bob@other.example", password)
	if code, _ := bob.get(t, "/dashboard/sites/"+other.ID); code != http.StatusOK {
		t.Fatalf("bob's site: %d", code)
	}

	if code, out, errOut := c.run("users", "revoke", "--email", "ann@granted.example", "--site", site.ID); code != 0 || !strings.Contains(out, "no longer") {
		t.Fatalf("revoke: %d %q %q", code, out, errOut)
	}
	// The signed-in session loses the site at its next request.
	if code, _ := ann.get(t, "/dashboard/sites/"+site.ID); code != http.StatusNotFound {
		t.Fatalf("after the revoke, the site's page: %d", code)
	}
	if code, body := ann.get(t, "/dashboard"); code != http.StatusOK || strings.Contains(body, "Granted Realty") {
		t.Fatalf("after the revoke, the dashboard lists the site: %d", code)
	}
}

// testDashboard is the dashboard (and pairing routes) of db on a loopback
// HTTP server.
type testDashboard struct{ url string }

func newTestDashboard(tb testing.TB, db *store.DB) *testDashboard {
	tb.Helper()
	quiet := slog.New(slog.DiscardHandler)
	routes, dash, err := newPairingAndDashboard(db, config.Origin{PublicURL: "http://127.0.0.1"}, quiet)
	if err != nil {
		tb.Fatal(err)
	}
	srv := httptest.NewServer(api.New(api.Config{Ready: db.Ping, Unavailable: store.IsUnavailable, Log: quiet,
		Mounts: []api.Mounter{routes, dash}}).Handler())
	tb.Cleanup(srv.Close)
	return &testDashboard{url: srv.URL}
}

// dashboardClient is a signed-in browser: a cookie jar that follows
// redirects.
type dashboardClient struct {
	c   *http.Client
	url string
}

var csrfField = regexp.MustCompile(`name="csrf_token" value="([^"]+)"`)

func (d *testDashboard) signIn(tb testing.TB, email, password string) *dashboardClient {
	tb.Helper()
	jar, _ := cookiejar.New(nil)
	b := &dashboardClient{c: &http.Client{Jar: jar}, url: d.url}
	code, body := b.get(tb, "/dashboard/login")
	m := csrfField.FindStringSubmatch(body)
	if code != http.StatusOK || m == nil {
		tb.Fatalf("sign-in page: %d", code)
	}
	resp, err := b.c.PostForm(d.url+"/dashboard/login", neturl.Values{"csrf_token": {m[1]}, "email": {email}, "password": {password}})
	if err != nil {
		tb.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(page), "Sign out") {
		tb.Fatalf("sign in as %s: %d", email, resp.StatusCode)
	}
	return b
}

func (b *dashboardClient) get(tb testing.TB, path string) (int, string) {
	tb.Helper()
	resp, err := b.c.Get(b.url + path)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatal(err)
	}
	return resp.StatusCode, string(body)
}
