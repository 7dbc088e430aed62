package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	json "github.com/goccy/go-json"

	"github.com/listgate/listgate/origin/store"
	"github.com/listgate/listgate/pkg/apierror"
)

const usage = `usage: origin <command> [flags]

commands:
  migrate                                   apply the schema migrations
  serve [--migrate] [--config FILE]         run the HTTP API
  dev                                       make run: throwaway Postgres (unless
                                            LISTGATE_DATABASE_URL is set), migrate,
                                            seed demo data, serve
  sites create --name NAME --plan PLAN [--timezone TZ] [--json]
  sites set-plan SITE_ID PLAN
  sites set-cors SITE_ID [ORIGIN...] [--json]
                                            the browser origins allowed to call the
                                            API with the site's keys (CORS), e.g.
                                            https://www.example.com; none clears them
  sites list [--json]
  sites beacon-id SITE_ID [--rotate] [--json]
                                            the site's public beacon id (scope
                                            views:write: listing view beacons and
                                            nothing else), made on first use;
                                            --rotate revokes it and makes a new one
  keys create --site SITE_ID --name NAME --scopes SCOPES [--json]
  keys revoke KEY_ID
  keys list --site SITE_ID [--json]
  oauth-clients create --site SITE_ID --name NAME [--json]
                                            upload API client; the secret is
                                            shown once
  oauth-clients list --site SITE_ID [--json]
  oauth-clients revoke CLIENT_ID            also deletes its access tokens
  pairing approve --user-code CODE --site SITE_ID [--json]
                                            approve a WordPress pairing (the
                                            dashboard's approve); prints its home_url
  pairing deny --user-code CODE [--json]
  pairing list --site SITE_ID [--json]
  pairing disconnect --site SITE_ID PAIRING_ID
                                            revoke a paired WordPress site's key
  import reaxml --site SITE_ID FILE... [--json]
                                            import REAXML feeds (progress on a terminal)
  users create --email EMAIL --password-stdin [--account NAME] [--site SITE_ID]... [--json]
                                            a dashboard user; the account is created
                                            when missing, --site attaches a site to it
  webhooks create --site SITE_ID --url URL --events EVENTS [--json]
                                            a signed webhook endpoint for lead events
                                            (lead.created, lead.duplicate, lead.updated);
                                            the signing secret is shown once
  webhooks list [--site SITE_ID] [--json]
  webhooks disable|enable|delete WEBHOOK_ID
  webhooks rotate-secret WEBHOOK_ID [--overlap 24h] [--json]
                                            a new secret; the old one also signs
                                            during the overlap
  webhooks replay WEBHOOK_ID --since TIME|DURATION [--json]
                                            send again what it got (or was held)
  webhooks deliveries WEBHOOK_ID [--limit N] [--json]
                                            the delivery log, newest first
  webhooks new-secret-key                   print a new LISTGATE_SECRET_KEY
  seed demo [--json]

Every command reads LISTGATE_DATABASE_URL. --json prints one JSON object.
`

// errUsage marks a command line mistake: exit status 2 and the usage text.
var errUsage = errors.New("usage")

// run executes one command line and returns the exit status.
func run(ctx context.Context, args []string, e *env) int {
	err := dispatch(ctx, args, e)
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprint(e.stdout, usage)
		return 0
	case errors.Is(err, errUsage):
		fmt.Fprintf(e.stderr, "origin: %v\n\n%s", err, usage)
		return 2
	default:
		fmt.Fprintf(e.stderr, "origin: %s\n", describe(err))
		return 1
	}
}

func dispatch(ctx context.Context, args []string, e *env) error {
	if len(args) == 0 {
		return fmt.Errorf("%w: no command", errUsage)
	}
	cmd, rest := args[0], args[1:]
	sub := ""
	if len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
		sub = rest[0]
	}
	switch cmd {
	case "help", "-h", "--help":
		return flag.ErrHelp
	case "migrate":
		return cmdMigrate(ctx, rest, e)
	case "serve":
		return cmdServe(ctx, rest, e)
	case "dev":
		return cmdDev(ctx, rest, e)
	case "sites":
		switch sub {
		case "create":
			return cmdSitesCreate(ctx, rest[1:], e)
		case "set-plan":
			return cmdSitesSetPlan(ctx, rest[1:], e)
		case "set-cors":
			return cmdSitesSetCORS(ctx, rest[1:], e)
		case "list":
			return cmdSitesList(ctx, rest[1:], e)
		case "beacon-id":
			return cmdSitesBeaconID(ctx, rest[1:], e)
		}
	case "keys":
		switch sub {
		case "create":
			return cmdKeysCreate(ctx, rest[1:], e)
		case "revoke":
			return cmdKeysRevoke(ctx, rest[1:], e)
		case "list":
			return cmdKeysList(ctx, rest[1:], e)
		}
	case "import":
		return cmdImport(ctx, rest, e)
	case "oauth-clients":
		switch sub {
		case "create":
			return cmdOAuthClientsCreate(ctx, rest[1:], e)
		case "list":
			return cmdOAuthClientsList(ctx, rest[1:], e)
		case "revoke":
			return cmdOAuthClientsRevoke(ctx, rest[1:], e)
		}
	case "pairing":
		switch sub {
		case "approve":
			return cmdPairingDecide(ctx, rest[1:], e, true)
		case "deny":
			return cmdPairingDecide(ctx, rest[1:], e, false)
		case "list":
			return cmdPairingList(ctx, rest[1:], e)
		case "disconnect":
			return cmdPairingDisconnect(ctx, rest[1:], e)
		}
	case "users":
		if sub == "create" {
			return cmdUsersCreate(ctx, rest[1:], e)
		}
	case "webhooks":
		switch sub {
		case "create":
			return cmdWebhooksCreate(ctx, rest[1:], e)
		case "list":
			return cmdWebhooksList(ctx, rest[1:], e)
		case "enable":
			return cmdWebhooksEnable(ctx, rest[1:], e, true)
		case "disable":
			return cmdWebhooksEnable(ctx, rest[1:], e, false)
		case "delete":
			return cmdWebhooksDelete(ctx, rest[1:], e)
		case "rotate-secret":
			return cmdWebhooksRotate(ctx, rest[1:], e)
		case "replay":
			return cmdWebhooksReplay(ctx, rest[1:], e)
		case "deliveries":
			return cmdWebhooksDeliveries(ctx, rest[1:], e)
		case "new-secret-key":
			return cmdWebhooksNewSecretKey(ctx, rest[1:], e)
		}
	case "seed":
		if sub == "demo" {
			return cmdSeedDemo(ctx, rest[1:], e)
		}
	}
	return fmt.Errorf("%w: unknown command %q", errUsage, strings.TrimSpace(cmd+" "+sub))
}

// describe renders an error for a terminal: API errors as their message and
// each detail, anything else as it is.
func describe(err error) string {
	var ae *apierror.Error
	if !errors.As(err, &ae) || ae.Code == apierror.CodeInternalError {
		return err.Error()
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

// newFlags returns a flag set that reports errors instead of exiting.
func newFlags(name string, e *env) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	return fs
}

// parse parses args, wrapping mistakes as usage errors, and checks the
// number of positional arguments.
func parse(fs *flag.FlagSet, args []string, positional int) error {
	if err := fs.Parse(args); err != nil {
		return parseErr(fs, err)
	}
	if fs.NArg() != positional {
		return fmt.Errorf("%w: %s takes %d argument(s), got %d", errUsage, fs.Name(), positional, fs.NArg())
	}
	return nil
}

// parseErr wraps a flag parsing mistake as a usage error.
func parseErr(fs *flag.FlagSet, err error) error {
	if errors.Is(err, flag.ErrHelp) {
		return err
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
		return nil, errors.New("LISTGATE_DATABASE_URL is not set")
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
