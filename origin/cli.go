package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"
	"text/tabwriter"

	json "github.com/goccy/go-json"

	"github.com/listgate/listgate/origin/store"
	"github.com/listgate/listgate/pkg/apierror"
)

// command is one admin command: its name as typed ("sites create"), what it
// takes, what it does, an example and the function that runs it.
type command struct {
	name    string
	args    string
	summary string
	more    string
	example string
	run     func(context.Context, []string, *env) error
}

// commands is every command, in the order `origin --help` lists them; a
// name of two words belongs to the group of its first. (Set in init: the
// commands look themselves up for their help.)
var commands []command

func init() { commands = commandList() }

func commandList() []command {
	return []command{
		{name: "migrate", summary: "apply the schema migrations", example: "origin migrate", run: cmdMigrate},
		{name: "serve", args: "[--migrate] [--config FILE]", summary: "run the HTTP API (LISTGATE_* variables, or a YAML file)",
			more:    "Every setting and its default is in configs/origin.yaml and docs/operations.md. Among them: LISTGATE_ORIGIN_ADDR (127.0.0.1:8081), LISTGATE_DATABASE_URL (required), LISTGATE_INTERNAL_TOKEN (required), LISTGATE_DATABASE_MAX_CONNS (20), LISTGATE_ORIGIN_REQUEST_TIMEOUT (10s: a request's work; past it the query is cancelled and the answer is 503; Postgres's statement_timeout is nine tenths of it).",
			example: "origin serve --migrate --config /etc/listgate/origin.yaml", run: cmdServe},
		{name: "dev", args: "[--edge BIN] [--banner]", summary: "run everything on this machine with demo data (make run)",
			more:    "A throwaway Postgres (unless LISTGATE_DATABASE_URL is set), migrations, demo data, the origin and the edge in front of it, until Ctrl-C. Logs are short text lines (LISTGATE_LOG_FORMAT=json for JSON), without the lines of successful requests (LISTGATE_LOG_LEVEL=debug shows them). Press Enter (or send SIGUSR1) to print the URLs and keys again; --banner prints them from another terminal.",
			example: "origin dev", run: cmdDev},
		{name: "sites create", args: "--name NAME --plan PLAN [--timezone TZ] [--json]", summary: "create a site",
			more:    "PLAN is starter, professional or enterprise. The site is in no dashboard until a user's account is given it: origin users grant --email EMAIL --site SITE_ID.",
			example: `origin sites create --name "Bayside Realty" --plan starter --timezone Australia/Melbourne`, run: cmdSitesCreate},
		{name: "sites set-plan", args: "SITE_ID PLAN", summary: "change a site's plan", example: "origin sites set-plan SITE_ID professional", run: cmdSitesSetPlan},
		{name: "sites set-cors", args: "SITE_ID [ORIGIN...] [--json]", summary: "set the browser origins allowed to use the site's keys (CORS)",
			more:    "Origins are scheme://host[:port], e.g. https://www.example.com, at most 20; none clears the list.",
			example: "origin sites set-cors SITE_ID https://www.bayside.example", run: cmdSitesSetCORS},
		{name: "sites list", args: "[--json]", summary: "list the sites", example: "origin sites list --json", run: cmdSitesList},
		{name: "sites beacon-id", args: "SITE_ID [--rotate] [--json]", summary: "print the site's public beacon id (made on first use)",
			more:    "The beacon id is a key of scope views:write (listing view beacons and nothing else). --rotate revokes it and makes a new one.",
			example: "origin sites beacon-id SITE_ID", run: cmdSitesBeaconID},
		{name: "keys create", args: "--site SITE_ID --name NAME --scopes SCOPES [--json]", summary: "create an API key (shown once)",
			more:    "SCOPES are comma-separated: listings:read, agents:read, stats:read, leads:write; or views:write alone (a beacon id: 'origin sites beacon-id' makes the site's own).",
			example: "origin keys create --site SITE_ID --name website --scopes listings:read,leads:write", run: cmdKeysCreate},
		{name: "keys revoke", args: "KEY_ID", summary: "revoke a key (the edges stop taking it within a second)", example: "origin keys revoke KEY_ID", run: cmdKeysRevoke},
		{name: "keys list", args: "--site SITE_ID [--json]", summary: "list a site's keys", example: "origin keys list --site SITE_ID", run: cmdKeysList},
		{name: "oauth-clients create", args: "--site SITE_ID --name NAME [--json]", summary: "create an upload API client; the secret is shown once",
			example: "origin oauth-clients create --site SITE_ID --name crm-export", run: cmdOAuthClientsCreate},
		{name: "oauth-clients list", args: "--site SITE_ID [--json]", summary: "list a site's upload API clients", example: "origin oauth-clients list --site SITE_ID", run: cmdOAuthClientsList},
		{name: "oauth-clients revoke", args: "CLIENT_ID", summary: "revoke an upload API client and delete its access tokens", example: "origin oauth-clients revoke CLIENT_ID", run: cmdOAuthClientsRevoke},
		{name: "pairing approve", args: "--user-code CODE --site SITE_ID [--json]", summary: "approve a WordPress pairing (the dashboard's approve); prints its home_url",
			example: "origin pairing approve --user-code WDJB-MJHT --site SITE_ID", run: func(ctx context.Context, args []string, e *env) error { return cmdPairingDecide(ctx, args, e, true) }},
		{name: "pairing deny", args: "--user-code CODE [--json]", summary: "deny a WordPress pairing", example: "origin pairing deny --user-code WDJB-MJHT",
			run: func(ctx context.Context, args []string, e *env) error { return cmdPairingDecide(ctx, args, e, false) }},
		{name: "pairing list", args: "--site SITE_ID [--json]", summary: "list a site's paired WordPress sites", example: "origin pairing list --site SITE_ID", run: cmdPairingList},
		{name: "pairing disconnect", args: "--site SITE_ID PAIRING_ID", summary: "revoke a paired WordPress site's key", example: "origin pairing disconnect --site SITE_ID PAIRING_ID", run: cmdPairingDisconnect},
		{name: "import reaxml", args: "--site SITE_ID FILE... [--json]", summary: "import REAXML feed files",
			more:    "Every FILE is checked before any is imported (a missing one changes nothing). Progress shows on a terminal. Exit status 0 when everything was imported, 3 when some listings or files failed and the rest were imported, 1 when nothing was.",
			example: "origin import reaxml --site SITE_ID feeds/*.xml --json", run: cmdImportReaxml},
		{name: "users create", args: "--email EMAIL --password-stdin [--account NAME] [--site SITE_ID]... [--json]", summary: "create a dashboard user",
			more:    "The password is read from the first line of stdin. The account is created when missing; each --site gives the account that site (see also users grant).",
			example: "printf '%s\\n' \"$PASSWORD\" | origin users create --email ann@bayside.example --password-stdin --site SITE_ID", run: cmdUsersCreate},
		{name: "users grant", args: "--email EMAIL --site SITE_ID [--json]", summary: "give a dashboard user's account a site",
			more:    "The site appears in the dashboard of every user of the account from their next page. A site of another account is refused: revoke it there first.",
			example: "origin users grant --email ann@bayside.example --site SITE_ID", run: cmdUsersGrant},
		{name: "users revoke", args: "--email EMAIL --site SITE_ID [--json]", summary: "take a site away from a dashboard user's account",
			more:    "No user of the account sees the site from their next page (it answers 404).",
			example: "origin users revoke --email ann@bayside.example --site SITE_ID", run: cmdUsersRevoke},
		{name: "users list", args: "[--json]", summary: "list the dashboard users, their accounts and the accounts' sites", example: "origin users list", run: cmdUsersList},
		{name: "webhooks create", args: "--site SITE_ID --url URL --events EVENTS [--json]", summary: "create a signed webhook endpoint for lead events",
			more:    "EVENTS are comma-separated: lead.created, lead.duplicate, lead.updated. The signing secret is shown once.",
			example: "origin webhooks create --site SITE_ID --url https://crm.example.com/hooks --events lead.created", run: cmdWebhooksCreate},
		{name: "webhooks list", args: "[--site SITE_ID] [--json]", summary: "list webhook endpoints", example: "origin webhooks list --site SITE_ID", run: cmdWebhooksList},
		{name: "webhooks disable", args: "WEBHOOK_ID", summary: "stop sending to an endpoint (events are held until a replay)", example: "origin webhooks disable WEBHOOK_ID",
			run: func(ctx context.Context, args []string, e *env) error { return cmdWebhooksEnable(ctx, args, e, false) }},
		{name: "webhooks enable", args: "WEBHOOK_ID", summary: "send to an endpoint again", example: "origin webhooks enable WEBHOOK_ID",
			run: func(ctx context.Context, args []string, e *env) error { return cmdWebhooksEnable(ctx, args, e, true) }},
		{name: "webhooks delete", args: "WEBHOOK_ID", summary: "delete an endpoint and its deliveries", example: "origin webhooks delete WEBHOOK_ID", run: cmdWebhooksDelete},
		{name: "webhooks rotate-secret", args: "WEBHOOK_ID [--overlap 24h] [--json]", summary: "a new secret; the old one also signs during the overlap",
			example: "origin webhooks rotate-secret WEBHOOK_ID --overlap 1h", run: cmdWebhooksRotate},
		{name: "webhooks replay", args: "WEBHOOK_ID --since TIME|DURATION [--json]", summary: "send again what an endpoint got (or was held)",
			example: "origin webhooks replay WEBHOOK_ID --since 6h", run: cmdWebhooksReplay},
		{name: "webhooks deliveries", args: "WEBHOOK_ID [--limit N] [--json]", summary: "the delivery log, newest first", example: "origin webhooks deliveries WEBHOOK_ID --limit 20", run: cmdWebhooksDeliveries},
		{name: "webhooks new-secret-key", summary: "print a new LISTGATE_SECRET_KEY", example: "origin webhooks new-secret-key", run: cmdWebhooksNewSecretKey},
		{name: "seed demo", args: "[--json]", summary: "create the demo site, its keys and 250 generated listings", example: "origin seed demo --json", run: cmdSeedDemo},
	}
}

// usageFooter ends `origin --help`.
const usageFooter = `Every command reads LISTGATE_DATABASE_URL. --json prints one JSON object.
Flags may come before, between or after the arguments.
'origin COMMAND --help' shows a command's flags and an example.

Exit status: 0 done; 1 failed (nothing changed, or the error says what
did); 2 a mistake in the command line (nothing done); 3 partly done (import
reaxml: some listings or files failed, the rest were imported).
`

// Exit statuses (docs/operations.md lists them).
const (
	exitOK      = 0
	exitFailed  = 1
	exitUsage   = 2
	exitPartial = 3
)

// errUsage marks a command line mistake: exit status 2 and a pointer to
// the command's help.
var errUsage = errors.New("usage")

// partialError is a command that did part of its work: exit status 3.
type partialError struct{ msg string }

func (e *partialError) Error() string { return e.msg }

// helpError is a request for a command's help (-h, --help): the flag set
// knows its flags.
type helpError struct{ fs *flag.FlagSet }

func (e *helpError) Error() string { return "help requested" }
func (e *helpError) Unwrap() error { return flag.ErrHelp }

// usage is the text of `origin --help`.
func usage() string {
	var b strings.Builder
	b.WriteString("usage: origin COMMAND [flags]\n\ncommands:\n")
	for _, c := range commands {
		line := "  " + strings.TrimSpace(c.name+" "+c.args)
		if len(line) <= 44 {
			fmt.Fprintf(&b, "%-46s%s\n", line, c.summary)
		} else {
			fmt.Fprintf(&b, "%s\n%-46s%s\n", line, "", c.summary)
		}
	}
	b.WriteString("\n" + usageFooter)
	return b.String()
}

// groupHelp lists the commands of a group ("sites"), or "" when it is none.
func groupHelp(group string) string {
	var b strings.Builder
	for _, c := range commands {
		if g, sub, ok := strings.Cut(c.name, " "); ok && g == group {
			fmt.Fprintf(&b, "  %-16s %s\n", sub, c.summary)
		}
	}
	if b.Len() == 0 {
		return ""
	}
	return fmt.Sprintf("usage: origin %s COMMAND [flags]\n\ncommands:\n%s\n'origin %s COMMAND --help' shows a command's flags and an example.\n", group, b.String(), group)
}

// commandHelp is the text of `origin NAME --help`: usage, what it does, its
// flags and an example.
func commandHelp(c *command, fs *flag.FlagSet) string {
	var b strings.Builder
	fmt.Fprintf(&b, "usage: origin %s\n\n%s.\n", strings.TrimSpace(c.name+" "+c.args), upperFirst(c.summary))
	if c.more != "" {
		b.WriteString(wrap(c.more, 76))
	}
	if fs != nil {
		var flags strings.Builder
		fs.VisitAll(func(f *flag.Flag) {
			name, use := flag.UnquoteUsage(f)
			arg := "--" + f.Name
			switch name {
			case "":
			case "int":
				arg += " N"
			case "duration":
				arg += " DURATION"
			default:
				arg += " " + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
			}
			if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" && f.DefValue != "[]" {
				use += " (default " + f.DefValue + ")"
			}
			fmt.Fprintf(&flags, "  %-24s %s\n", arg, use)
		})
		if flags.Len() > 0 {
			b.WriteString("\nflags:\n" + flags.String())
		}
	}
	if c.example != "" {
		fmt.Fprintf(&b, "\nexample:\n  %s\n", c.example)
	}
	return b.String()
}

// upperFirst is s with its first letter in upper case.
func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// wrap breaks text into lines of at most width characters (words longer
// stay whole), ending with a newline.
func wrap(text string, width int) string {
	var b strings.Builder
	n := 0
	for _, w := range strings.Fields(text) {
		if n > 0 && n+1+len(w) > width {
			b.WriteByte('\n')
			n = 0
		} else if n > 0 {
			b.WriteByte(' ')
			n++
		}
		b.WriteString(w)
		n += len(w)
	}
	b.WriteByte('\n')
	return b.String()
}

// lookup returns the command named name.
func lookup(name string) *command {
	for i := range commands {
		if commands[i].name == name {
			return &commands[i]
		}
	}
	return nil
}

// isHelp reports whether arg asks for help.
func isHelp(arg string) bool {
	return arg == "-h" || arg == "--help" || arg == "-help" || arg == "help"
}

// run executes one command line and returns the exit status.
func run(ctx context.Context, args []string, e *env) int {
	name, err := dispatch(ctx, args, e)
	var he *helpError
	var pe *partialError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &he):
		c := lookup(he.fs.Name())
		if c == nil {
			c = &command{name: he.fs.Name()}
		}
		fmt.Fprint(e.stdout, commandHelp(c, he.fs))
		return exitOK
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprint(e.stdout, usage())
		return exitOK
	case errors.Is(err, errUsage):
		msg := strings.TrimPrefix(err.Error(), errUsage.Error()+": ")
		fmt.Fprintf(e.stderr, "origin: %s\nrun 'origin %s' for usage\n", msg, strings.TrimSpace(name+" --help"))
		return exitUsage
	case errors.As(err, &pe):
		fmt.Fprintf(e.stderr, "origin: %s\n", pe.msg)
		return exitPartial
	default:
		fmt.Fprintf(e.stderr, "origin: %s\n", describe(err))
		return exitFailed
	}
}

// dispatch runs the command args name and returns its name (as far as it
// was recognized, for the pointer to its help) and its error.
func dispatch(ctx context.Context, args []string, e *env) (string, error) {
	if len(args) == 0 {
		return "", fmt.Errorf("%w: no command", errUsage)
	}
	first := args[0]
	if isHelp(first) {
		if len(args) > 1 {
			// origin help sites [create]
			return dispatch(ctx, append(args[1:], "--help"), e)
		}
		return "", flag.ErrHelp
	}
	if c := lookup(first); c != nil {
		return c.name, c.run(ctx, args[1:], e)
	}
	group := groupHelp(first)
	if group == "" {
		return "", fmt.Errorf("%w: unknown command %q", errUsage, first)
	}
	if len(args) == 1 || isHelp(args[1]) {
		fmt.Fprint(e.stdout, group)
		return first, nil
	}
	if c := lookup(first + " " + args[1]); c != nil {
		return c.name, c.run(ctx, args[2:], e)
	}
	return first, fmt.Errorf("%w: unknown command %q", errUsage, first+" "+args[1])
}

// describe renders an error for a terminal: API errors as their message and
// each detail, anything else as it is.
func describe(err error) string {
	var ae *apierror.Error
	if !errors.As(err, &ae) || ae.Code == apierror.CodeInternalError {
		return plainError(err)
	}
	msg := ae.Message
	keys := make([]string, 0, len(ae.Details))
	for k := range ae.Details {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		msg += fmt.Sprintf("\n  %s: %s", k, ae.Details[k])
	}
	return msg
}

// packagePrefix matches the package names the program's packages put in
// front of their errors ("ingest: feed: reaxml: "): they mean nothing to
// an operator.
var packagePrefix = regexp.MustCompile(`^(?:(?:ingest|feed|reaxml|store|config|pairing|webhook|dashboard|delivery|upload|mail|devdb|devproc|model|apikey|listings|leads): )+`)

// plainError is err's message for an operator: without package prefixes,
// and saying what to do about the usual ones.
func plainError(err error) string {
	msg := packagePrefix.ReplaceAllString(err.Error(), "")
	switch {
	case strings.HasPrefix(msg, "connect: ") || strings.HasPrefix(msg, "ping: "):
		_, cause, _ := strings.Cut(msg, ": ")
		return "cannot reach the database (LISTGATE_DATABASE_URL): " + cause +
			"\n  check the URL, that Postgres runs, and the user's password"
	case strings.HasPrefix(msg, "database url: "):
		return "LISTGATE_DATABASE_URL is not a PostgreSQL URL: " + strings.TrimPrefix(msg, "database url: ") +
			"\n  expected postgres://USER:PASSWORD@HOST:5432/DATABASE"
	}
	return msg
}

// newFlags returns a flag set that reports errors instead of exiting, and
// prints nothing itself: run prints the error, or the command's help.
func newFlags(name string, e *env) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// parse parses args, whose flags may come before, between or after the
// positional arguments, wrapping mistakes as usage errors, and checks the
// number of positional arguments; fs.Args() are the positional ones.
func parse(fs *flag.FlagSet, args []string, positional int) error {
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != positional {
		want := ""
		if c := lookup(fs.Name()); c != nil {
			want = ": origin " + strings.TrimSpace(c.name+" "+c.args)
		}
		return fmt.Errorf("%w: %s takes %d argument(s), got %d%s", errUsage, fs.Name(), positional, len(pos), want)
	}
	return nil
}

// parseInterspersed parses flags anywhere in args ("--" ends them) and
// returns the positional arguments, which fs.Args() also returns after.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, parseErr(fs, err)
		}
		rest := fs.Args()
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			pos = append(pos, rest...)
			break
		}
		if len(rest) == 0 {
			break
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
	// Leave the positional arguments as fs.Args().
	_ = fs.Parse(append([]string{"--"}, pos...))
	return pos, nil
}

// parseErr wraps a flag parsing mistake as a usage error, and -h/--help
// as a request for the command's help.
func parseErr(fs *flag.FlagSet, err error) error {
	if errors.Is(err, flag.ErrHelp) {
		return &helpError{fs: fs}
	}
	return fmt.Errorf("%w: %s: %v", errUsage, fs.Name(), err)
}

// required reports the first empty flag among name=value pairs.
func required(fs *flag.FlagSet, pairs ...string) error {
	for i := 0; i+1 < len(pairs); i += 2 {
		if strings.TrimSpace(pairs[i+1]) == "" {
			return fmt.Errorf("%w: %s needs --%s", errUsage, fs.Name(), pairs[i])
		}
	}
	return nil
}

// openDB opens LISTGATE_DATABASE_URL.
func openDB(ctx context.Context, e *env) (*store.DB, error) {
	url, _ := e.getenv("LISTGATE_DATABASE_URL")
	if url == "" {
		return nil, errors.New("LISTGATE_DATABASE_URL is not set: export it as the database's URL, postgres://USER:PASSWORD@HOST:5432/DATABASE")
	}
	return store.Open(ctx, url, store.Options{MaxConns: 4})
}

// withDB runs fn with LISTGATE_DATABASE_URL open, and closes it after.
func withDB(ctx context.Context, e *env, fn func(*store.DB) error) error {
	db, err := openDB(ctx, e)
	if err != nil {
		return err
	}
	defer db.Close()
	return fn(db)
}

// printJSON writes v as one line of JSON.
func printJSON(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// parseSiteList parses the flags of a "… list --site ID [--json]" command.
func parseSiteList(name string, args []string, e *env) (site string, asJSON bool, err error) {
	fs := newFlags(name, e)
	fs.StringVar(&site, "site", "", "site id")
	fs.BoolVar(&asJSON, "json", false, "print JSON")
	if err := parse(fs, args, 0); err != nil {
		return "", false, err
	}
	return site, asJSON, required(fs, "site", site)
}

// newTable returns a writer of aligned columns with header as its first
// row (tab-separated); Flush writes it.
func newTable(w io.Writer, header string) *tabwriter.Writer {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, header)
	return tw
}
