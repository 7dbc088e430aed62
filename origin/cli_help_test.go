package main

import (
	"strings"
	"testing"
)

// Every group of commands lists its commands when named alone (or with
// --help, or after help), rather than calling itself unknown.
func TestCommandGroupsListTheirCommands(t *testing.T) {
	c := newCLI(t, "")
	groups := map[string][]string{}
	for _, cmd := range commands {
		if g, sub, ok := strings.Cut(cmd.name, " "); ok {
			groups[g] = append(groups[g], sub)
		}
	}
	for _, want := range []string{"sites", "keys", "oauth-clients", "pairing", "import", "users", "webhooks", "seed"} {
		if groups[want] == nil {
			t.Errorf("no group %s", want)
		}
	}
	for g, subs := range groups {
		for _, args := range [][]string{{g}, {g, "--help"}, {"help", g}} {
			code, out, errOut := c.run(args...)
			if code != 0 || errOut != "" || !strings.HasPrefix(out, "usage: origin "+g+" COMMAND") {
				t.Errorf("origin %s: exit %d, %q, %q", strings.Join(args, " "), code, out, errOut)
				continue
			}
			for _, sub := range subs {
				if !strings.Contains(out, "\n  "+sub+" ") {
					t.Errorf("origin %s does not list %s:\n%s", strings.Join(args, " "), sub, out)
				}
			}
		}
	}
}

// Every command has its own --help: usage, what it does, its flags and an
// example, on stdout with exit status 0, without touching the database.
func TestEveryCommandHasHelp(t *testing.T) {
	c := newCLI(t, "postgres://nobody@127.0.0.1:1/none")
	for _, cmd := range commands {
		for _, args := range [][]string{
			append(strings.Fields(cmd.name), "--help"),
			append(strings.Fields(cmd.name), "-h"),
			append([]string{"help"}, strings.Fields(cmd.name)...),
		} {
			code, out, errOut := c.run(args...)
			line := strings.Join(args, " ")
			if code != 0 || errOut != "" {
				t.Errorf("origin %s: exit %d, stderr %q", line, code, errOut)
				continue
			}
			_, example, _ := strings.Cut(out, "\nexample:\n  ")
			if !strings.HasPrefix(out, "usage: origin "+cmd.name) || !strings.Contains(example, "origin "+cmd.name) {
				t.Errorf("origin %s: no usage line or example:\n%s", line, out)
			}
			for _, flagName := range strings.Fields(cmd.args) {
				name, ok := strings.CutPrefix(strings.Trim(flagName, "[]."), "--")
				if ok && !strings.Contains(out, "\n  --"+name) {
					t.Errorf("origin %s: the flags do not list --%s:\n%s", line, name, out)
				}
			}
		}
	}
	code, out, _ := c.run("--help")
	if code != 0 || !strings.Contains(out, "users grant --email EMAIL --site SITE_ID") || !strings.Contains(out, "Exit status: 0") {
		t.Errorf("origin --help: exit %d:\n%s", code, out)
	}
}

// A mistake in the command line is a short error on stderr and one line
// saying where the help is, exit status 2: not the whole usage.
func TestCommandLineMistakes(t *testing.T) {
	c := newCLI(t, "postgres://nobody@127.0.0.1:1/none")
	for _, tc := range []struct {
		args       []string
		msg, where string
	}{
		{[]string{"sites", "create", "--bogus"}, "sites create: flag provided but not defined: -bogus", "run 'origin sites create --help' for usage"},
		{[]string{"sites", "create", "--name", "A"}, "sites create needs --plan", "run 'origin sites create --help' for usage"},
		{[]string{"keys", "revoke"}, "keys revoke takes 1 argument(s), got 0: origin keys revoke KEY_ID", "run 'origin keys revoke --help' for usage"},
		{[]string{"keys", "revoke", "a", "b"}, "keys revoke takes 1 argument(s), got 2", "run 'origin keys revoke --help' for usage"},
		{[]string{"sites", "nope"}, `unknown command "sites nope"`, "run 'origin sites --help' for usage"},
		{[]string{"nope"}, `unknown command "nope"`, "run 'origin --help' for usage"},
		{[]string{}, "no command", "run 'origin --help' for usage"},
		{[]string{"import", "reaxml", "--site", "x"}, "import reaxml needs at least one FILE", "run 'origin import reaxml --help' for usage"},
		{[]string{"webhooks", "deliveries", "--limit", "many", "W"}, `invalid value "many" for flag -limit`, "run 'origin webhooks deliveries --help' for usage"},
	} {
		code, out, errOut := c.run(tc.args...)
		lines := strings.Split(strings.TrimRight(errOut, "\n"), "\n")
		if code != exitUsage || out != "" || len(lines) != 2 || !strings.Contains(lines[0], tc.msg) || lines[1] != tc.where {
			t.Errorf("origin %s: exit %d, stdout %q, stderr:\n%s", strings.Join(tc.args, " "), code, out, errOut)
		}
		if !strings.HasPrefix(lines[0], "origin: ") {
			t.Errorf("origin %s: stderr %q", strings.Join(tc.args, " "), lines[0])
		}
	}
}

// Flags may come after the arguments, and "--" ends them.
func TestFlagsAnywhere(t *testing.T) {
	for _, tc := range []struct {
		args []string
		pos  []string
		json bool
	}{
		{[]string{"a", "--json", "b"}, []string{"a", "b"}, true},
		{[]string{"--json", "a"}, []string{"a"}, true},
		{[]string{"a", "b", "--json"}, []string{"a", "b"}, true},
		{[]string{"a", "--", "--json"}, []string{"a", "--json"}, false},
		{[]string{}, nil, false},
	} {
		fs := newFlags("test", nil)
		asJSON := fs.Bool("json", false, "")
		pos, err := parseInterspersed(fs, tc.args)
		if err != nil || strings.Join(pos, " ") != strings.Join(tc.pos, " ") || *asJSON != tc.json ||
			strings.Join(fs.Args(), " ") != strings.Join(tc.pos, " ") {
			t.Errorf("%q: %q (fs.Args %q) json %v, %v", tc.args, pos, fs.Args(), *asJSON, err)
		}
	}
}

// Errors say what to do, without the program's package names.
func TestErrorsSayWhatToDo(t *testing.T) {
	c := newCLI(t, "")
	delete(c.env, "LISTGATE_DATABASE_URL")
	code, _, errOut := c.run("sites", "list")
	if code != exitFailed || !strings.Contains(errOut, "LISTGATE_DATABASE_URL is not set: export it") {
		t.Errorf("no database URL: exit %d, %q", code, errOut)
	}
	c.env["LISTGATE_DATABASE_URL"] = "postgres://nobody:secret-pw@127.0.0.1:1/none?connect_timeout=5"
	code, _, errOut = c.run("sites", "list")
	if code != exitFailed || !strings.HasPrefix(errOut, "origin: cannot reach the database (LISTGATE_DATABASE_URL)") ||
		strings.Contains(errOut, "store:") || strings.Contains(errOut, "secret-pw") {
		t.Errorf("unreachable database: exit %d, %q", code, errOut)
	}
}
