package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/listgate/listgate/origin/store"
	"github.com/listgate/listgate/pkg/apikey"
	"github.com/listgate/listgate/pkg/model"
)

// demoSeed is what `origin seed demo` creates and prints.
type demoSeed struct {
	Site    store.Site `json:"site"`
	ReadKey createdKey `json:"read_key"`
	LeadKey createdKey `json:"lead_key"`
}

// seedDemo creates a demo site with a read-only key (what pairing would give
// a WordPress site) and a lead-capture key. Each call creates a new site.
func seedDemo(ctx context.Context, db *store.DB) (demoSeed, error) {
	var d demoSeed
	site, err := db.CreateSite(ctx, "Demo Realty", model.Professional, store.DefaultTimezone)
	if err != nil {
		return d, err
	}
	d.Site = site
	for _, k := range []struct {
		dst    *createdKey
		name   string
		scopes apikey.Scope
	}{
		{&d.ReadKey, "Demo read-only", apikey.ReadOnly},
		{&d.LeadKey, "Demo lead capture", apikey.LeadsWrite},
	} {
		rec, secret, err := db.CreateKey(ctx, store.NewKey{SiteID: site.ID, Name: k.name, Scopes: k.scopes, Source: store.SourceCLI})
		if err != nil {
			return d, err
		}
		*k.dst = createdKey{ID: rec.ID, SiteID: site.ID, Name: rec.Name, Key: secret, Scopes: rec.ScopeNames}
	}
	return d, nil
}

func cmdSeedDemo(ctx context.Context, args []string, e *env) error {
	fs := newFlags("seed demo", e)
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parse(fs, args, 0); err != nil {
		return err
	}
	db, err := openDB(ctx, e)
	if err != nil {
		return err
	}
	defer db.Close()
	d, err := seedDemo(ctx, db)
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(e.stdout, d)
	}
	fmt.Fprintf(e.stdout, "demo site %s (%s, %s plan)\n  read key  %s  (%s)\n  lead key  %s  (%s)\n",
		d.Site.ID, d.Site.Name, d.Site.Plan, d.ReadKey.Key, joinScopes(d.ReadKey.Scopes), d.LeadKey.Key, joinScopes(d.LeadKey.Scopes))
	fmt.Fprintln(e.stderr, "Store these keys now: they are shown once and cannot be recovered.")
	return nil
}

func joinScopes(s []string) string { return strings.Join(s, ", ") }
