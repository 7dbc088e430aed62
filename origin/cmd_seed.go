package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/listgate/listgate/origin/ingest"
	"github.com/listgate/listgate/origin/store"
	"github.com/listgate/listgate/pkg/apikey"
	"github.com/listgate/listgate/pkg/model"
	"github.com/listgate/listgate/pkg/reaxml/reaxmlgen"
)

// demoSeed is what `origin seed demo` creates and prints.
type demoSeed struct {
	Site     store.Site    `json:"site"`
	ReadKey  createdKey    `json:"read_key"`
	LeadKey  createdKey    `json:"lead_key"`
	Listings ingest.Counts `json:"listings"`
}

// DemoListings is how many listings the demo feed has.
const DemoListings = 250

// seedDemo creates a demo site with a read-only key (what pairing would give
// a WordPress site), a lead-capture key, and listings, agents and media
// imported from a generated REAXML feed. Each call creates a new site.
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
	loc, err := time.LoadLocation(site.Timezone)
	if err != nil {
		return d, err
	}
	pr, pw := io.Pipe()
	go func() {
		pw.CloseWithError(reaxmlgen.Generate(pw, reaxmlgen.Options{
			Seed: 2026, Listings: DemoListings, AgencyID: "DEMO", Agents: 8, Now: time.Now(), Location: loc}))
	}()
	res, err := ingest.New(db, slog.New(slog.DiscardHandler)).Import(ctx, site.ID, pr, ingest.Options{})
	pr.Close()
	if err != nil {
		return d, fmt.Errorf("demo listings: %w", err)
	}
	d.Listings = res.Counts
	return d, nil
}

func cmdSeedDemo(ctx context.Context, args []string, e *env) error {
	fs := newFlags("seed demo", e)
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parse(fs, args, 0); err != nil {
		return err
	}
	return withDB(ctx, e, func(db *store.DB) error {
		d, err := seedDemo(ctx, db)
		if err != nil {
			return err
		}
		if *asJSON {
			return printJSON(e.stdout, d)
		}
		fmt.Fprintf(e.stdout, "demo site %s (%s, %s plan, %d listings)\n  read key  %s  (%s)\n  lead key  %s  (%s)\n",
			d.Site.ID, d.Site.Name, d.Site.Plan, d.Listings.Created, d.ReadKey.Key, joinScopes(d.ReadKey.Scopes), d.LeadKey.Key, joinScopes(d.LeadKey.Scopes))
		fmt.Fprintln(e.stderr, "Store these keys now: they are shown once and cannot be recovered.")
		return nil
	})
}

func joinScopes(s []string) string { return strings.Join(s, ", ") }
