package config

import (
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"os"
	"strings"
	"time"
)

// Edge configures the edge gateway. Start from DefaultEdge.
type Edge struct {
	// Addr is the public listen address (LISTGATE_EDGE_ADDR). Default 127.0.0.1:8080.
	Addr string `yaml:"addr"`
	// Listeners is how many sockets accept on Addr (LISTGATE_EDGE_LISTENERS).
	// 1: one plain listener. More (Linux): that many SO_REUSEPORT
	// listeners, each with its own accept loop, the kernel spreading new
	// connections between them. Default 1.
	Listeners int `yaml:"listeners"`
	// AdminAddr is the operators' listen address (LISTGATE_EDGE_ADMIN_ADDR):
	// GET /metrics (Prometheus text) and /debug/pprof/, without
	// authentication, so keep it on loopback or a private interface; the
	// public port answers 404 there. "off" serves neither. Default
	// 127.0.0.1:9091.
	AdminAddr string `yaml:"admin_addr"`
	// OriginURL is the origins' base URLs, separated by commas
	// (LISTGATE_ORIGIN_URL), such as http://10.0.0.5:8081,http://10.0.0.6:8081.
	// Requests are balanced across the origins whose /readyz answers 200,
	// so stateless origins can be deployed one at a time. Default
	// http://127.0.0.1:8081.
	OriginURL string `yaml:"origin_url"`
	// OriginHealthInterval is how often each origin's /readyz is asked; an
	// origin that fails it, or refuses or drops a connection, takes no
	// requests until it answers 200 again. Default 1 s.
	OriginHealthInterval time.Duration `yaml:"origin_health_interval"`
	// InternalToken is sent to the origin with every forwarded request
	// (LISTGATE_INTERNAL_TOKEN). Required, at least 32 characters.
	InternalToken string `yaml:"internal_token"`
	// RedisURL selects the shared Redis rate limiter (LISTGATE_REDIS_URL);
	// empty means the in-process limiter.
	RedisURL string `yaml:"redis_url"`
	// RedisTimeout bounds each limiter call to Redis. Default 5 ms.
	RedisTimeout time.Duration `yaml:"redis_timeout"`
	// ExpectedEdges divides a site's limit while Redis is unreachable and
	// each edge limits on its own (LISTGATE_EXPECTED_EDGES). Default 1.
	ExpectedEdges int `yaml:"expected_edges"`

	// KeyTTL caps how long an introspected key stays cached (the origin's
	// answer says how long, ttl_seconds); revocations
	// arrive sooner through the event stream. Default 30 s.
	KeyTTL time.Duration `yaml:"key_ttl"`
	// NegativeKeyTTL is how long an unknown key stays cached. Default 5 s.
	NegativeKeyTTL time.Duration `yaml:"negative_key_ttl"`
	// ResponseCacheBytes bounds the response cache. Default 256 MiB.
	ResponseCacheBytes int64 `yaml:"response_cache_bytes"`

	// PublicLimit is requests per minute per client IP on the routes that
	// need no key (pairing, OAuth token, feed upload and status,
	// openapi.json, the dashboard) and CORS preflights of a site the edge
	// has not cached. Default 120.
	PublicLimit int `yaml:"public_limit"`
	// TrustedProxies are the peers whose X-Forwarded-For is believed
	// (CIDR prefixes). Default none.
	TrustedProxies []string `yaml:"trusted_proxies"`

	// ReadTimeout, WriteTimeout and IdleTimeout bound client connections.
	// Defaults 10 s, 30 s, 120 s.
	ReadTimeout  time.Duration `yaml:"read_timeout"`
	WriteTimeout time.Duration `yaml:"write_timeout"`
	IdleTimeout  time.Duration `yaml:"idle_timeout"`
	// OriginTimeout bounds each forwarded request. Default 30 s.
	OriginTimeout time.Duration `yaml:"origin_timeout"`
	// MaxHeaderBytes bounds a request's header block. Default 16 KiB.
	MaxHeaderBytes int `yaml:"max_header_bytes"`
	// MaxBodyBytes bounds a feed upload (POST /v1/feeds with a bearer
	// token), which streams to the origin; no other route takes more than
	// 64 KiB (leads and dashboard forms 64 KiB, pairing and OAuth token
	// 8 KiB, reads none). Default 50 MiB.
	MaxBodyBytes int `yaml:"max_body_bytes"`
	// UploadTimeout bounds reading a feed upload from the client and
	// writing it to the origin. Default 5 min.
	UploadTimeout time.Duration `yaml:"upload_timeout"`
	// MaxUploads bounds the feed uploads streaming at once, one at a time
	// per client address; one more is answered 503 with Retry-After before
	// its body is read. Default 4.
	MaxUploads int `yaml:"max_uploads"`
	// AuthFailureLimit is the introspections finding no active key (unknown or
	// revoked keys) a client address may cause in a minute; past it, keys
	// the edge has not cached are refused with 429 without asking the
	// origin, but for one in twenty, so that address's valid keys still get
	// through (keys cached, or active in the last day, always do). Default 20.
	AuthFailureLimit int `yaml:"auth_failure_limit"`
	// WriteBufferBytes is each client connection's write buffer
	// (LISTGATE_EDGE_WRITE_BUFFER_BYTES). A cached body of 4 KiB or more
	// leaves with its headers in one writev, without it; every other
	// answer (forwarded from the origin, errors, small bodies) is written
	// through it, in one write when headers and body fit, else in two or
	// more. The buffer stays with a keep-alive connection once it has been
	// answered, so memory is this times open connections, bounded by
	// MaxConnections. Default 32 KiB.
	WriteBufferBytes int `yaml:"write_buffer_bytes"`
	// MaxConnections bounds the client connections open at once on the
	// public listeners (LISTGATE_EDGE_MAX_CONNECTIONS); one more is answered
	// 503 and closed before it is read. Each open connection holds up to
	// MaxHeaderBytes + WriteBufferBytes of buffers (48 KiB by default), so
	// the default bounds them at about 480 MiB. Default 10,000.
	MaxConnections int `yaml:"max_connections"`
	// MaxConnectionsPerIP bounds the connections one client address holds
	// open at once (LISTGATE_EDGE_MAX_CONNECTIONS_PER_IP), an IPv6 address
	// with the rest of its /64, so that one client cannot take every place
	// of MaxConnections; one more is answered 503 and closed before it is
	// read. The peers of TrustedProxies (a load balancer, a reverse proxy
	// in front) are not bound by it, only by MaxConnections. 0 is no bound.
	// Default 1,000.
	MaxConnectionsPerIP int `yaml:"max_connections_per_ip"`
	// ViewsInterval is how often the listing views counted from beacons are
	// reported to the origin (LISTGATE_VIEWS_INTERVAL); a kill -9 loses at
	// most this much. Default 10 s.
	ViewsInterval time.Duration `yaml:"views_interval"`
	// ViewsClientLimit bounds the view beacons counted from one client
	// address (an IPv6 /64) a minute; more are answered alike and not
	// counted. Default 60.
	ViewsClientLimit int `yaml:"views_client_limit"`
	// ViewsMaxVisitors bounds the visitor hashes the edge holds for unique
	// visitors (8 bytes each, about 11 MiB at the default); past it views
	// still count, unique visitors no longer do. Default 1,000,000.
	ViewsMaxVisitors int `yaml:"views_max_visitors"`
	// ShutdownTimeout bounds the drain on SIGTERM/SIGINT. Default 15 s.
	ShutdownTimeout time.Duration `yaml:"shutdown_timeout"`
	// LogLevel is debug, info, warn or error (LISTGATE_LOG_LEVEL). Default info.
	LogLevel string `yaml:"log_level"`
}

// DefaultEdge returns the defaults; configs/edge.yaml documents them.
func DefaultEdge() Edge {
	return Edge{
		Addr:                 "127.0.0.1:8080",
		Listeners:            1,
		AdminAddr:            "127.0.0.1:9091",
		OriginURL:            "http://127.0.0.1:8081",
		OriginHealthInterval: time.Second,
		RedisTimeout:         5 * time.Millisecond,
		ExpectedEdges:        1,
		KeyTTL:               30 * time.Second,
		NegativeKeyTTL:       5 * time.Second,
		ResponseCacheBytes:   256 << 20,
		PublicLimit:          120,
		TrustedProxies:       []string{},
		ReadTimeout:          10 * time.Second,
		WriteTimeout:         30 * time.Second,
		IdleTimeout:          120 * time.Second,
		OriginTimeout:        30 * time.Second,
		MaxHeaderBytes:       16 << 10,
		MaxBodyBytes:         50 << 20,
		UploadTimeout:        5 * time.Minute,
		MaxUploads:           4,
		AuthFailureLimit:     20,
		ViewsInterval:        10 * time.Second,
		ViewsClientLimit:     60,
		ViewsMaxVisitors:     1_000_000,
		WriteBufferBytes:     32 << 10,
		MaxConnections:       10_000,
		MaxConnectionsPerIP:  1_000,
		ShutdownTimeout:      15 * time.Second,
		LogLevel:             "info",
	}
}

// LoadEdge returns DefaultEdge overlaid with the YAML file at path (if not
// empty) and the environment, validated. get nil means os.LookupEnv.
func LoadEdge(path string, get Getenv) (Edge, error) {
	if get == nil {
		get = os.LookupEnv
	}
	c := DefaultEdge()
	if err := loadFile(path, &c); err != nil {
		return c, err
	}
	envString(get, "LISTGATE_EDGE_ADDR", &c.Addr)
	envString(get, "LISTGATE_EDGE_ADMIN_ADDR", &c.AdminAddr)
	envString(get, "LISTGATE_ORIGIN_URL", &c.OriginURL)
	envString(get, "LISTGATE_INTERNAL_TOKEN", &c.InternalToken)
	envString(get, "LISTGATE_REDIS_URL", &c.RedisURL)
	envString(get, "LISTGATE_LOG_LEVEL", &c.LogLevel)
	if err := envInt(get, "LISTGATE_EXPECTED_EDGES", &c.ExpectedEdges); err != nil {
		return c, err
	}
	if err := envInt(get, "LISTGATE_EDGE_LISTENERS", &c.Listeners); err != nil {
		return c, err
	}
	if err := envDuration(get, "LISTGATE_VIEWS_INTERVAL", &c.ViewsInterval); err != nil {
		return c, err
	}
	if err := envInt(get, "LISTGATE_EDGE_WRITE_BUFFER_BYTES", &c.WriteBufferBytes); err != nil {
		return c, err
	}
	if err := envInt(get, "LISTGATE_EDGE_MAX_CONNECTIONS", &c.MaxConnections); err != nil {
		return c, err
	}
	if err := envInt(get, "LISTGATE_EDGE_MAX_CONNECTIONS_PER_IP", &c.MaxConnectionsPerIP); err != nil {
		return c, err
	}
	return c, c.Validate()
}

// Validate reports the first invalid setting, without secrets.
func (c Edge) Validate() error {
	if _, _, err := net.SplitHostPort(c.Addr); err != nil {
		return fmt.Errorf("config: addr %q: %w", c.Addr, err)
	}
	if c.Listeners < 1 || c.Listeners > 64 {
		return fmt.Errorf("config: listeners %d (LISTGATE_EDGE_LISTENERS) must be 1 to 64", c.Listeners)
	}
	if c.AdminAddr != "off" {
		if _, _, err := net.SplitHostPort(c.AdminAddr); err != nil {
			return fmt.Errorf("config: admin_addr %q (LISTGATE_EDGE_ADMIN_ADDR) must be host:port or off: %w", c.AdminAddr, err)
		}
		if _, port, _ := net.SplitHostPort(c.AdminAddr); c.AdminAddr == c.Addr && port != "0" {
			return fmt.Errorf("config: admin_addr must differ from addr: the public port does not serve /metrics")
		}
	}
	urls := c.OriginURLs()
	if len(urls) == 0 || len(urls) > 64 {
		return fmt.Errorf("config: origin_url must list between 1 and 64 origins")
	}
	for _, o := range urls {
		if u, err := url.Parse(o); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
			(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.User != nil {
			return fmt.Errorf("config: origin_url %q must be http(s)://host[:port], or several separated by commas", o)
		}
	}
	if len(c.InternalToken) < 32 {
		return fmt.Errorf("config: LISTGATE_INTERNAL_TOKEN is required and must be at least 32 characters")
	}
	if c.RedisURL != "" && !strings.HasPrefix(c.RedisURL, "redis://") && !strings.HasPrefix(c.RedisURL, "rediss://") {
		return fmt.Errorf("config: redis_url must start with redis:// or rediss://")
	}
	if c.ExpectedEdges < 1 || c.ExpectedEdges > 1000 {
		return fmt.Errorf("config: expected_edges %d out of range 1..1000", c.ExpectedEdges)
	}
	for _, p := range c.TrustedProxies {
		if _, err := netip.ParsePrefix(p); err != nil {
			return fmt.Errorf("config: trusted_proxies: %q is not a CIDR prefix", p)
		}
	}
	for name, d := range map[string]time.Duration{
		"redis_timeout": c.RedisTimeout, "key_ttl": c.KeyTTL, "negative_key_ttl": c.NegativeKeyTTL,
		"read_timeout": c.ReadTimeout, "write_timeout": c.WriteTimeout, "idle_timeout": c.IdleTimeout,
		"origin_timeout": c.OriginTimeout, "origin_health_interval": c.OriginHealthInterval, "shutdown_timeout": c.ShutdownTimeout, "upload_timeout": c.UploadTimeout,
	} {
		if d <= 0 {
			return fmt.Errorf("config: %s must be positive", name)
		}
	}
	if c.ResponseCacheBytes < 1<<20 {
		return fmt.Errorf("config: response_cache_bytes must be at least 1 MiB")
	}
	if c.PublicLimit < 1 {
		return fmt.Errorf("config: public_limit must be at least 1")
	}
	if c.MaxHeaderBytes < 1024 || c.MaxBodyBytes < 64<<10 {
		return fmt.Errorf("config: max_header_bytes must be at least 1 KiB and max_body_bytes at least 64 KiB")
	}
	if c.MaxUploads < 1 || c.AuthFailureLimit < 1 {
		return fmt.Errorf("config: max_uploads and auth_failure_limit must be at least 1")
	}
	if c.ViewsInterval < 100*time.Millisecond || c.ViewsInterval > time.Hour {
		return fmt.Errorf("config: views_interval (LISTGATE_VIEWS_INTERVAL) must be between 100ms and 1h")
	}
	if c.ViewsClientLimit < 1 || c.ViewsMaxVisitors < 1000 {
		return fmt.Errorf("config: views_client_limit must be at least 1 and views_max_visitors at least 1000")
	}
	if c.WriteBufferBytes < 4<<10 || c.WriteBufferBytes > 1<<20 {
		return fmt.Errorf("config: write_buffer_bytes %d (LISTGATE_EDGE_WRITE_BUFFER_BYTES) out of range 4096..1048576", c.WriteBufferBytes)
	}
	if c.MaxConnections < 1 || c.MaxConnections > 1_000_000 {
		return fmt.Errorf("config: max_connections %d (LISTGATE_EDGE_MAX_CONNECTIONS) out of range 1..1000000", c.MaxConnections)
	}
	if c.MaxConnectionsPerIP < 0 || c.MaxConnectionsPerIP > 1_000_000 {
		return fmt.Errorf("config: max_connections_per_ip %d (LISTGATE_EDGE_MAX_CONNECTIONS_PER_IP) out of range 0..1000000 (0: no bound)", c.MaxConnectionsPerIP)
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		return fmt.Errorf("config: log_level %q is not debug, info, warn or error", c.LogLevel)
	}
	return nil
}

// TrustedPrefixes returns TrustedProxies parsed; Validate has checked them.
func (c Edge) TrustedPrefixes() []netip.Prefix {
	out := make([]netip.Prefix, 0, len(c.TrustedProxies))
	for _, p := range c.TrustedProxies {
		if pf, err := netip.ParsePrefix(p); err == nil {
			out = append(out, pf.Masked())
		}
	}
	return out
}

// OriginURLs returns OriginURL split at its commas, spaces trimmed and
// empty entries dropped.
func (c Edge) OriginURLs() []string {
	var out []string
	for _, o := range strings.Split(c.OriginURL, ",") {
		if o = strings.TrimSpace(o); o != "" {
			out = append(out, o)
		}
	}
	return out
}
