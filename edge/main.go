// Command edge is Listgate's public gateway: it checks API keys, scopes, the
// key's site and the site's plan rate limit, serves cached listing reads and
// forwards writes and misses to the origin (DESIGN.md §2–§4). It keeps no
// state of its own: run as many as you like behind a load balancer, with
// LISTGATE_REDIS_URL so they share the rate limits.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/listgate/listgate/edge/gateway"
	"github.com/listgate/listgate/edge/keycache"
	"github.com/listgate/listgate/edge/respcache"
	"github.com/listgate/listgate/edge/upstream"
	"github.com/listgate/listgate/edge/usage"
	"github.com/listgate/listgate/edge/views"
	"github.com/listgate/listgate/pkg/config"
	"github.com/listgate/listgate/pkg/logctx"
	"github.com/listgate/listgate/pkg/logfmt"
	"github.com/listgate/listgate/pkg/ratelimit"
	"github.com/listgate/listgate/pkg/telemetry"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "edge: %v\n", err)
		os.Exit(1)
	}
}

// run parses flags, builds the gateway and serves until ctx ends, then
// drains connections for at most the shutdown timeout.
func run(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("edge", flag.ContinueOnError)
	fs.SetOutput(stderr)
	configPath := fs.String("config", "", "YAML config file (default: built-in defaults, see configs/edge.yaml)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg, err := config.LoadEdge(*configPath, nil)
	if err != nil {
		return err
	}
	var level slog.Level
	_ = level.UnmarshalText([]byte(cfg.LogLevel))
	format, err := logfmt.Parse(os.Getenv(logfmt.Env), logfmt.JSON)
	if err != nil {
		return err
	}
	log := slog.New(logfmt.NewHandler(stderr, format, &slog.HandlerOptions{Level: level})).With("service", "edge")
	// Request paths log with their context: request and trace ids.
	log = slog.New(logctx.NewHandler(log.Handler()))
	tracing, err := telemetry.Start(ctx, "listgate-edge", os.LookupEnv, log)
	if err != nil {
		return err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := tracing.Shutdown(sctx); err != nil {
			log.Warn("tracing: spans lost at shutdown", "err", err)
		}
	}()

	// The port is taken first, so a busy one fails at once; then the
	// origin is asked whether it takes our token. Requests wait in the
	// listen backlog for the moment the rest takes to build.
	lns, err := listen(cfg.Addr, cfg.Listeners)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.Addr, err)
	}
	defer func() {
		for _, ln := range lns {
			ln.Close()
		}
	}()
	conns := newConnLimit(cfg.MaxConnections, cfg.MaxConnectionsPerIP, cfg.TrustedPrefixes())
	for i, ln := range lns {
		lns[i] = conns.wrap(ln)
	}
	adm, err := listenAdmin(cfg.AdminAddr)
	if err != nil {
		return fmt.Errorf("listen on %s (admin_addr, LISTGATE_EDGE_ADMIN_ADDR): %w", cfg.AdminAddr, err)
	}
	defer adm.Close()
	// Before the listening line: whoever waits for that one knows both.
	log.Info("admin endpoints", "admin_addr", adm.Addr(), "paths", "/metrics /debug/pprof/")
	origins, err := upstream.New(upstream.Options{URLs: cfg.OriginURLs(), InternalToken: cfg.InternalToken,
		Timeout: cfg.OriginTimeout, StreamTimeout: max(cfg.OriginTimeout, cfg.UploadTimeout),
		HealthInterval: cfg.OriginHealthInterval, Log: log})
	if err != nil {
		return err
	}
	if err := checkOrigins(origins, 5*time.Second, log); err != nil {
		return err
	}
	origins.Check()
	go origins.Run(ctx)

	keys, err := keycache.New(keycache.OriginIntrospector(origins, 0), keycache.Options{TTL: cfg.KeyTTL,
		NegativeTTL: cfg.NegativeKeyTTL, FetchCORS: keycache.OriginCORSFetcher(origins, 0)})
	if err != nil {
		return err
	}
	defer keys.Close()

	var limiter gateway.Limiter = ratelimit.NewLocal(ratelimit.LocalOptions{})
	if cfg.RedisURL != "" {
		r, err := ratelimit.NewRedis(ctx, ratelimit.RedisOptions{URL: cfg.RedisURL, Timeout: cfg.RedisTimeout,
			ExpectedEdges: cfg.ExpectedEdges, Log: log})
		if err != nil {
			return err
		}
		defer r.Close()
		limiter = r
	}
	cache, err := respcache.New(respcache.Options{MaxBytes: cfg.ResponseCacheBytes})
	if err != nil {
		return err
	}
	defer cache.Close()
	reporter := usage.New(origins, 10*time.Second, log)
	reportDone := make(chan struct{})
	go func() { defer close(reportDone); reporter.Run(ctx) }()
	defer func() { <-reportDone }()
	// View counts are reported after the server has drained (this defer
	// runs after the shutdown below): a SIGTERM'd edge reports every beacon
	// it answered.
	viewCounter := views.New(views.OriginSender(origins), views.Options{Interval: cfg.ViewsInterval,
		ClientLimit: cfg.ViewsClientLimit, MaxVisitors: cfg.ViewsMaxVisitors}, log)
	viewsCtx, stopViews := context.WithCancel(context.WithoutCancel(ctx))
	viewsDone := make(chan struct{})
	go func() { defer close(viewsDone); viewCounter.Run(viewsCtx) }()
	defer func() { stopViews(); <-viewsDone }()
	gw, err := gateway.New(gateway.Config{
		Cache: cache, Usage: reporter, Views: viewCounter,
		Origins: origins, Keys: keys, Sites: keys, Limiter: limiter,
		PublicLimiter: ratelimit.NewLocal(ratelimit.LocalOptions{}), PublicLimit: cfg.PublicLimit,
		TrustedProxies: cfg.TrustedPrefixes(), OriginTimeout: cfg.OriginTimeout, Log: log,
		MaxUploadBytes: cfg.MaxBodyBytes, UploadTimeout: cfg.UploadTimeout, MaxUploads: cfg.MaxUploads,
		UploadIdleTimeout: cfg.ReadTimeout,
		AuthFailureLimit:  cfg.AuthFailureLimit,
		Tracer:            tracing.Tracer(),
	})
	if err != nil {
		return err
	}
	adm.serve(keys, cache, log)
	stream, err := followEvents(ctx, origins, keys, cache, log)
	if err != nil {
		return err
	}
	// A stream moving to another origin (a deploy) is not unready.
	gw.SetSynced(func() bool { return stream.SyncedWithin(5 * time.Second) })

	srv := &fasthttp.Server{
		Handler:            gw.Handler,
		ErrorHandler:       gw.ServerError,
		Name:               "listgate-edge",
		ReadTimeout:        cfg.ReadTimeout,
		WriteTimeout:       cfg.WriteTimeout,
		IdleTimeout:        cfg.IdleTimeout,
		ReadBufferSize:     cfg.MaxHeaderBytes,
		WriteBufferSize:    cfg.WriteBufferBytes,
		MaxRequestBodySize: cfg.MaxBodyBytes,
		// Bodies stream: the request path reads one only after its route,
		// key and limits allow it, and only up to the route's limit
		// (gateway/body.go). Multipart bodies are not parsed here.
		StreamRequestBody:            true,
		DisablePreParseMultipartForm: true,
		HeaderReceived:               gw.HeaderReceived,
		ExpectHandler:                gw.ExpectContinue,
		// A request fasthttp cannot parse is logged without its bytes.
		SecureErrorLogMessage:         true,
		NoDefaultServerHeader:         true,
		NoDefaultContentType:          true,
		DisableHeaderNamesNormalizing: false,
		CloseOnShutdown:               true,
		Logger:                        redactingLogger{log},
	}
	log.Info("edge listening", "addr", lns[0].Addr().String(), "listeners", len(lns), "max_connections", cfg.MaxConnections, "origin", cfg.OriginURL,
		"redis", cfg.RedisURL != "", "tracing", tracing.Endpoint() != "")
	errc := make(chan error, len(lns))
	for _, ln := range lns {
		go func() { errc <- srv.Serve(ln) }()
	}
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down", "timeout", cfg.ShutdownTimeout.String())
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.ShutdownTimeout)
	defer cancel()
	err = srv.ShutdownWithContext(sctx)
	log.Info("stopped")
	return err
}
