package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/listgate/listgate/origin/store"
	"github.com/listgate/listgate/pairing"
	"github.com/listgate/listgate/pkg/config"
)

// pairingService is the service the pairing commands use: an operator's,
// with no per-IP or per-account limit (Actor is empty).
func pairingService(db *store.DB, e *env) (*pairing.Service, error) {
	public, _ := e.getenv("LISTGATE_PUBLIC_URL")
	if public == "" {
		public = config.DefaultOrigin().PublicURL
	}
	return pairing.New(pairing.Config{Store: db.Pairings(), PublicURL: public, Log: slog.New(slog.DiscardHandler)})
}

// describePairingError words the pairing flow's errors for an operator.
func describePairingError(err error) error {
	switch {
	case errors.Is(err, pairing.ErrMalformedUserCode):
		return fmt.Errorf("%w: --user-code: 8 letters of %s, as XXXX-XXXX (case and dash optional)",
			errUsage, pairing.UserCodeAlphabet)
	case errors.Is(err, pairing.ErrNotFound):
		return errors.New("no pairing has this user code: check it, or ask for the code WordPress shows now")
	case errors.Is(err, pairing.ErrExpired):
		return errors.New("this user code has expired (or was entered wrong too often): start pairing again in WordPress")
	case errors.Is(err, pairing.ErrDecided):
		return errors.New("this user code was already approved or denied")
	case errors.Is(err, pairing.ErrUnknownSite):
		return errors.New("site not found")
	case errors.Is(err, pairing.ErrNotConnected):
		return errors.New("this pairing is not connected: it has no key to revoke")
	}
	return err
}

// decidedPairing is the --json output of approve and deny.
type decidedPairing struct {
	ID        string    `json:"id"`
	Status    string    `json:"status"`
	SiteID    string    `json:"site_id,omitempty"`
	HomeURL   string    `json:"home_url"`
	SiteName  string    `json:"site_name,omitempty"`
	ExpiresAt time.Time `json:"expires_at"`
}

// cmdPairingDecide is `pairing approve` (approve true) and `pairing deny`.
func cmdPairingDecide(ctx context.Context, args []string, e *env, approve bool) error {
	name := "pairing deny"
	if approve {
		name = "pairing approve"
	}
	fs := newFlags(name, e)
	code := fs.String("user-code", "", "the code WordPress shows, XXXX-XXXX (case and dash optional)")
	site := ""
	if approve {
		fs.StringVar(&site, "site", "", "the site the WordPress site will read")
	}
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parse(fs, args, 0); err != nil {
		return err
	}
	if err := required(fs, "user-code", *code); err != nil {
		return err
	}
	if approve {
		if err := required(fs, "site", site); err != nil {
			return err
		}
	}
	return withDB(ctx, e, func(db *store.DB) error {
		svc, err := pairingService(db, e)
		if err != nil {
			return err
		}
		var p pairing.Pairing
		if approve {
			p, err = svc.Approve(ctx, *code, site, pairing.Actor{})
		} else {
			p, err = svc.Deny(ctx, *code, pairing.Actor{})
		}
		if err != nil {
			return describePairingError(err)
		}
		if *asJSON {
			return printJSON(e.stdout, decidedPairing{ID: p.ID, Status: string(p.Status), SiteID: p.SiteID,
				HomeURL: p.HomeURL, SiteName: p.SiteName, ExpiresAt: p.ExpiresAt})
		}
		who := p.HomeURL
		if p.SiteName != "" {
			who += fmt.Sprintf(" (%q)", p.SiteName)
		}
		if approve {
			fmt.Fprintf(e.stdout, "approved the pairing of %s for site %s: the plugin receives a read-only key at its next poll\n",
				who, p.SiteID)
		} else {
			fmt.Fprintf(e.stdout, "denied the pairing of %s\n", who)
		}
		return nil
	})
}

func cmdPairingList(ctx context.Context, args []string, e *env) error {
	site, asJSON, err := parseSiteList("pairing list", args, e)
	if err != nil {
		return err
	}
	return withDB(ctx, e, func(db *store.DB) error {
		svc, err := pairingService(db, e)
		if err != nil {
			return err
		}
		ps, err := svc.List(ctx, site)
		if err != nil {
			return describePairingError(err)
		}
		if asJSON {
			if ps == nil {
				ps = []pairing.Pairing{}
			}
			return printJSON(e.stdout, map[string]any{"pairings": ps})
		}
		tw := newTable(e.stdout, "ID\tHOME URL\tSITE NAME\tSTATUS\tKEY\tDECIDED\tDELIVERED\tDISCONNECTED")
		for _, p := range ps {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", p.ID, p.HomeURL, orDash(p.SiteName), p.Status,
				orDash(p.KeyID), fmtZeroTime(p.DecidedAt), fmtZeroTime(p.DeliveredAt), fmtZeroTime(p.DisconnectedAt))
		}
		return tw.Flush()
	})
}

func cmdPairingDisconnect(ctx context.Context, args []string, e *env) error {
	fs := newFlags("pairing disconnect", e)
	site := fs.String("site", "", "site id")
	if err := parse(fs, args, 1); err != nil {
		return err
	}
	if err := required(fs, "site", *site); err != nil {
		return err
	}
	return withDB(ctx, e, func(db *store.DB) error {
		svc, err := pairingService(db, e)
		if err != nil {
			return err
		}
		p, err := svc.DisconnectPairing(ctx, *site, fs.Arg(0))
		if errors.Is(err, pairing.ErrNotFound) {
			return errors.New("site has no such pairing")
		}
		if err != nil {
			return describePairingError(err)
		}
		fmt.Fprintf(e.stdout, "disconnected %s: key %s is revoked\n", p.HomeURL, p.KeyID)
		return nil
	})
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func fmtZeroTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Format(time.RFC3339)
}
