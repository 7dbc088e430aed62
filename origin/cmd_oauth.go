package main

import (
	"context"
	"fmt"
	"time"

	"github.com/listgate/listgate/origin/store"

	"github.com/listgate/listgate/origin/upload"
)

// createdClient is the output of oauth-clients create: the only place the
// secret appears.
type createdClient struct {
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret"`
	SiteID       string `json:"site_id"`
	Name         string `json:"name"`
}

func cmdOAuthClientsCreate(ctx context.Context, args []string, e *env) error {
	fs := newFlags("oauth-clients create", e)
	site := fs.String("site", "", "site id")
	name := fs.String("name", "", "client name, e.g. the agency's CRM")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parse(fs, args, 0); err != nil {
		return err
	}
	if err := required(fs, "site", *site, "name", *name); err != nil {
		return err
	}
	return withDB(ctx, e, func(db *store.DB) error {
		c, secret, err := upload.CreateClient(ctx, db, *site, *name)
		if err != nil {
			return err
		}
		out := createdClient{ClientID: c.ClientID, ClientSecret: secret, SiteID: c.SiteID, Name: c.Name}
		if *asJSON {
			err = printJSON(e.stdout, out)
		} else {
			fmt.Fprintf(e.stdout, "created upload client %s (%s) for site %s\n\n  client_id      %s\n  client_secret  %s\n\n",
				c.ClientID, c.Name, c.SiteID, c.ClientID, secret)
		}
		fmt.Fprintln(e.stderr, "Store the client secret now: it is shown once and cannot be recovered.")
		return err
	})
}

func cmdOAuthClientsList(ctx context.Context, args []string, e *env) error {
	site, asJSON, err := parseSiteList("oauth-clients list", args, e)
	if err != nil {
		return err
	}
	return withDB(ctx, e, func(db *store.DB) error {
		clients, err := db.ListOAuthClients(ctx, site)
		if err != nil {
			return err
		}
		if asJSON {
			return printJSON(e.stdout, map[string]any{"clients": clients})
		}
		tw := newTable(e.stdout, "CLIENT ID\tNAME\tCREATED\tREVOKED")
		for _, c := range clients {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", c.ClientID, c.Name, c.CreatedAt.Format(time.RFC3339), fmtTime(c.RevokedAt))
		}
		return tw.Flush()
	})
}

func cmdOAuthClientsRevoke(ctx context.Context, args []string, e *env) error {
	fs := newFlags("oauth-clients revoke", e)
	if err := parse(fs, args, 1); err != nil {
		return err
	}
	return withDB(ctx, e, func(db *store.DB) error {
		c, err := db.RevokeOAuthClient(ctx, fs.Arg(0))
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "revoked upload client %s (%s) at %s; its access tokens no longer work\n",
			c.ClientID, c.Name, c.RevokedAt.Format(time.RFC3339))
		return nil
	})
}
