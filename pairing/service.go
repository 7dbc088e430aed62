package pairing

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/listgate/listgate/pkg/apikey"
	"github.com/listgate/listgate/pkg/ratelimit"
)

// KeyScopes are the scopes of a paired key: read-only.
const KeyScopes = apikey.ReadOnly

// VerificationPath is the dashboard page, under Config.PublicURL, where a
// user enters or confirms a user code.
const VerificationPath = "/dashboard/pairing"

// Config holds what New needs. Zero fields take the defaults named.
type Config struct {
	// Store keeps pairings and issues keys. Required.
	Store Store
	// PublicURL is the edge's public base URL, before /v1
	// (config.Origin.PublicURL): verification_uri is PublicURL +
	// VerificationPath and a delivered key's base_url is PublicURL + "/v1".
	// Required: an absolute http(s) URL.
	PublicURL string
	// Log receives a line per start, decision, delivery and
	// disconnection, never a code or key. Nil: slog.Default().
	Log *slog.Logger

	// ExpiresIn is how long codes live. Default 600 s.
	ExpiresIn time.Duration
	// Interval is the least time between polls to begin with. Default 5 s.
	Interval time.Duration
	// MaxWrongEntries is how many wrong user codes, sharing a live code's
	// first group, kill that code. Default 5.
	MaxWrongEntries int

	// StartsPerIP limits pairing starts per client IP. Default 10 per
	// 10 minutes, in memory.
	StartsPerIP Limiter
	// WrongEntriesPerIP limits wrong user codes entered per client IP
	// (Actor.IP). Default 10 per 10 minutes, in memory.
	WrongEntriesPerIP Limiter
	// WrongEntriesPerAccount limits wrong user codes entered per dashboard
	// account (Actor.Account). Default 10 per 10 minutes, in memory.
	WrongEntriesPerAccount Limiter

	// Now is the clock. Nil: time.Now.
	Now func() time.Time
	// Rand is the source of codes. Nil: crypto/rand.Reader.
	Rand io.Reader
}

func (c *Config) setDefaults() {
	if c.Log == nil {
		c.Log = slog.Default()
	}
	if c.ExpiresIn == 0 {
		c.ExpiresIn = 600 * time.Second
	}
	if c.Interval == 0 {
		c.Interval = 5 * time.Second
	}
	if c.MaxWrongEntries == 0 {
		c.MaxWrongEntries = 5
	}
	if c.StartsPerIP == nil {
		c.StartsPerIP = ratelimit.NewWindowLimiter(10, 10*time.Minute)
	}
	if c.WrongEntriesPerIP == nil {
		c.WrongEntriesPerIP = ratelimit.NewWindowLimiter(10, 10*time.Minute)
	}
	if c.WrongEntriesPerAccount == nil {
		c.WrongEntriesPerAccount = ratelimit.NewWindowLimiter(10, 10*time.Minute)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Rand == nil {
		c.Rand = rand.Reader
	}
	c.PublicURL = strings.TrimRight(c.PublicURL, "/")
}

// Validate reports the first invalid setting, after defaults.
func (c Config) Validate() error {
	u, err := url.Parse(c.PublicURL)
	switch {
	case c.Store == nil:
		return errors.New("pairing: Store is required")
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return fmt.Errorf("pairing: PublicURL %q must be an absolute http(s) URL", c.PublicURL)
	case c.ExpiresIn < time.Second:
		return fmt.Errorf("pairing: ExpiresIn %s must be at least 1s", c.ExpiresIn)
	case c.Interval < time.Second || c.Interval > MaxInterval:
		return fmt.Errorf("pairing: Interval %s must be between 1s and %s", c.Interval, MaxInterval)
	case c.MaxWrongEntries < 1:
		return fmt.Errorf("pairing: MaxWrongEntries %d must be at least 1", c.MaxWrongEntries)
	}
	return nil
}

// Service runs the pairing flow over a Store. Build it with New. Safe for
// concurrent use.
type Service struct {
	cfg Config
	log *slog.Logger
	// lastExpiry is when (Config.Now, Unix nanoseconds) stale pairings were
	// last marked expired.
	lastExpiry atomic.Int64
}

// New returns a service, or the first invalid setting of cfg.
func New(cfg Config) (*Service, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Service{cfg: cfg, log: cfg.Log}, nil
}

// Started is the answer to a start: RFC 8628 §3.2's device authorization
// response.
type Started struct {
	DeviceCode              string
	UserCode                string
	VerificationURI         string
	VerificationURIComplete string
	ExpiresIn               time.Duration
	Interval                time.Duration
}

// Start begins a pairing. It returns a *ValidationError for a bad request
// and a *RateLimitError when req.ClientIP has started too many; other
// errors are the store's.
func (s *Service) Start(ctx context.Context, req StartRequest) (Started, error) {
	req, verr := req.Validate()
	if verr != nil {
		return Started{}, verr
	}
	now := s.cfg.Now()
	if req.ClientIP != "" {
		if ok, wait := s.cfg.StartsPerIP.Allow(req.ClientIP, now); !ok {
			return Started{}, &RateLimitError{What: "start", RetryAfter: wait}
		}
		s.cfg.StartsPerIP.Add(req.ClientIP, now)
	}
	s.expireStale(ctx, now)
	for attempt := 0; ; attempt++ {
		st, p, err := s.newCodes(req, now)
		if err != nil {
			return Started{}, err
		}
		err = s.cfg.Store.InTx(ctx, func(tx Tx) error { return tx.Insert(ctx, p) })
		if errors.Is(err, ErrCodeTaken) && attempt < 3 {
			continue // one in billions: draw new codes
		}
		if err != nil {
			return Started{}, fmt.Errorf("pairing: start: %w", err)
		}
		s.log.InfoContext(ctx, "pairing started", "pairing_id", p.ID, "home_url", p.HomeURL,
			"client_ip", req.ClientIP)
		return st, nil
	}
}

// newCodes draws a pairing's codes and returns the answer and the record.
func (s *Service) newCodes(req StartRequest, now time.Time) (Started, *Pairing, error) {
	user, err := newUserCode(s.cfg.Rand)
	if err != nil {
		return Started{}, nil, fmt.Errorf("pairing: user code: %w", err)
	}
	device, err := newDeviceCode(s.cfg.Rand)
	if err != nil {
		return Started{}, nil, fmt.Errorf("pairing: device code: %w", err)
	}
	p := &Pairing{HomeURL: req.HomeURL, SiteName: req.SiteName, PluginVersion: req.PluginVersion,
		Status: StatusPending, Interval: s.cfg.Interval, ClientIP: req.ClientIP,
		CreatedAt: now, ExpiresAt: now.Add(s.cfg.ExpiresIn),
		DeviceCodeHash: HashCode(device), UserCodeHash: HashCode(user), UserGroupHash: userCodeGroupHash(user)}
	verify := s.cfg.PublicURL + VerificationPath
	return Started{DeviceCode: device, UserCode: user, VerificationURI: verify,
		VerificationURIComplete: verify + "?user_code=" + url.QueryEscape(user),
		ExpiresIn:               s.cfg.ExpiresIn, Interval: s.cfg.Interval}, p, nil
}

// expireEvery is how often (at most) a process marks stale pairings
// expired. Answers never depend on it (Pairing.Effective); it keeps the
// stored status, and the index of pending codes, tidy.
const expireEvery = time.Minute

func (s *Service) expireStale(ctx context.Context, now time.Time) {
	last := s.lastExpiry.Load()
	if now.UnixNano()-last < int64(expireEvery) || !s.lastExpiry.CompareAndSwap(last, now.UnixNano()) {
		return
	}
	if _, err := s.cfg.Store.ExpirePairings(ctx, now); err != nil {
		s.log.WarnContext(ctx, "mark stale pairings expired", "err", err)
	}
}

// Delivery is a pairing's key, delivered once: the token endpoint's
// success.
type Delivery struct {
	APIKey  string
	KeyID   string
	SiteID  string
	Scopes  []string
	BaseURL string
	// BeaconID is the site's public beacon id, for the listing view
	// beacons of the site's pages (scope views:write alone).
	BeaconID string
}

// Poll answers a plugin's poll with deviceCode. It returns the key exactly
// once, after approval, creating it in the transaction that marks the
// pairing delivered and revoking the keys of the site's earlier pairings of
// the same home URL (re-pairing). Otherwise the error is a PollError to
// answer (authorization_pending, slow_down, access_denied, expired_token,
// invalid_grant), or the store's.
func (s *Service) Poll(ctx context.Context, deviceCode string) (Delivery, error) {
	if !wellFormedDeviceCode(deviceCode) {
		return Delivery{}, InvalidGrant
	}
	now := s.cfg.Now()
	var d Delivery
	var answer error
	var replaced []string
	var p *Pairing
	err := s.cfg.Store.InTx(ctx, func(tx Tx) error {
		d, answer, replaced = Delivery{}, nil, nil
		var err error
		p, err = tx.ByDeviceCode(ctx, HashCode(deviceCode))
		if errors.Is(err, ErrNotFound) {
			answer = InvalidGrant
			return nil
		}
		if err != nil {
			return err
		}
		var changed bool
		if answer, changed = p.Poll(now); answer != nil {
			if changed {
				return tx.Save(ctx, p)
			}
			return nil
		}
		d, replaced, err = s.deliver(ctx, tx, p, now)
		return err
	})
	if err != nil {
		return Delivery{}, fmt.Errorf("pairing: poll: %w", err)
	}
	if answer != nil {
		return Delivery{}, answer
	}
	s.log.InfoContext(ctx, "pairing delivered its key", "pairing_id", p.ID, "site_id", p.SiteID,
		"key_id", d.KeyID, "home_url", p.HomeURL, "replaced", replaced)
	return d, nil
}

// deliver creates p's key, disconnects the site's earlier pairings of the
// same home URL (revoking their keys) and marks p delivered, all in tx.
func (s *Service) deliver(ctx context.Context, tx Tx, p *Pairing, now time.Time) (Delivery, []string, error) {
	earlier, err := tx.Delivered(ctx, p.SiteID, p.HomeURL)
	if err != nil {
		return Delivery{}, nil, err
	}
	var replaced []string
	for _, old := range earlier {
		if old.ID == p.ID {
			continue
		}
		if err := s.disconnect(ctx, tx, old, p.ID, now); err != nil {
			return Delivery{}, nil, err
		}
		replaced = append(replaced, old.ID)
	}
	key, err := tx.CreateKey(ctx, p.SiteID, KeyName(p.HomeURL), KeyScopes)
	if err != nil {
		return Delivery{}, nil, err
	}
	if err := p.Deliver(key.ID, now); err != nil {
		return Delivery{}, nil, err
	}
	if err := tx.Save(ctx, p); err != nil {
		return Delivery{}, nil, err
	}
	beacon, err := tx.BeaconID(ctx, p.SiteID)
	if err != nil {
		return Delivery{}, nil, err
	}
	return Delivery{APIKey: key.Secret, KeyID: key.ID, SiteID: p.SiteID, Scopes: key.Scopes,
		BaseURL: s.cfg.PublicURL + "/v1", BeaconID: beacon}, replaced, nil
}

// disconnect revokes p's key and marks it disconnected (replaced by
// replacedBy, if not "").
func (s *Service) disconnect(ctx context.Context, tx Tx, p *Pairing, replacedBy string, now time.Time) error {
	if err := p.Disconnect(replacedBy, now); err != nil {
		return err
	}
	if p.KeyID != "" {
		if err := tx.RevokeKey(ctx, p.KeyID); err != nil {
			return err
		}
	}
	return tx.Save(ctx, p)
}

// Disconnect is the plugin disconnecting itself with its key: the key is
// revoked (edges drop it within a second) and its pairing marked
// disconnected. keyID and siteID are the key's, as the edge vouched for
// them. A key that pairing did not issue, or of another site, is
// ErrNotPairingKey. Disconnecting twice succeeds.
func (s *Service) Disconnect(ctx context.Context, keyID, siteID string) error {
	now := s.cfg.Now()
	var p *Pairing
	err := s.cfg.Store.InTx(ctx, func(tx Tx) error {
		var err error
		p, err = tx.ByKey(ctx, keyID)
		if err != nil {
			return err
		}
		if p.SiteID != siteID {
			return ErrNotPairingKey
		}
		if p.Status != StatusDelivered { // replaced or disconnected: make sure
			return tx.RevokeKey(ctx, keyID)
		}
		return s.disconnect(ctx, tx, p, "", now)
	})
	if err != nil {
		return err
	}
	s.log.InfoContext(ctx, "pairing disconnected", "pairing_id", p.ID, "site_id", siteID, "key_id", keyID)
	return nil
}

// DisconnectPairing is the dashboard's (and the CLI's) disconnect: siteID's
// pairing id loses its key. ErrNotFound for no such pairing of the site,
// ErrNotConnected for one that is not delivered.
func (s *Service) DisconnectPairing(ctx context.Context, siteID, id string) (Pairing, error) {
	now := s.cfg.Now()
	var p *Pairing
	err := s.cfg.Store.InTx(ctx, func(tx Tx) error {
		var err error
		if p, err = tx.ByID(ctx, siteID, id); err != nil {
			return err
		}
		return s.disconnect(ctx, tx, p, "", now)
	})
	if err != nil {
		return Pairing{}, err
	}
	s.log.InfoContext(ctx, "pairing disconnected", "pairing_id", p.ID, "site_id", siteID, "key_id", p.KeyID)
	return *p, nil
}

// List returns siteID's pairings, newest first, each with its effective
// status (an approved pairing whose codes ran out shows as expired).
func (s *Service) List(ctx context.Context, siteID string) ([]Pairing, error) {
	ps, err := s.cfg.Store.ListPairings(ctx, siteID)
	if err != nil {
		return nil, err
	}
	now := s.cfg.Now()
	for i := range ps {
		ps[i].Status = ps[i].Effective(now)
	}
	return ps, nil
}
