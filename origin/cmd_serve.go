package main

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/listgate/listgate/origin/api"
	"github.com/listgate/listgate/origin/dashboard"
	"github.com/listgate/listgate/origin/delivery"
	"github.com/listgate/listgate/origin/events"
	"github.com/listgate/listgate/origin/ingest"
	"github.com/listgate/listgate/origin/introspect"
	"github.com/listgate/listgate/origin/leads"
	"github.com/listgate/listgate/origin/listings"
	"github.com/listgate/listgate/origin/openapi"
	"github.com/listgate/listgate/origin/store"
	"github.com/listgate/listgate/origin/upload"
	usagereport "github.com/listgate/listgate/origin/usage"
	"github.com/listgate/listgate/origin/views"
	"github.com/listgate/listgate/pkg/config"
	"github.com/listgate/listgate/pkg/devdb"
	"github.com/listgate/listgate/pkg/devproc"
	"github.com/listgate/listgate/pkg/logctx"
	"github.com/listgate/listgate/pkg/logfmt"
	"github.com/listgate/listgate/pkg/mail"
	"github.com/listgate/listgate/pkg/telemetry"
	"github.com/listgate/listgate/pkg/webhook"
)

func cmdServe(ctx context.Context, args []string, e *env) error {
	fs := newFlags("serve", e)
	migrate := fs.Bool("migrate", false, "apply schema migrations before serving")
	configPath := fs.String("config", "", "YAML config file (default: built-in defaults, see configs/origin.yaml)")
	if err := parse(fs, args, 0); err != nil {
		return err
	}
	cfg, err := config.LoadOrigin(*configPath, e.getenv)
	if err != nil {
		return err
	}
	return serve(ctx, cfg, *migrate, e, nil)
}

// newLogger returns a JSON logger (serve's is serveLogger's).
func newLogger(w io.Writer, level string) *slog.Logger {
	var l slog.Level
	_ = l.UnmarshalText([]byte(level))
	h := logfmt.NewHandler(w, logfmt.JSON, &slog.HandlerOptions{Level: l}).WithAttrs([]slog.Attr{slog.String("service", "origin")})
	// Request paths log with their context: request and trace ids.
	return slog.New(logctx.NewHandler(h))
}

// serve runs the origin's HTTP API until ctx ends, then drains connections
// for at most cfg.ShutdownTimeout and closes the database pool. ready, when
// not nil, is called with the bound address once the listener is open.
func serve(ctx context.Context, cfg config.Origin, migrate bool, e *env, ready func(addr string)) error {
	log, err := serveLogger(e, cfg.LogLevel)
	if err != nil {
		return err
	}
	tracing, err := telemetry.Start(ctx, "listgate-origin", telemetry.Getenv(e.getenv), log)
	if err != nil {
		return err
	}
	// Deferred first: the spans of the last requests and queries are
	// exported after the rest has stopped.
	defer func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := tracing.Shutdown(sctx); err != nil {
			log.Warn("tracing: spans lost at shutdown", "err", err)
		}
	}()
	// The liveness lock lets another origin take over at once the
	// Idempotency-Key claims of this process if it dies.
	db, err := store.Open(ctx, cfg.DatabaseURL, store.Options{MaxConns: int32(cfg.DatabaseMaxConns), LeadBatch: cfg.LeadBatch, Liveness: true, Log: log,
		StatementTimeout: cfg.StatementTimeout(), Tracer: tracing.Tracer()})
	if err != nil {
		return err
	}
	defer db.Close()
	if migrate {
		applied, err := db.Migrate(ctx)
		if err != nil {
			return err
		}
		log.Info("migrated", "applied", len(applied))
	}
	feeds, err := upload.New(upload.Config{DB: db, Importer: ingest.New(db, log), Log: log,
		Workers: cfg.FeedWorkers, MaxFeedBytes: cfg.FeedMaxBytes, TokenTTL: cfg.OAuthTokenTTL, ClientIP: api.ClientIP,
		AuthFailureLimiter: db.NewWindowLimiter("oauth_failures_ip", upload.DefaultAuthFailures, time.Minute)})
	if err != nil {
		return err
	}
	hub, err := events.New(events.Config{DB: db, Log: log})
	if err != nil {
		return err
	}
	deliveries, announceDelivery, err := newDeliveryWorker(ctx, db, cfg, log)
	if err != nil {
		return err
	}
	pairings, dash, err := newPairingAndDashboard(db, cfg, log)
	if err != nil {
		return err
	}
	srv := api.New(api.Config{Ready: db.Ping, Unavailable: store.IsUnavailable, Metrics: db.WritePoolMetrics,
		RequestTimeout: cfg.RequestTimeout, TimedOut: store.IsTimeout,
		Log: log, InternalToken: cfg.InternalToken, Tracer: tracing.Tracer(),
		Mounts: []api.Mounter{hub, introspect.New(introspect.Config{DB: db}), feeds, listings.New(listings.Config{DB: db, CacheControl: listings.CacheControl{Listings: cfg.CacheControlListings, Stats: cfg.CacheControlStats}}), leads.New(leads.Config{DB: db, Log: log, DuplicateWindow: cfg.LeadDuplicateWindow}), pairings, dash, usagereport.New(usagereport.Config{DB: db}), views.New(views.Config{DB: db, Log: log}), openapi.New()}})
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	// The feed workers stop with ctx; a feed they were importing resumes in
	// the next process. They are waited for before the pool closes.
	wctx, stopWorkers := context.WithCancel(ctx)
	workersDone := make(chan struct{})
	go func() {
		defer close(workersDone)
		feeds.Run(wctx)
	}()
	// The event hub stops with ctx too, which ends the open event streams
	// so that Shutdown can complete.
	go sweepLoop(wctx, db, log)
	hubDone := make(chan struct{})
	go func() {
		defer close(hubDone)
		hub.Run(wctx)
	}()
	// Deliveries stop with ctx; the attempts in flight finish first.
	deliveriesDone := make(chan struct{})
	go func() {
		defer close(deliveriesDone)
		deliveries.Run(wctx)
	}()
	waitWorkers := func() {
		stopWorkers()
		<-workersDone
		<-hubDone
		<-deliveriesDone
	}
	defer waitWorkers()
	hs := &http.Server{
		Handler:           srv.Handler(),
		ReadHeaderTimeout: cfg.ReadHeaderTimeout,
		ReadTimeout:       cfg.ReadTimeout,
		WriteTimeout:      cfg.WriteTimeout,
		IdleTimeout:       cfg.IdleTimeout,
		MaxHeaderBytes:    cfg.MaxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	log.Info("origin listening", "addr", ln.Addr().String(), "tracing", tracing.Endpoint() != "")
	announceDelivery()
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	if ready != nil {
		// Serving already: what ready starts (the edge, in dev) may ask.
		ready(ln.Addr().String())
	}
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down", "timeout", cfg.ShutdownTimeout.String())
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.ShutdownTimeout)
	defer cancel()
	err = hs.Shutdown(sctx)
	if serr := <-errc; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	waitWorkers()
	log.Info("stopped")
	return err
}

// cmdDev is what `make run` runs: a throwaway Postgres unless
// LISTGATE_DATABASE_URL is set, migrations, demo data, the origin, and the
// edge in front of it, until Ctrl-C.
func cmdDev(ctx context.Context, args []string, e *env) error {
	fs := newFlags("dev", e)
	edgeBin := fs.String("edge", "", "the edge binary (default: edge beside this binary, then on PATH)")
	showBanner := fs.Bool("banner", false, "print the URLs and keys of the origin dev running as this user, and exit")
	if err := parse(fs, args, 0); err != nil {
		return err
	}
	if *showBanner {
		return printDevBanner(e)
	}
	overrides := map[string]string{}
	dbNote := "from LISTGATE_DATABASE_URL"
	if url, _ := e.getenv("LISTGATE_DATABASE_URL"); url == "" {
		fmt.Fprintln(e.stdout, "Starting a throwaway PostgreSQL (LISTGATE_DATABASE_URL is not set)…")
		pg, err := devdb.StartPostgres(ctx, devdb.PostgresOptions{})
		if err != nil {
			return err
		}
		defer pg.Close()
		conn, err := pgx.Connect(ctx, pg.URL)
		if err != nil {
			return err
		}
		_, err = conn.Exec(ctx, "CREATE DATABASE listgate")
		conn.Close(ctx)
		if err != nil {
			return err
		}
		overrides["LISTGATE_DATABASE_URL"] = pg.DatabaseURL("listgate")
		dbNote = pg.DatabaseURL("listgate") + " (throwaway: removed on exit)"
	}
	tokenNote := "from LISTGATE_INTERNAL_TOKEN"
	if t, _ := e.getenv("LISTGATE_INTERNAL_TOKEN"); t == "" {
		var b [32]byte
		rand.Read(b[:])
		overrides["LISTGATE_INTERNAL_TOKEN"] = hex.EncodeToString(b[:])
		tokenNote = "generated for this run"
	}
	if k, _ := e.getenv("LISTGATE_SECRET_KEY"); k == "" {
		// Webhooks work in the demo: their secrets last as long as this run.
		overrides["LISTGATE_SECRET_KEY"] = webhook.NewMasterKey()
	}
	if a, _ := e.getenv("LISTGATE_WEBHOOK_ALLOW_TARGETS"); a == "" {
		// A receiver on this machine is the usual first try.
		overrides["LISTGATE_WEBHOOK_ALLOW_TARGETS"] = "loopback"
	}
	get := func(k string) (string, bool) {
		if v, ok := overrides[k]; ok {
			return v, true
		}
		return e.getenv(k)
	}
	cfg, err := config.LoadOrigin("", get)
	if err != nil {
		return err
	}
	db, err := store.Open(ctx, cfg.DatabaseURL, store.Options{MaxConns: 4})
	if err != nil {
		return err
	}
	if _, err := db.Migrate(ctx); err != nil {
		db.Close()
		return err
	}
	fmt.Fprintln(e.stdout, "Seeding the demo site from a generated REAXML feed…")
	demo, err := seedDemo(ctx, db)
	if err != nil {
		db.Close()
		return err
	}
	dashNote := demoUser(ctx, db, demo.Site.ID)
	db.Close()
	// Ctrl-C stops the edge first, while the origin still answers: the
	// edge's last usage counts reach it, and no request through the edge
	// is cut at the origin. Then the origin stops.
	var mu sync.Mutex
	var edge *devproc.Process
	stopEdge := func() {
		mu.Lock()
		p := edge
		mu.Unlock()
		if p != nil {
			p.Stop()
		}
	}
	defer stopEdge()
	serveCtx, stopServe := context.WithCancel(context.WithoutCancel(ctx))
	defer stopServe()
	go func() {
		select {
		case <-ctx.Done():
			stopEdge()
			stopServe()
		case <-serveCtx.Done():
		}
	}()
	// Text logs (unless LISTGATE_LOG_FORMAT says json), for the edge too;
	// the banner below is kept to be shown again.
	dev, err := newDevSession(e, get)
	if err != nil {
		return err
	}
	defer dev.close()
	e = dev.env
	return serve(serveCtx, cfg, false, e, func(addr string) {
		edgeAddr, _ := get("LISTGATE_EDGE_ADDR")
		edgeAddr = cmp.Or(edgeAddr, "127.0.0.1:8080")
		p, err := startEdge(*edgeBin, edgeAddr, []string{
			"LISTGATE_INTERNAL_TOKEN=" + cfg.InternalToken,
			"LISTGATE_ORIGIN_URL=http://" + addr,
			"LISTGATE_EDGE_ADDR=" + edgeAddr,
		}, e.stderr)
		mu.Lock()
		edge = p
		mu.Unlock()
		front := "http://" + addr
		edgeLine := "not started: " + fmt.Sprint(err)
		adminLine := "-"
		if err == nil {
			front = p.URL()
			edgeLine = front + "   (the public API: keys, limits, cache)"
			if a := p.AdminURL(); a != "" {
				adminLine = a + "/metrics   (and /debug/pprof/; loopback only)"
			}
		}
		fmt.Fprintf(e.stdout, `
Listgate is running. Ctrl-C stops everything.

  edge            %[12]s
  edge metrics    %[15]s
  dashboard       %[13]s/dashboard   (%[14]s)
  origin          http://%[1]s   (GET /healthz, /readyz, /metrics)
  database        %[2]s
  internal token  %[3]s
  demo site       %[4]s  %[5]q, %[6]s plan, %[11]d listings
  read key        %[7]s  (%[8]s)
  lead key        %[9]s  (%[10]s)

Try:
  curl -s -H "Authorization: Bearer %[7]s" "%[13]s/v1/sites/%[4]s/listings?per_page=2"
  curl -s -H "Authorization: Bearer %[9]s" -H "Content-Type: application/json" \
       -d '{"name":"Sam Buyer","email":"sam@example.com","type":"inquiry"}' %[13]s/v1/leads

`, addr, dbNote, tokenNote, demo.Site.ID, demo.Site.Name, demo.Site.Plan,
			demo.ReadKey.Key, joinScopes(demo.ReadKey.Scopes), demo.LeadKey.Key, joinScopes(demo.LeadKey.Scopes),
			demo.Listings.Created, edgeLine, front, dashNote, adminLine)
	})
}

// demoUser creates the dashboard user of `make run` for the demo site and
// returns how to sign in. With a database of its own it reports an existing
// demo user rather than failing.
func demoUser(ctx context.Context, db *store.DB, siteID string) string {
	const email = "demo@listgate.example"
	var b [9]byte
	rand.Read(b[:])
	password := base64.RawURLEncoding.EncodeToString(b[:])
	hash, err := dashboard.HashPassword(password)
	if err == nil {
		_, err = db.CreateUser(ctx, store.NewUser{Email: email, PasswordHash: hash, Account: "Demo Realty", SiteIDs: []string{siteID}})
	}
	if err != nil {
		return "no demo user: " + err.Error()
	}
	return "sign in as " + email + " with " + password
}

// sweepInterval is how often an origin deletes what has expired.
const sweepInterval = 10 * time.Minute

// usageRetention is how long per-minute usage counts are kept: the
// dashboard charts the last hour of minutes (days and months come from
// usage_hours, kept store.UsageHourRetention).
const usageRetention = 48 * time.Hour

// sweepLoop runs store.Sweep now and every sweepInterval until ctx ends.
func sweepLoop(ctx context.Context, db *store.DB, log *slog.Logger) {
	t := time.NewTicker(sweepInterval)
	defer t.Stop()
	for {
		swept, err := db.Sweep(ctx, time.Now(), usageRetention)
		switch {
		case err != nil && ctx.Err() == nil:
			log.Warn("sweep", "err", err)
		case swept.Total() > 0:
			log.Info("swept expired rows", "idempotency_keys", swept.IdempotencyKeys, "sessions", swept.Sessions, "usage_minutes", swept.Usage, "usage_hours", swept.UsageHours, "usage_reports", swept.UsageReports, "feed_jobs", swept.FeedJobs, "pairings_expired", swept.Pairings)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// newDeliveryWorker sets up lead delivery from cfg: webhooks need the
// secret key, e-mail the SMTP URL. It records in the database whether new
// leads are e-mailed. announce logs what is on and off (after the
// listening line, which start-up waits for).
func newDeliveryWorker(ctx context.Context, db *store.DB, cfg config.Origin, log *slog.Logger) (w *delivery.Worker, announce func(), err error) {
	var key []byte
	if cfg.SecretKey != "" {
		if key, err = webhook.ParseMasterKey(cfg.SecretKey); err != nil {
			return nil, nil, fmt.Errorf("config: LISTGATE_SECRET_KEY: %w", err)
		}
	}
	var mailer delivery.Mailer
	if cfg.SMTPURL != "" {
		s, err := mail.NewSender(cfg.SMTPURL)
		if err != nil {
			return nil, nil, fmt.Errorf("config: LISTGATE_SMTP_URL: %w", err)
		}
		mailer = s
	}
	if err := db.SetEmailDelivery(ctx, mailer != nil); err != nil {
		return nil, nil, err
	}
	w, err = delivery.New(delivery.Config{DB: db, Log: log, SecretKey: key, Mailer: mailer, PublicURL: cfg.PublicURL,
		Workers: cfg.DeliveryWorkers, Timeout: cfg.WebhookTimeout,
		Client: webhook.NewClient(delivery.ClientOptions(cfg.WebhookAllowTargets, cfg.WebhookTimeout))})
	announce = func() {
		if key == nil {
			log.Warn("LISTGATE_SECRET_KEY is not set: webhooks cannot be created or sent")
		}
		if mailer != nil {
			log.Info("lead e-mail on", "smtp", mail.Redacted(cfg.SMTPURL))
		} else {
			log.Info("lead e-mail off: LISTGATE_SMTP_URL is not set")
		}
	}
	return w, announce, err
}
