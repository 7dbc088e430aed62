package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/listgate/listgate/origin/api"
	"github.com/listgate/listgate/origin/dashboard"
	"github.com/listgate/listgate/origin/delivery"
	"github.com/listgate/listgate/origin/store"
	"github.com/listgate/listgate/pairing"
	"github.com/listgate/listgate/pairing/pairinghttp"
	"github.com/listgate/listgate/pkg/config"
	"github.com/listgate/listgate/pkg/webhook"
)

// newPairingAndDashboard builds the pairing routes and the staff dashboard
// over one pairing service: a code's wrong entries and the per-IP and
// per-account limits count the same whichever door they come through. The
// abuse limits are kept in Postgres, so every origin of a deployment
// counts the same events; the sign-in limits are the dashboard's defaults
// (dashboard.Config), which are.
func newPairingAndDashboard(db *store.DB, cfg config.Origin, log *slog.Logger) (*pairinghttp.Handler, *dashboard.Handler, error) {
	perIP := db.NewWindowLimiter("pairing_entry_ip", 10, 10*time.Minute)
	perAccount := db.NewWindowLimiter("pairing_entry_account", 10, 10*time.Minute)
	svc, err := pairing.New(pairing.Config{Store: db.Pairings(), PublicURL: cfg.PublicURL, Log: log,
		StartsPerIP:       db.NewWindowLimiter("pairing_start_ip", 10, 10*time.Minute),
		WrongEntriesPerIP: perIP, WrongEntriesPerAccount: perAccount})
	if err != nil {
		return nil, nil, err
	}
	routes, err := pairinghttp.New(pairinghttp.Config{Service: svc, ClientIP: api.ClientIP})
	if err != nil {
		return nil, nil, err
	}
	// serve has checked the key (newDeliveryWorker): one that does not
	// parse leaves webhooks uncreatable rather than failing here.
	secretKey, _ := webhook.ParseMasterKey(cfg.SecretKey)
	dash, err := dashboard.New(dashboard.Config{DB: db, Pairing: svc, EntriesPerIP: perIP,
		EntriesPerAccount: perAccount, ClientIP: api.ClientIP, Log: log,
		SecretKey:      secretKey,
		WebhookTargets: delivery.ClientOptions(cfg.WebhookAllowTargets, cfg.WebhookTimeout),
		EmailOn:        cfg.SMTPURL != ""})
	return routes, dash, err
}

// createdUser is the --json output of users create.
type createdUser struct {
	ID          string   `json:"id"`
	Email       string   `json:"email"`
	AccountID   string   `json:"account_id"`
	AccountName string   `json:"account_name"`
	Sites       []string `json:"site_ids"`
}

// siteList is a repeatable --site flag.
type siteList []string

func (s *siteList) String() string     { return strings.Join(*s, ",") }
func (s *siteList) Set(v string) error { *s = append(*s, v); return nil }

func cmdUsersCreate(ctx context.Context, args []string, e *env) error {
	fs := newFlags("users create", e)
	email := fs.String("email", "", "the user's e-mail address (their sign-in name)")
	fromStdin := fs.Bool("password-stdin", false, "read the password from the first line of stdin (required)")
	account := fs.String("account", "", "the account's name, created when missing (default: a new account named after --email)")
	var sites siteList
	fs.Var(&sites, "site", "give the user's account this site (repeatable)")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parse(fs, args, 0); err != nil {
		return err
	}
	if err := required(fs, "email", *email); err != nil {
		return err
	}
	if !*fromStdin {
		return fmt.Errorf("%w: users create needs --password-stdin (passwords are never flags)", errUsage)
	}
	line, err := bufio.NewReader(e.stdin).ReadString('\n')
	if err != nil && line == "" {
		return errors.New("no password on stdin: pipe it in, e.g. printf '%s\\n' \"$PASSWORD\" | origin users create ...")
	}
	hash, err := dashboard.HashPassword(strings.TrimRight(line, "\r\n"))
	if err != nil {
		return err
	}
	return withDB(ctx, e, func(db *store.DB) error {
		u, err := db.CreateUser(ctx, store.NewUser{Email: *email, PasswordHash: hash, Account: *account, SiteIDs: sites})
		if err != nil {
			return err
		}
		if *asJSON {
			return printJSON(e.stdout, createdUser{ID: u.ID, Email: u.Email, AccountID: u.AccountID,
				AccountName: u.AccountName, Sites: append([]string{}, sites...)})
		}
		fmt.Fprintf(e.stdout, "created user %s (%s) in account %q (%s)\n", u.ID, u.Email, u.AccountName, u.AccountID)
		for _, s := range sites {
			fmt.Fprintf(e.stdout, "site %s belongs to the account\n", s)
		}
		return nil
	})
}

// parseUserSite parses the flags of users grant and users revoke.
func parseUserSite(name string, args []string, e *env) (email, site string, asJSON bool, err error) {
	fs := newFlags(name, e)
	fs.StringVar(&email, "email", "", "the dashboard user's e-mail address")
	fs.StringVar(&site, "site", "", "the site id")
	fs.BoolVar(&asJSON, "json", false, "print JSON")
	if err := parse(fs, args, 0); err != nil {
		return "", "", false, err
	}
	return email, site, asJSON, required(fs, "email", email, "site", site)
}

// siteAccess is the --json output of users grant and users revoke.
type siteAccess struct {
	UserID      string `json:"user_id"`
	Email       string `json:"email"`
	AccountID   string `json:"account_id"`
	AccountName string `json:"account_name"`
	SiteID      string `json:"site_id"`
	Access      bool   `json:"access"`
	Changed     bool   `json:"changed"`
}

func cmdUsersGrant(ctx context.Context, args []string, e *env) error {
	email, site, asJSON, err := parseUserSite("users grant", args, e)
	if err != nil {
		return err
	}
	return withDB(ctx, e, func(db *store.DB) error {
		a, err := db.GrantSite(ctx, email, site)
		if err != nil {
			return err
		}
		if asJSON {
			return printJSON(e.stdout, siteAccess{UserID: a.User.ID, Email: a.User.Email, AccountID: a.User.AccountID,
				AccountName: a.User.AccountName, SiteID: a.SiteID, Access: true, Changed: a.Changed})
		}
		if !a.Changed {
			fmt.Fprintf(e.stdout, "%s's account %q has site %s already\n", a.User.Email, a.User.AccountName, a.SiteID)
			return nil
		}
		fmt.Fprintf(e.stdout, "site %s now belongs to %s's account %q: it is in the dashboard of every user of the account\n",
			a.SiteID, a.User.Email, a.User.AccountName)
		return nil
	})
}

func cmdUsersRevoke(ctx context.Context, args []string, e *env) error {
	email, site, asJSON, err := parseUserSite("users revoke", args, e)
	if err != nil {
		return err
	}
	return withDB(ctx, e, func(db *store.DB) error {
		a, err := db.RevokeSite(ctx, email, site)
		if err != nil {
			return err
		}
		if asJSON {
			return printJSON(e.stdout, siteAccess{UserID: a.User.ID, Email: a.User.Email, AccountID: a.User.AccountID,
				AccountName: a.User.AccountName, SiteID: a.SiteID, Access: false, Changed: a.Changed})
		}
		fmt.Fprintf(e.stdout, "site %s no longer belongs to %s's account %q: no user of the account sees it\n",
			a.SiteID, a.User.Email, a.User.AccountName)
		return nil
	})
}

func cmdUsersList(ctx context.Context, args []string, e *env) error {
	fs := newFlags("users list", e)
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parse(fs, args, 0); err != nil {
		return err
	}
	return withDB(ctx, e, func(db *store.DB) error {
		users, err := db.ListUsers(ctx)
		if err != nil {
			return err
		}
		if *asJSON {
			return printJSON(e.stdout, map[string]any{"data": users})
		}
		tw := newTable(e.stdout, "EMAIL\tACCOUNT\tSITES")
		for _, u := range users {
			sites := strings.Join(u.SiteIDs, ",")
			if sites == "" {
				sites = "-"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\n", u.Email, u.AccountName, sites)
		}
		return tw.Flush()
	})
}
