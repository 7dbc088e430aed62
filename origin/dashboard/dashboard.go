// Package dashboard is the agency staff dashboard the origin serves under
// /dashboard: server-rendered HTML (html/template, embedded templates, a
// little plain CSS and JS) for signing in, the account's sites, their API
// keys, allowed browser origins, WordPress pairings, leads, listings,
// listing performance (a listing's daily views and enquiries, the week's
// top listings, the printable vendor report), agents, usage (charted by
// package chart) and lead delivery (webhook endpoints and their delivery
// logs). A site's pages show times in the
// site's time zone, the others in UTC, always naming the zone (timefmt.go).
// Every page and action checks that the site belongs to the signed-in user's account;
// another account's site is 404.
//
// Handlers render their own HTML error pages rather than the API's JSON
// envelope: they return nil to the API server, except for panics.
package dashboard

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/listgate/listgate/origin/api"
	"github.com/listgate/listgate/origin/dashboard/chart"
	"github.com/listgate/listgate/origin/store"
	"github.com/listgate/listgate/pairing"
	"github.com/listgate/listgate/pkg/apierror"
	"github.com/listgate/listgate/pkg/ratelimit"
	"github.com/listgate/listgate/pkg/webhook"
)

// Prefix is where the dashboard is served.
const Prefix = "/dashboard"

//go:embed templates/*.html
var templateFiles embed.FS

//go:embed static
var staticFiles embed.FS

// Config holds what New needs. Zero fields take the defaults named.
type Config struct {
	// DB is the origin's database. Required.
	DB *store.DB
	// Pairing approves, denies, lists and disconnects pairings. Required.
	// Build it with EntriesPerIP and EntriesPerAccount as its
	// WrongEntriesPerIP and WrongEntriesPerAccount, so that codes looked up
	// on the pairing page and codes entered count against the same limits.
	Pairing *pairing.Service
	// EntriesPerIP and EntriesPerAccount limit wrong user codes. Nil: 10
	// per 10 minutes each, in memory.
	EntriesPerIP, EntriesPerAccount pairing.Limiter
	// The sign-in limits (see admitSignIn). Their defaults keep their
	// counts in Postgres, so that every origin of a deployment counts the
	// same attempts.
	//
	// FailedLoginsPerIP limits failed sign-ins per client address, whatever
	// the e-mail. Nil: 20 per 15 minutes (fixed windows from an address's
	// first failure), scope signin_ip.
	FailedLoginsPerIP pairing.Limiter
	// SignInsPerAddress delays the sign-ins of one e-mail from one client
	// address: every attempt counts, a success forgets them. Nil: 5
	// attempts free, then 1 s, 2 s, 4 s … up to 15 minutes from the last
	// one, forgotten an hour after the last (store.Backoff's defaults),
	// scope signin_email_ip.
	SignInsPerAddress Backoff
	// FailedLoginsPerEmail is the ceiling of failed sign-ins per e-mail
	// from every address together, the last line against guessing from
	// many addresses: past it, the e-mail signs in only from the addresses
	// of KnownAddresses. Nil: 100 per hour (fixed windows from the first
	// failure), scope signin_email_hour.
	FailedLoginsPerEmail pairing.Limiter
	// KnownAddresses remembers the (e-mail, client address) pairs that
	// signed in. Nil: for 30 days after the last sign-in, scope
	// signin_known.
	KnownAddresses Recent
	// SessionTTL is how long a session lasts from sign-in. Default 12 h.
	SessionTTL time.Duration
	// ClientIP names a request's client. Nil: api.ClientIP.
	ClientIP func(*http.Request) string
	// Log receives internal errors and sign-ins, never a password or token.
	// Nil: slog.Default().
	Log *slog.Logger
	// Now is the clock. Nil: time.Now.
	Now func() time.Time
	// SecretKey is the operator's master key (LISTGATE_SECRET_KEY, decoded
	// by webhook.ParseMasterKey) from which webhook signing secrets derive.
	// Nil: webhook endpoints can be listed, disabled and deleted but not
	// created nor their secrets rotated, and the webhooks page says why.
	// When set it must be at least webhook.MinMasterKeyLen bytes.
	SecretKey []byte
	// WebhookTargets are the addresses a webhook URL typed into the
	// dashboard may name (webhook.CheckURL): build them with
	// delivery.ClientOptions from the origin's webhook_allow_targets, as
	// the delivery worker's are. The zero value allows public internet
	// addresses only.
	WebhookTargets webhook.ClientOptions
	// EmailOn says whether the origin e-mails new leads (LISTGATE_SMTP_URL
	// is set); the webhooks page says so. Default false.
	EmailOn bool
}

// Backoff delays repeated attempts of a key (store.BackoffLimiter).
// Implementations must be safe for concurrent use.
type Backoff interface {
	// Attempt counts an attempt of key at now when it may make one; when
	// it may not, it counts nothing and says how long until it may (at
	// least a second).
	Attempt(key string, now time.Time) (ok bool, wait time.Duration)
	// Reset forgets key's attempts.
	Reset(key string)
}

// Recent remembers keys for a while (store.RecentKeys). Implementations
// must be safe for concurrent use.
type Recent interface {
	// Mark remembers key from now.
	Mark(key string, now time.Time)
	// Recent reports whether key is remembered at now.
	Recent(key string, now time.Time) bool
}

var (
	_ Backoff = (*store.BackoffLimiter)(nil)
	_ Recent  = (*store.RecentKeys)(nil)
)

// Handler serves the dashboard. Safe for concurrent use.
type Handler struct {
	cfg   Config
	db    *store.DB
	log   *slog.Logger
	pages map[string]*template.Template
}

var _ api.Mounter = (*Handler)(nil)

// New returns the dashboard, or an error when a required field is missing.
func New(cfg Config) (*Handler, error) {
	if cfg.DB == nil || cfg.Pairing == nil {
		return nil, errors.New("dashboard: DB and Pairing are required")
	}
	if cfg.SecretKey != nil && len(cfg.SecretKey) < webhook.MinMasterKeyLen {
		return nil, fmt.Errorf("dashboard: SecretKey must be at least %d bytes (webhook.ParseMasterKey)", webhook.MinMasterKeyLen)
	}
	if cfg.EntriesPerIP == nil {
		cfg.EntriesPerIP = ratelimit.NewWindowLimiter(10, 10*time.Minute)
	}
	if cfg.EntriesPerAccount == nil {
		cfg.EntriesPerAccount = ratelimit.NewWindowLimiter(10, 10*time.Minute)
	}
	if cfg.FailedLoginsPerIP == nil {
		cfg.FailedLoginsPerIP = cfg.DB.NewWindowLimiter("signin_ip", 20, 15*time.Minute)
	}
	if cfg.SignInsPerAddress == nil {
		cfg.SignInsPerAddress = cfg.DB.NewBackoffLimiter("signin_email_ip", store.Backoff{})
	}
	if cfg.FailedLoginsPerEmail == nil {
		cfg.FailedLoginsPerEmail = cfg.DB.NewWindowLimiter("signin_email_hour", 100, time.Hour)
	}
	if cfg.KnownAddresses == nil {
		cfg.KnownAddresses = cfg.DB.NewRecentKeys("signin_known", 30*24*time.Hour)
	}
	if cfg.SessionTTL == 0 {
		cfg.SessionTTL = 12 * time.Hour
	}
	if cfg.ClientIP == nil {
		cfg.ClientIP = api.ClientIP
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	pages, err := parsePages()
	if err != nil {
		return nil, err
	}
	return &Handler{cfg: cfg, db: cfg.DB, log: cfg.Log, pages: pages}, nil
}

// Mount registers the dashboard's routes. Each answers a request that came
// over HTTPS with Strict-Transport-Security (see hsts).
func (h *Handler) Mount(mount func(pattern string, hf api.HandlerFunc)) {
	handle := func(pattern string, hf api.HandlerFunc) { mount(pattern, hsts(hf)) }
	handle("GET "+Prefix+"/static/{file}", h.static)
	handle("GET "+Prefix+"/login", h.public(h.loginForm))
	handle("POST "+Prefix+"/login", h.public(h.login))
	handle("POST "+Prefix+"/logout", h.signedIn(h.logout))
	handle("GET "+Prefix, h.signedIn(h.home))
	handle("GET "+Prefix+"/{$}", h.signedIn(h.home))
	handle("GET "+Prefix+"/sites/{site}", h.signedIn(h.siteDetail))
	handle("POST "+Prefix+"/sites/{site}/cors", h.signedIn(h.setCORS))
	handle("GET "+Prefix+"/sites/{site}/keys", h.signedIn(h.keys))
	handle("POST "+Prefix+"/sites/{site}/keys", h.signedIn(h.createKey))
	handle("POST "+Prefix+"/sites/{site}/keys/{key}/revoke", h.signedIn(h.revokeKey))
	handle("GET "+Prefix+"/sites/{site}/pairings", h.signedIn(h.pairings))
	handle("POST "+Prefix+"/sites/{site}/pairings/{pairing}/disconnect", h.signedIn(h.disconnectPairing))
	handle("GET "+Prefix+"/sites/{site}/leads", h.signedIn(h.leads))
	handle("GET "+Prefix+"/sites/{site}/leads/export", h.signedIn(h.exportLeads))
	handle("GET "+Prefix+"/sites/{site}/leads/{lead}", h.signedIn(h.leadDetail))
	handle("POST "+Prefix+"/sites/{site}/leads/{lead}/status", h.signedIn(h.setLeadStatus))
	handle("GET "+Prefix+"/sites/{site}/listings", h.signedIn(h.listings))
	handle("POST "+Prefix+"/sites/{site}/listings/{ref}/featured", h.signedIn(h.toggleFeatured))
	handle("GET "+Prefix+"/sites/{site}/listings/{ref}", h.signedIn(h.listingDetail))
	handle("GET "+Prefix+"/sites/{site}/listings/{ref}/report", h.signedIn(h.vendorReport))
	handle("GET "+Prefix+"/sites/{site}/performance", h.signedIn(h.performance))
	handle("GET "+Prefix+"/sites/{site}/clients", h.signedIn(h.clients))
	handle("GET "+Prefix+"/sites/{site}/usage", h.signedIn(h.usage))
	handle("GET "+Prefix+"/sites/{site}/agents", h.signedIn(h.agents))
	handle("POST "+Prefix+"/sites/{site}/clients", h.signedIn(h.createClient))
	handle("POST "+Prefix+"/sites/{site}/clients/{client}/revoke", h.signedIn(h.revokeClient))
	handle("GET "+Prefix+"/sites/{site}/webhooks", h.signedIn(h.webhooks))
	handle("POST "+Prefix+"/sites/{site}/webhooks", h.signedIn(h.createWebhook))
	handle("GET "+Prefix+"/sites/{site}/webhooks/{webhook}", h.signedIn(h.webhookLog))
	handle("POST "+Prefix+"/sites/{site}/webhooks/{webhook}/enable", h.signedIn(h.enableWebhook))
	handle("POST "+Prefix+"/sites/{site}/webhooks/{webhook}/disable", h.signedIn(h.disableWebhook))
	handle("POST "+Prefix+"/sites/{site}/webhooks/{webhook}/delete", h.signedIn(h.deleteWebhook))
	handle("POST "+Prefix+"/sites/{site}/webhooks/{webhook}/rotate", h.signedIn(h.rotateWebhook))
	handle("POST "+Prefix+"/sites/{site}/webhooks/{webhook}/replay", h.signedIn(h.replayWebhooks))
	handle("POST "+Prefix+"/sites/{site}/webhooks/{webhook}/deliveries/{delivery}/resend", h.signedIn(h.resendDelivery))
	handle("GET "+Prefix+"/pairing", h.signedIn(h.pairingForm))
	handle("POST "+Prefix+"/pairing", h.signedIn(h.decidePairing))
}

// hstsValue is the dashboard's Strict-Transport-Security: browsers that
// saw it over HTTPS use only HTTPS for the host for a year.
const hstsValue = "max-age=31536000"

// hsts sends Strict-Transport-Security on every response of hf to a request
// that came over HTTPS (isSecure), and never over plain HTTP (RFC 6797
// §7.2: browsers ignore it there, and it would promise what a plain-HTTP
// development origin cannot keep).
func hsts(hf api.HandlerFunc) api.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		if isSecure(r) {
			w.Header().Set("Strict-Transport-Security", hstsValue)
		}
		return hf(w, r)
	}
}

// pageError is an error page to show: a status and a message for people.
type pageError struct {
	status int
	msg    string
}

func (e *pageError) Error() string { return fmt.Sprintf("%d %s", e.status, e.msg) }

func errNotFound() error {
	return &pageError{http.StatusNotFound, "This page does not exist, or is not yours."}
}

func errForbidden(msg string) error { return &pageError{http.StatusForbidden, msg} }

// csp is the Content-Security-Policy of every dashboard response but the
// pages that show a listing's photo (photoCSP).
const csp = "default-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// setHeaders sets the security headers of every dashboard response.
func setHeaders(w http.ResponseWriter) {
	hd := w.Header()
	hd.Set("Content-Security-Policy", csp)
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("Referrer-Policy", "same-origin")
	hd.Set("X-Content-Type-Options", "nosniff")
}

// render writes page with data at status. Pages are never cached: they
// show account data and sometimes a secret.
func (h *Handler) render(w http.ResponseWriter, status int, page string, data map[string]any) error {
	return h.renderCSP(w, status, page, data, "")
}

// renderCSP is render with policy as the Content-Security-Policy ("": the
// dashboard's).
func (h *Handler) renderCSP(w http.ResponseWriter, status int, page string, data map[string]any, policy string) error {
	t := h.pages[page]
	if t == nil {
		return fmt.Errorf("dashboard: no page %q", page)
	}
	if data == nil {
		data = map[string]any{}
	}
	if _, ok := data["Zone"]; !ok {
		// A site's pages show times in its zone, the others in UTC.
		data["Zone"] = time.UTC
		if site, ok := data["Site"].(store.Site); ok {
			data["Zone"] = siteLocation(site)
		}
	}
	setHeaders(w)
	if policy != "" {
		w.Header().Set("Content-Security-Policy", policy)
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	return t.ExecuteTemplate(w, "layout", data)
}

// fail renders err as an error page: a pageError as it says, a NOT_FOUND
// from the store as 404, anything else as 500 (logged).
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, data map[string]any, err error) {
	pe, ok := errors.AsType[*pageError](err)
	switch {
	case ok:
	case apierror.CodeOf(err) == apierror.CodeNotFound:
		pe = errNotFound().(*pageError)
	case apierror.CodeOf(err) == apierror.CodeValidationError:
		// A refusal the store explains (a replay while one is under way,
		// a rotation inside the last one's overlap): its words, 422.
		ae, _ := errors.AsType[*apierror.Error](err)
		msgs := make([]string, 0, len(ae.Details))
		for _, m := range ae.Details {
			msgs = append(msgs, m)
		}
		slices.Sort(msgs)
		pe = &pageError{http.StatusUnprocessableEntity, "Not done: " + strings.Join(msgs, "; ") + "."}
	case errors.Is(err, context.Canceled):
		return
	default:
		h.log.ErrorContext(r.Context(), "dashboard: internal error", "err", err, "path", r.URL.Path,
			"request_id", api.RequestID(r.Context()))
		pe = &pageError{http.StatusInternalServerError, "Something went wrong on our side. Please try again."}
		if store.IsUnavailable(err) {
			pe.status = http.StatusServiceUnavailable
		}
	}
	if data == nil {
		data = map[string]any{}
	}
	data["Title"] = http.StatusText(pe.status)
	data["Status"] = pe.status
	data["Message"] = pe.msg
	if rerr := h.render(w, pe.status, "error.html", data); rerr != nil {
		h.log.WarnContext(r.Context(), "dashboard: render error page", "err", rerr)
	}
}

// static serves the embedded CSS and JS.
func (h *Handler) static(w http.ResponseWriter, r *http.Request) error {
	setHeaders(w)
	sub, _ := fs.Sub(staticFiles, "static")
	name := r.PathValue("file")
	if _, err := fs.Stat(sub, name); err != nil {
		h.fail(w, r, nil, errNotFound())
		return nil
	}
	w.Header().Set("Cache-Control", "public, max-age=300")
	http.ServeFileFS(w, r, sub, name)
	return nil
}

// parsePages parses each page template with the layout.
func parsePages() (map[string]*template.Template, error) {
	names, err := fs.Glob(templateFiles, "templates/*.html")
	if err != nil {
		return nil, err
	}
	funcs := template.FuncMap(timeFuncs())
	funcs["webhookState"] = webhookState
	funcs["count"] = func(n int64) string { return chart.Thousands(float64(n)) }
	funcs["per100"] = formatPer100
	pages := map[string]*template.Template{}
	for _, n := range names {
		base := n[len("templates/"):]
		if base == "layout.html" {
			continue
		}
		t, err := template.New(base).Funcs(funcs).ParseFS(templateFiles, "templates/layout.html", n)
		if err != nil {
			return nil, fmt.Errorf("dashboard: template %s: %w", base, err)
		}
		pages[base] = t
	}
	return pages, nil
}
