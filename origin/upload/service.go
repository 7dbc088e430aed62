// Package upload is the REAXML upload API of API.md: OAuth 2.0 client
// credentials (POST /v1/oauth/token), feed uploads (POST /v1/feeds) and their
// status (GET /v1/feeds/{feed_id}), and the worker pool that imports queued
// feeds.
//
// Client secrets and access tokens are stored only as SHA-256 and never
// appear in logs or error messages. An uploaded feed is stored gzip-compressed
// with its root username/password attributes removed, in a feed job that
// survives restarts: workers of any origin claim jobs with FOR UPDATE SKIP
// LOCKED under a lease, so a job whose origin died is picked up again, and
// re-running a feed changes nothing because ingest is idempotent.
package upload

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/listgate/listgate/origin/api"
	"github.com/listgate/listgate/origin/ingest"
	"github.com/listgate/listgate/origin/store"
	"github.com/listgate/listgate/pkg/ratelimit"
)

// Importer applies a feed to a site's listings; *ingest.Importer is one.
type Importer interface {
	Import(ctx context.Context, siteID string, feed io.Reader, opts ingest.Options) (ingest.Result, error)
}

var (
	_ Importer    = (*ingest.Importer)(nil)
	_ api.Mounter = (*Service)(nil)
)

// Config holds what New needs. Zero fields take the defaults named.
type Config struct {
	// DB is required.
	DB *store.DB
	// Importer imports claimed feeds. Required.
	Importer Importer
	// Log receives worker events and failures. Nil: slog.Default().
	Log *slog.Logger

	// Workers is the number of feed workers Run starts. Default 2.
	Workers int
	// MaxFeedBytes bounds an uploaded feed, both as sent and decompressed.
	// Default 50 MiB.
	MaxFeedBytes int64
	// TokenTTL is the lifetime of an access token. Default 1 h.
	TokenTTL time.Duration
	// AuthFailures is how many failed client authentications one client IP
	// may make per minute before the token endpoint answers 429. Default
	// DefaultAuthFailures.
	AuthFailures int
	// AuthFailureLimiter counts them. Nil: an in-memory limiter of
	// AuthFailures a minute (per process); the origin passes one kept in
	// Postgres, shared by every origin.
	AuthFailureLimiter Limiter
	// ClientIP names the client of a request for the failed-authentication
	// limit. Nil: the host of RemoteAddr.
	ClientIP func(*http.Request) string
	// BodyReadTimeout is how long a feed upload may take to send its body;
	// it replaces the server's read timeout for that request. Default 10 min.
	BodyReadTimeout time.Duration

	// PollInterval is how often idle workers look for jobs when no
	// notification woke them. Default 5 s.
	PollInterval time.Duration
	// Lease is how long a claimed job is a worker's before another may take
	// it; the worker renews it every third of it. Default 30 s.
	Lease time.Duration
	// MaxAttempts is how many times a feed is tried before it fails.
	// Default 3.
	MaxAttempts int
	// RetryDelay is the wait before a failed attempt is retried, times the
	// attempt number. Default 10 s.
	RetryDelay time.Duration

	// Now is the clock of token issue and expiry. Nil: time.Now. Leases use
	// the database's clock, which every origin shares.
	Now func() time.Time
}

func (c *Config) setDefaults() {
	if c.Log == nil {
		c.Log = slog.Default()
	}
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	defDur := func(v *time.Duration, d time.Duration) {
		if *v == 0 {
			*v = d
		}
	}
	def(&c.Workers, 2)
	def(&c.AuthFailures, DefaultAuthFailures)
	def(&c.MaxAttempts, 3)
	if c.MaxFeedBytes == 0 {
		c.MaxFeedBytes = 50 << 20
	}
	defDur(&c.TokenTTL, time.Hour)
	defDur(&c.BodyReadTimeout, 10*time.Minute)
	defDur(&c.PollInterval, 5*time.Second)
	defDur(&c.Lease, 30*time.Second)
	defDur(&c.RetryDelay, 10*time.Second)
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.ClientIP == nil {
		c.ClientIP = remoteIP
	}
}

// Validate reports the first invalid setting, after defaults.
func (c Config) Validate() error {
	switch {
	case c.DB == nil:
		return errors.New("upload: DB is required")
	case c.Importer == nil:
		return errors.New("upload: Importer is required")
	case c.Workers < 1:
		return fmt.Errorf("upload: Workers %d must be at least 1", c.Workers)
	case c.MaxFeedBytes < 1:
		return fmt.Errorf("upload: MaxFeedBytes %d must be positive", c.MaxFeedBytes)
	case c.TokenTTL < time.Second:
		return fmt.Errorf("upload: TokenTTL %s must be at least 1s", c.TokenTTL)
	case c.AuthFailures < 1:
		return fmt.Errorf("upload: AuthFailures %d must be at least 1", c.AuthFailures)
	case c.MaxAttempts < 1:
		return fmt.Errorf("upload: MaxAttempts %d must be at least 1", c.MaxAttempts)
	case c.BodyReadTimeout < 0 || c.PollInterval <= 0 || c.Lease <= 0 || c.RetryDelay < 0:
		return errors.New("upload: BodyReadTimeout, PollInterval, Lease and RetryDelay must be positive")
	}
	return nil
}

// DefaultAuthFailures is Config.AuthFailures' default.
const DefaultAuthFailures = 20

// Service serves the upload API and runs its feed workers. Build it with
// New; mount it on the API server and call Run once. Safe for concurrent
// use.
type Service struct {
	cfg     Config
	db      *store.DB
	log     *slog.Logger
	limiter Limiter
	// wake has room for one signal per worker: a new job wakes idle ones.
	wake chan struct{}
	// lastPurge is when (Config.Now, Unix nanoseconds) expired tokens were
	// last deleted.
	lastPurge atomic.Int64
}

// New returns a service, or the first invalid setting of cfg.
func New(cfg Config) (*Service, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.AuthFailureLimiter == nil {
		cfg.AuthFailureLimiter = ratelimit.NewWindowLimiter(cfg.AuthFailures, time.Minute)
	}
	return &Service{cfg: cfg, db: cfg.DB, log: cfg.Log,
		limiter: cfg.AuthFailureLimiter,
		wake:    make(chan struct{}, cfg.Workers)}, nil
}

// Mount registers the upload API's routes.
func (s *Service) Mount(handle func(pattern string, h api.HandlerFunc)) {
	handle("POST /v1/oauth/token", s.token)
	handle("POST /v1/feeds", api.LongLived(s.uploadFeed))
	handle("GET /v1/feeds/{feed_id}", s.getFeed)
}

// Run runs the feed workers and the listener that wakes them, until ctx
// ends; then it waits for them to stop and returns nil. A job a worker was
// importing keeps its lease and is taken up again once it runs out.
func (s *Service) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	wg.Go(func() { s.listen(ctx) })
	for range s.cfg.Workers {
		wg.Go(func() { s.work(ctx) })
	}
	wg.Wait()
	return nil
}

// wakeWorkers signals idle workers that a job may be ready.
func (s *Service) wakeWorkers() {
	for range cap(s.wake) {
		select {
		case s.wake <- struct{}{}:
		default:
			return
		}
	}
}

// listen wakes the workers on every job announced by any origin, and once
// after each (re)connection, since announcements made while it was not
// listening are lost. When the connection fails it retries with backoff;
// meanwhile the workers' polling finds the jobs.
func (s *Service) listen(ctx context.Context) {
	backoff := time.Second
	for {
		err := s.db.ListenFeedJobs(ctx, func() {
			backoff = time.Second
			s.wakeWorkers()
		}, s.wakeWorkers)
		if ctx.Err() != nil {
			return
		}
		s.log.WarnContext(ctx, "feed notifications lost; workers poll until they are back",
			"err", err, "retry_in", backoff.String())
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 30*time.Second)
	}
}

// remoteIP is the host part of r.RemoteAddr.
func remoteIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
