package config

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"time"
)

// Origin configures the origin. The zero value is not valid: start from
// DefaultOrigin.
type Origin struct {
	// Addr is the HTTP listen address (LISTGATE_ORIGIN_ADDR). Default 127.0.0.1:8081.
	Addr string `yaml:"addr"`
	// DatabaseURL is the Postgres connection string (LISTGATE_DATABASE_URL). Required.
	DatabaseURL string `yaml:"database_url"`
	// InternalToken authenticates the edge's identity headers
	// (LISTGATE_INTERNAL_TOKEN). Required, at least 32 characters.
	InternalToken string `yaml:"internal_token"`
	// PublicURL is the edge's public base URL, ending before /v1
	// (LISTGATE_PUBLIC_URL). Default http://127.0.0.1:8080.
	PublicURL string `yaml:"public_url"`
	// DatabaseMaxConns caps the pool (LISTGATE_DATABASE_MAX_CONNS). Default 20.
	DatabaseMaxConns int `yaml:"database_max_conns"`

	// ReadHeaderTimeout, ReadTimeout, WriteTimeout and IdleTimeout bound each
	// connection. Defaults 5 s, 30 s, 60 s, 120 s.
	ReadHeaderTimeout time.Duration `yaml:"read_header_timeout"`
	ReadTimeout       time.Duration `yaml:"read_timeout"`
	WriteTimeout      time.Duration `yaml:"write_timeout"`
	IdleTimeout       time.Duration `yaml:"idle_timeout"`
	// MaxHeaderBytes bounds request headers. Default 16 KiB.
	MaxHeaderBytes int `yaml:"max_header_bytes"`
	// RequestTimeout bounds the work of each request once its headers are
	// read (LISTGATE_ORIGIN_REQUEST_TIMEOUT): past it the request's context
	// ends, its query is cancelled, and the client is answered 503
	// SERVICE_UNAVAILABLE. Postgres holds each statement of the pool to
	// StatementTimeout, a little less. The event stream, feed uploads and
	// profiles keep bounds of their own; lead submissions keep theirs (10 s).
	// Default 10 s; 10ms..10m, and no longer than write_timeout.
	RequestTimeout time.Duration `yaml:"request_timeout"`
	// ShutdownTimeout bounds the drain on SIGTERM/SIGINT. Default 15 s.
	ShutdownTimeout time.Duration `yaml:"shutdown_timeout"`
	// LogLevel is debug, info, warn or error (LISTGATE_LOG_LEVEL). Default info.
	LogLevel string `yaml:"log_level"`

	// FeedWorkers is the number of REAXML import workers. Default 2.
	FeedWorkers int `yaml:"feed_workers"`
	// FeedMaxBytes bounds an uploaded feed, both as sent and decompressed.
	// Default 50 MiB.
	FeedMaxBytes int64 `yaml:"feed_max_bytes"`
	// OAuthTokenTTL is the lifetime of an upload API access token. Default 1 h.
	OAuthTokenTTL time.Duration `yaml:"oauth_token_ttl"`

	// LeadDuplicateWindow is how far back a lead submission is compared with
	// the site's earlier leads to be recognised as a duplicate. Default 24 h.
	LeadDuplicateWindow time.Duration `yaml:"lead_duplicate_window"`
	// LeadBatch is the most lead submissions arriving together that are
	// stored in one transaction (group commit; LISTGATE_LEAD_BATCH); 1
	// stores each in its own. Default 32.
	LeadBatch int `yaml:"lead_batch"`

	// CacheControlListings is the Cache-Control of listing, search,
	// featured, fields, media and agent responses; the edge's response
	// cache takes its freshness from it. Default "private, max-age=60,
	// stale-while-revalidate=300, stale-if-error=86400".
	CacheControlListings string `yaml:"cache_control_listings"`
	// CacheControlStats is the Cache-Control of the stats summary. Default
	// "private, max-age=30, stale-while-revalidate=60, stale-if-error=3600".
	CacheControlStats string `yaml:"cache_control_stats"`

	// SecretKey is the operator's key from which webhook signing secrets
	// are derived (LISTGATE_SECRET_KEY): base64 or hex of at least 32
	// bytes. Unset, webhooks cannot be created or sent.
	SecretKey string `yaml:"secret_key"`
	// SMTPURL is where lead e-mail is sent (LISTGATE_SMTP_URL), e.g.
	// smtp://user:pass@mail.example.com:587?from=leads@example.com (see
	// pkg/mail). Unset, e-mail is off.
	SMTPURL string `yaml:"smtp_url"`
	// WebhookAllowTargets widens the addresses webhooks may be sent to
	// (LISTGATE_WEBHOOK_ALLOW_TARGETS): "public" (default: no loopback,
	// private or link-local address), "loopback" (also loopback) or
	// "private" (also loopback and private networks).
	WebhookAllowTargets string `yaml:"webhook_allow_targets"`
	// WebhookTimeout bounds one webhook attempt, connection included.
	// Default 10 s.
	WebhookTimeout time.Duration `yaml:"webhook_timeout"`
	// DeliveryWorkers is how many deliveries an origin sends at once.
	// Default 32.
	DeliveryWorkers int `yaml:"delivery_workers"`
}

// StatementTimeout is the statement_timeout of the origin's database
// connections while it serves: nine tenths of RequestTimeout, so that
// Postgres ends a slow statement itself, the connection staying usable,
// just before the request's deadline would cancel it from the client side.
// Background work that runs longer by design (an import's transactions,
// migrations) sets its own with SET LOCAL.
func (c Origin) StatementTimeout() time.Duration {
	return c.RequestTimeout / 10 * 9
}

// DefaultOrigin returns the defaults; configs/origin.yaml documents them.
func DefaultOrigin() Origin {
	return Origin{
		Addr:              "127.0.0.1:8081",
		PublicURL:         "http://127.0.0.1:8080",
		DatabaseMaxConns:  20,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    16 << 10,
		RequestTimeout:    10 * time.Second,
		ShutdownTimeout:   15 * time.Second,
		LogLevel:          "info",
		FeedWorkers:       2,
		FeedMaxBytes:      50 << 20,
		OAuthTokenTTL:     time.Hour,

		LeadDuplicateWindow:  24 * time.Hour,
		LeadBatch:            32,
		CacheControlListings: "private, max-age=60, stale-while-revalidate=300, stale-if-error=86400",
		CacheControlStats:    "private, max-age=30, stale-while-revalidate=60, stale-if-error=3600",

		WebhookAllowTargets: "public",
		WebhookTimeout:      10 * time.Second,
		DeliveryWorkers:     32,
	}
}

// LoadOrigin returns DefaultOrigin overlaid with the YAML file at path (if
// not empty) and the environment, validated. get nil means os.LookupEnv.
func LoadOrigin(path string, get Getenv) (Origin, error) {
	if get == nil {
		get = os.LookupEnv
	}
	c := DefaultOrigin()
	if err := loadFile(path, &c); err != nil {
		return c, err
	}
	envString(get, "LISTGATE_ORIGIN_ADDR", &c.Addr)
	envString(get, "LISTGATE_DATABASE_URL", &c.DatabaseURL)
	envString(get, "LISTGATE_INTERNAL_TOKEN", &c.InternalToken)
	envString(get, "LISTGATE_PUBLIC_URL", &c.PublicURL)
	envString(get, "LISTGATE_LOG_LEVEL", &c.LogLevel)
	envString(get, "LISTGATE_SECRET_KEY", &c.SecretKey)
	envString(get, "LISTGATE_SMTP_URL", &c.SMTPURL)
	envString(get, "LISTGATE_WEBHOOK_ALLOW_TARGETS", &c.WebhookAllowTargets)
	if err := envDuration(get, "LISTGATE_ORIGIN_REQUEST_TIMEOUT", &c.RequestTimeout); err != nil {
		return c, err
	}
	if err := envInt(get, "LISTGATE_DATABASE_MAX_CONNS", &c.DatabaseMaxConns); err != nil {
		return c, err
	}
	if err := envInt(get, "LISTGATE_LEAD_BATCH", &c.LeadBatch); err != nil {
		return c, err
	}
	return c, c.Validate()
}

// Validate reports the first invalid setting. It never includes the
// database password or the internal token in its message.
func (c Origin) Validate() error {
	if _, _, err := net.SplitHostPort(c.Addr); err != nil {
		return fmt.Errorf("config: addr %q: %w", c.Addr, err)
	}
	if c.DatabaseURL == "" {
		return fmt.Errorf("config: LISTGATE_DATABASE_URL is required")
	}
	if len(c.InternalToken) < 32 {
		return fmt.Errorf("config: LISTGATE_INTERNAL_TOKEN is required and must be at least 32 characters")
	}
	if u, err := url.Parse(c.PublicURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("config: public_url %q must be an absolute http(s) URL", c.PublicURL)
	}
	if c.DatabaseMaxConns < 1 || c.DatabaseMaxConns > 1000 {
		return fmt.Errorf("config: database_max_conns %d out of range 1..1000", c.DatabaseMaxConns)
	}
	if c.LeadBatch < 1 || c.LeadBatch > 256 {
		return fmt.Errorf("config: lead_batch %d out of range 1..256", c.LeadBatch)
	}
	for name, d := range map[string]time.Duration{
		"read_header_timeout": c.ReadHeaderTimeout, "read_timeout": c.ReadTimeout,
		"write_timeout": c.WriteTimeout, "idle_timeout": c.IdleTimeout, "shutdown_timeout": c.ShutdownTimeout,
	} {
		if d <= 0 {
			return fmt.Errorf("config: %s must be positive", name)
		}
	}
	if c.RequestTimeout < 10*time.Millisecond || c.RequestTimeout > 10*time.Minute {
		return fmt.Errorf("config: request_timeout %v out of range 10ms..10m", c.RequestTimeout)
	}
	if c.RequestTimeout > c.WriteTimeout {
		return fmt.Errorf("config: request_timeout %v is longer than write_timeout %v", c.RequestTimeout, c.WriteTimeout)
	}
	if c.MaxHeaderBytes < 1024 {
		return fmt.Errorf("config: max_header_bytes must be at least 1024")
	}
	switch c.WebhookAllowTargets {
	case "public", "loopback", "private":
	default:
		return fmt.Errorf("config: webhook_allow_targets %q must be public, loopback or private", c.WebhookAllowTargets)
	}
	if c.WebhookTimeout < time.Second || c.WebhookTimeout > time.Minute {
		return fmt.Errorf("config: webhook_timeout %v out of range 1s..1m", c.WebhookTimeout)
	}
	if c.DeliveryWorkers < 1 || c.DeliveryWorkers > 256 {
		return fmt.Errorf("config: delivery_workers %d out of range 1..256", c.DeliveryWorkers)
	}
	if c.FeedWorkers < 1 || c.FeedWorkers > 64 {
		return fmt.Errorf("config: feed_workers %d out of range 1..64", c.FeedWorkers)
	}
	if c.FeedMaxBytes < 1<<10 || c.FeedMaxBytes > 1<<30 {
		return fmt.Errorf("config: feed_max_bytes %d out of range 1 KiB..1 GiB", c.FeedMaxBytes)
	}
	if c.OAuthTokenTTL < time.Minute || c.OAuthTokenTTL > 24*time.Hour {
		return fmt.Errorf("config: oauth_token_ttl %s out of range 1m..24h", c.OAuthTokenTTL)
	}
	for name, v := range map[string]string{"cache_control_listings": c.CacheControlListings, "cache_control_stats": c.CacheControlStats} {
		if strings.TrimSpace(v) == "" || len(v) > 200 || strings.ContainsAny(v, "\r\n") {
			return fmt.Errorf("config: %s must be a Cache-Control value", name)
		}
	}
	if c.LeadDuplicateWindow < time.Minute || c.LeadDuplicateWindow > 30*24*time.Hour {
		return fmt.Errorf("config: lead_duplicate_window %s out of range 1m..720h", c.LeadDuplicateWindow)
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		return fmt.Errorf("config: log_level %q is not debug, info, warn or error", c.LogLevel)
	}
	return nil
}
