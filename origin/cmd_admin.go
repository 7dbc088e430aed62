package main

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/listgate/listgate/origin/store"
	"github.com/listgate/listgate/pkg/apikey"
	"github.com/listgate/listgate/pkg/internalapi"
	"github.com/listgate/listgate/pkg/model"
)

func cmdMigrate(ctx context.Context, args []string, e *env) error {
	fs := newFlags("migrate", e)
	if err := parse(fs, args, 0); err != nil {
		return err
	}
	return withDB(ctx, e, func(db *store.DB) error {
		applied, err := db.Migrate(ctx)
		for _, m := range applied {
			fmt.Fprintf(e.stdout, "applied %04d_%s\n", m.Version, m.Name)
		}
		if err != nil {
			return err
		}
		v, err := db.SchemaVersion(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "schema at version %d\n", v)
		return nil
	})
}

func cmdSitesCreate(ctx context.Context, args []string, e *env) error {
	fs := newFlags("sites create", e)
	name := fs.String("name", "", "site name")
	plan := fs.String("plan", "", "starter, professional or enterprise")
	tz := fs.String("timezone", "", "IANA time zone of the feeds (default Australia/Sydney)")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parse(fs, args, 0); err != nil {
		return err
	}
	if err := required(fs, "name", *name, "plan", *plan); err != nil {
		return err
	}
	return withDB(ctx, e, func(db *store.DB) error {
		s, err := db.CreateSite(ctx, *name, model.Plan(*plan), *tz)
		if err != nil {
			return err
		}
		if *asJSON {
			return printJSON(e.stdout, s)
		}
		fmt.Fprintf(e.stdout, "created site %s (%s, %s plan, %s)\n", s.ID, s.Name, s.Plan, s.Timezone)
		fmt.Fprintf(e.stdout, "it is in no dashboard yet: origin users grant --email EMAIL --site %s\n", s.ID)
		return nil
	})
}

func cmdSitesSetPlan(ctx context.Context, args []string, e *env) error {
	fs := newFlags("sites set-plan", e)
	if err := parse(fs, args, 2); err != nil {
		return err
	}
	return withDB(ctx, e, func(db *store.DB) error {
		plan := model.Plan(fs.Arg(1))
		if err := db.SetPlan(ctx, fs.Arg(0), plan); err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "site %s is now on the %s plan\n", fs.Arg(0), plan)
		return nil
	})
}

func cmdSitesSetCORS(ctx context.Context, args []string, e *env) error {
	fs := newFlags("sites set-cors", e)
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := parseAnywhere(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return fmt.Errorf("%w: sites set-cors takes a SITE_ID, then the origins (none clears the list)", errUsage)
	}
	return withDB(ctx, e, func(db *store.DB) error {
		origins, err := db.SetCORS(ctx, pos[0], pos[1:])
		if err != nil {
			return err
		}
		if *asJSON {
			return printJSON(e.stdout, internalapi.SiteCORS{SiteID: pos[0], Origins: origins})
		}
		if len(origins) == 0 {
			fmt.Fprintf(e.stdout, "site %s allows no browser origins\n", pos[0])
			return nil
		}
		fmt.Fprintf(e.stdout, "site %s allows these browser origins:\n", pos[0])
		for _, o := range origins {
			fmt.Fprintf(e.stdout, "  %s\n", o)
		}
		return nil
	})
}

// cmdSitesBeaconID prints the site's beacon id, made on first use.
func cmdSitesBeaconID(ctx context.Context, args []string, e *env) error {
	fs := newFlags("sites beacon-id", e)
	asJSON := fs.Bool("json", false, "print JSON")
	rotate := fs.Bool("rotate", false, "revoke the beacon id and make a new one")
	pos, err := parseAnywhere(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return fmt.Errorf("%w: sites beacon-id takes a SITE_ID", errUsage)
	}
	return withDB(ctx, e, func(db *store.DB) error {
		k, id, err := db.BeaconID(ctx, pos[0], store.SourceCLI, *rotate)
		if err != nil {
			return err
		}
		if *asJSON {
			return printJSON(e.stdout, map[string]string{"site_id": pos[0], "key_id": k.ID, "beacon_id": id})
		}
		fmt.Fprintf(e.stdout, "%s\n", id)
		return nil
	})
}

// parseAnywhere parses args whose flags may come before, between or after
// the positional arguments, and returns the positional ones.
func parseAnywhere(fs *flag.FlagSet, args []string) ([]string, error) {
	return parseInterspersed(fs, args)
}

func cmdSitesList(ctx context.Context, args []string, e *env) error {
	fs := newFlags("sites list", e)
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parse(fs, args, 0); err != nil {
		return err
	}
	return withDB(ctx, e, func(db *store.DB) error {
		sites, err := db.ListSites(ctx)
		if err != nil {
			return err
		}
		if *asJSON {
			return printJSON(e.stdout, map[string]any{"sites": sites})
		}
		tw := newTable(e.stdout, "ID\tNAME\tPLAN\tTIMEZONE\tBROWSER ORIGINS")
		for _, s := range sites {
			origins := strings.Join(s.CORSOrigins, " ")
			if origins == "" {
				origins = "-"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", s.ID, s.Name, s.Plan, s.Timezone, origins)
		}
		return tw.Flush()
	})
}

// createdKey is the output of keys create: the only place the secret
// appears.
type createdKey struct {
	ID     string   `json:"id"`
	SiteID string   `json:"site_id"`
	Name   string   `json:"name"`
	Key    string   `json:"key"`
	Scopes []string `json:"scopes"`
}

func cmdKeysCreate(ctx context.Context, args []string, e *env) error {
	fs := newFlags("keys create", e)
	site := fs.String("site", "", "site id")
	name := fs.String("name", "", "key name")
	scopes := fs.String("scopes", "", "comma-separated: listings:read, agents:read, stats:read, leads:write")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parse(fs, args, 0); err != nil {
		return err
	}
	if err := required(fs, "site", *site, "name", *name, "scopes", *scopes); err != nil {
		return err
	}
	sc, err := apikey.ParseScopes(*scopes)
	if err != nil {
		return fmt.Errorf("%w: --scopes: %v", errUsage, err)
	}
	return withDB(ctx, e, func(db *store.DB) error {
		k, secret, err := db.CreateKey(ctx, store.NewKey{SiteID: *site, Name: *name, Scopes: sc, Source: store.SourceCLI})
		if err != nil {
			return err
		}
		out := createdKey{ID: k.ID, SiteID: k.SiteID, Name: k.Name, Key: secret, Scopes: k.ScopeNames}
		if *asJSON {
			return printJSON(e.stdout, out)
		}
		fmt.Fprintf(e.stdout, "created key %s (%s) for site %s with scopes %s\n\n  %s\n\n", k.ID, k.Name, k.SiteID, sc, secret)
		fmt.Fprintln(e.stderr, "Store this key now: it is shown once and cannot be recovered.")
		return nil
	})
}

func cmdKeysRevoke(ctx context.Context, args []string, e *env) error {
	fs := newFlags("keys revoke", e)
	if err := parse(fs, args, 1); err != nil {
		return err
	}
	return withDB(ctx, e, func(db *store.DB) error {
		k, err := db.RevokeKey(ctx, fs.Arg(0))
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "revoked key %s (%s) at %s\n", k.ID, k.Name, k.RevokedAt.Format(time.RFC3339))
		return nil
	})
}

func cmdKeysList(ctx context.Context, args []string, e *env) error {
	site, asJSON, err := parseSiteList("keys list", args, e)
	if err != nil {
		return err
	}
	return withDB(ctx, e, func(db *store.DB) error {
		keys, err := db.ListKeys(ctx, site)
		if err != nil {
			return err
		}
		if asJSON {
			return printJSON(e.stdout, map[string]any{"keys": keys})
		}
		tw := newTable(e.stdout, "ID\tNAME\tKEY\tSCOPES\tSOURCE\tCREATED\tLAST USED\tREVOKED")
		for _, k := range keys {
			fmt.Fprintf(tw, "%s\t%s\tlgk_…%s\t%s\t%s\t%s\t%s\t%s\n", k.ID, k.Name, k.Hint, k.Scopes, k.Source,
				k.CreatedAt.Format(time.RFC3339), fmtTime(k.LastUsedAt), fmtTime(k.RevokedAt))
		}
		return tw.Flush()
	})
}

func fmtTime(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.Format(time.RFC3339)
}
