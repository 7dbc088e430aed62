package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/listgate/listgate/origin/delivery"
	"github.com/listgate/listgate/origin/store"
	"github.com/listgate/listgate/pkg/webhook"
)

// secretKey reads the operator's LISTGATE_SECRET_KEY, required by the
// commands that show a signing secret.
func secretKey(e *env) ([]byte, error) {
	v, _ := e.getenv("LISTGATE_SECRET_KEY")
	if v == "" {
		return nil, errors.New("LISTGATE_SECRET_KEY is not set: webhook signing secrets derive from it (make one with `origin webhooks new-secret-key`, and give every origin the same)")
	}
	k, err := webhook.ParseMasterKey(v)
	if err != nil {
		return nil, fmt.Errorf("LISTGATE_SECRET_KEY: %w", err)
	}
	return k, nil
}

// createdWebhook is what `webhooks create` and `rotate-secret` print: the
// secret is shown then only.
type createdWebhook struct {
	ID     string   `json:"id"`
	Secret string   `json:"secret"`
	SiteID string   `json:"site_id"`
	URL    string   `json:"url"`
	Events []string `json:"events"`
	// PreviousSecretUntil is when the secret before a rotation stops
	// signing.
	PreviousSecretUntil *time.Time `json:"previous_secret_until,omitempty"`
}

func cmdWebhooksCreate(ctx context.Context, args []string, e *env) error {
	fs := newFlags("webhooks create", e)
	site := fs.String("site", "", "site id")
	url := fs.String("url", "", "the endpoint's URL (http or https)")
	events := fs.String("events", "", "comma-separated: "+strings.Join(store.WebhookEvents, ", "))
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parse(fs, args, 0); err != nil {
		return err
	}
	if err := required(fs, "site", *site, "url", *url, "events", *events); err != nil {
		return err
	}
	key, err := secretKey(e)
	if err != nil {
		return err
	}
	allow, _ := e.getenv("LISTGATE_WEBHOOK_ALLOW_TARGETS")
	u, err := webhook.CheckURL(*url, delivery.ClientOptions(allow, 0))
	if err != nil {
		return fmt.Errorf("--url: %w", err)
	}
	return withDB(ctx, e, func(db *store.DB) error {
		ep, err := db.CreateWebhookEndpoint(ctx, *site, u, strings.Split(*events, ","))
		if err != nil {
			return err
		}
		out := createdWebhook{ID: ep.ID, Secret: webhook.DeriveSecret(key, ep.ID, ep.SecretGen), SiteID: ep.SiteID,
			URL: ep.URL, Events: ep.Events}
		if *asJSON {
			return printJSON(e.stdout, out)
		}
		fmt.Fprintf(e.stdout, "created webhook endpoint %s for site %s: %s (%s)\n\n  %s\n\n", ep.ID, ep.SiteID, ep.URL,
			strings.Join(ep.Events, ", "), out.Secret)
		fmt.Fprintln(e.stderr, "Give this signing secret to the receiver now: it is shown once.")
		return nil
	})
}

func cmdWebhooksList(ctx context.Context, args []string, e *env) error {
	fs := newFlags("webhooks list", e)
	site := fs.String("site", "", "site id (default: every site)")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parse(fs, args, 0); err != nil {
		return err
	}
	return withDB(ctx, e, func(db *store.DB) error {
		eps, err := db.WebhookEndpoints(ctx, *site)
		if err != nil {
			return err
		}
		if eps == nil {
			eps = []store.WebhookEndpoint{}
		}
		if *asJSON {
			return printJSON(e.stdout, map[string]any{"webhooks": eps})
		}
		tw := tabwriter.NewWriter(e.stdout, 2, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tSITE\tURL\tEVENTS\tSTATE\tFAILURES")
		for _, ep := range eps {
			state := "enabled"
			if !ep.Enabled {
				state = "disabled (" + ep.DisabledReason + ")"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\n", ep.ID, ep.SiteID, ep.URL, strings.Join(ep.Events, ","), state, ep.Failures)
		}
		return tw.Flush()
	})
}

func cmdWebhooksEnable(ctx context.Context, args []string, e *env, enabled bool) error {
	name := "webhooks disable"
	if enabled {
		name = "webhooks enable"
	}
	fs := newFlags(name, e)
	if err := parse(fs, args, 1); err != nil {
		return err
	}
	return withDB(ctx, e, func(db *store.DB) error {
		ep, err := db.SetWebhookEnabled(ctx, "", fs.Arg(0), enabled)
		if err != nil {
			return err
		}
		if enabled {
			fmt.Fprintf(e.stdout, "enabled webhook endpoint %s (%s); deliveries held while it was disabled wait for `webhooks replay`\n", ep.ID, ep.URL)
		} else {
			fmt.Fprintf(e.stdout, "disabled webhook endpoint %s (%s); its new events are held\n", ep.ID, ep.URL)
		}
		return nil
	})
}

func cmdWebhooksDelete(ctx context.Context, args []string, e *env) error {
	fs := newFlags("webhooks delete", e)
	if err := parse(fs, args, 1); err != nil {
		return err
	}
	return withDB(ctx, e, func(db *store.DB) error {
		if err := db.DeleteWebhookEndpoint(ctx, "", fs.Arg(0)); err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "deleted webhook endpoint %s and its deliveries\n", fs.Arg(0))
		return nil
	})
}

func cmdWebhooksRotate(ctx context.Context, args []string, e *env) error {
	fs := newFlags("webhooks rotate-secret", e)
	overlap := fs.Duration("overlap", 24*time.Hour, "how long the previous secret keeps signing beside the new one (0..168h)")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := parseAnywhere(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return fmt.Errorf("%w: webhooks rotate-secret takes a WEBHOOK_ID", errUsage)
	}
	if *overlap < 0 || *overlap > 7*24*time.Hour {
		return fmt.Errorf("%w: --overlap must be between 0 and 168h", errUsage)
	}
	key, err := secretKey(e)
	if err != nil {
		return err
	}
	return withDB(ctx, e, func(db *store.DB) error {
		ep, err := db.RotateWebhookSecret(ctx, "", pos[0], *overlap)
		if err != nil {
			return err
		}
		out := createdWebhook{ID: ep.ID, Secret: webhook.DeriveSecret(key, ep.ID, ep.SecretGen), SiteID: ep.SiteID,
			URL: ep.URL, Events: ep.Events, PreviousSecretUntil: ep.PrevSecretUntil}
		if *asJSON {
			return printJSON(e.stdout, out)
		}
		fmt.Fprintf(e.stdout, "new signing secret for webhook endpoint %s; the previous one also signs until %s\n\n  %s\n\n",
			ep.ID, ep.PrevSecretUntil.Format(time.RFC3339), out.Secret)
		return nil
	})
}

func cmdWebhooksReplay(ctx context.Context, args []string, e *env) error {
	fs := newFlags("webhooks replay", e)
	since := fs.String("since", "", "RFC 3339 time, or a duration back from now (e.g. 6h)")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := parseAnywhere(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 || *since == "" {
		return fmt.Errorf("%w: webhooks replay takes a WEBHOOK_ID and --since", errUsage)
	}
	from, err := parseSince(*since, time.Now())
	if err != nil {
		return fmt.Errorf("%w: --since: %v", errUsage, err)
	}
	return withDB(ctx, e, func(db *store.DB) error {
		n, err := db.ReplayWebhooks(ctx, "", pos[0], from)
		if err != nil {
			return err
		}
		if *asJSON {
			return printJSON(e.stdout, map[string]any{"id": pos[0], "since": from, "queued": n})
		}
		fmt.Fprintf(e.stdout, "queued %d deliveries to webhook endpoint %s (since %s)\n", n, pos[0], from.Format(time.RFC3339))
		return nil
	})
}

// parseSince reads an RFC 3339 time or a duration back from now.
func parseSince(s string, now time.Time) (time.Time, error) {
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is neither an RFC 3339 time nor a duration", s)
	}
	return t, nil
}

func cmdWebhooksDeliveries(ctx context.Context, args []string, e *env) error {
	fs := newFlags("webhooks deliveries", e)
	limit := fs.Int("limit", 50, "lines, newest first (1..1000)")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := parseAnywhere(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 || *limit < 1 || *limit > 1000 {
		return fmt.Errorf("%w: webhooks deliveries takes a WEBHOOK_ID (and --limit 1..1000)", errUsage)
	}
	return withDB(ctx, e, func(db *store.DB) error {
		if _, err := db.WebhookEndpoint(ctx, "", pos[0]); err != nil {
			return err
		}
		rows, err := db.DeliveryLog(ctx, "", pos[0], *limit)
		if err != nil {
			return err
		}
		if *asJSON {
			out := make([]map[string]any, 0, len(rows))
			for _, r := range rows {
				out = append(out, map[string]any{"delivery_id": r.DeliveryID, "webhook_id": delivery.MessageID(r.EventID),
					"event": r.EventType, "lead_id": r.LeadID, "state": r.State, "attempt": r.Attempt, "at": r.At,
					"status": r.Status, "latency_ms": r.LatencyMS, "error": r.Error, "response": r.Response})
			}
			return printJSON(e.stdout, map[string]any{"deliveries": out})
		}
		tw := tabwriter.NewWriter(e.stdout, 2, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "DELIVERY\tWEBHOOK-ID\tEVENT\tSTATE\tATTEMPT\tAT\tSTATUS\tLATENCY\tERROR")
		for _, r := range rows {
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%s\t%d\t%dms\t%s\n", r.DeliveryID, delivery.MessageID(r.EventID), r.EventType,
				r.State, r.Attempt, r.At.Format(time.RFC3339), r.Status, r.LatencyMS, r.Error)
		}
		return tw.Flush()
	})
}

func cmdWebhooksNewSecretKey(_ context.Context, args []string, e *env) error {
	fs := newFlags("webhooks new-secret-key", e)
	if err := parse(fs, args, 0); err != nil {
		return err
	}
	fmt.Fprintln(e.stdout, webhook.NewMasterKey())
	return nil
}
