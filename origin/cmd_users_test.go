package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/listgate/listgate/origin/store"
	"github.com/listgate/listgate/origin/store/storetest"
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
