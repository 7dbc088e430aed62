package pairing

import (
	"errors"
	"fmt"
	"time"
)

// Status is where a pairing is in its life:
//
//	pending ──approve──▶ approved ──poll──▶ delivered ──disconnect──▶ disconnected
//	   │                    │                                (or re-pair: replaced)
//	   ├──deny──▶ denied     │
//	   └──────────┴── expires_at passes, or 5 wrong codes ──▶ expired
//
// pending and approved are live until ExpiresAt; denied, delivered,
// disconnected and expired are final for the plugin (its poll gets
// access_denied or expired_token). A delivered pairing is the one state
// with a working key.
type Status string

// The statuses, as stored and shown.
const (
	StatusPending      Status = "pending"
	StatusApproved     Status = "approved"
	StatusDenied       Status = "denied"
	StatusDelivered    Status = "delivered"
	StatusExpired      Status = "expired"
	StatusDisconnected Status = "disconnected"
)

// Pairing is one pairing request and what became of it. Codes are kept
// only as hashes. A Pairing is a plain value; its methods are the state
// machine's transitions, take the time of the event and change nothing
// when they fail.
type Pairing struct {
	ID string `json:"id"`
	// SiteID is the site it was approved for; "" until then.
	SiteID string `json:"site_id,omitempty"`
	// HomeURL is the WordPress site's home URL, canonical (CanonicalHomeURL).
	HomeURL       string `json:"home_url"`
	SiteName      string `json:"site_name,omitempty"`
	PluginVersion string `json:"plugin_version,omitempty"`
	Status        Status `json:"status"`
	// KeyID is the key delivered to the plugin; "" before delivery.
	KeyID string `json:"key_id,omitempty"`
	// FailedAttempts counts wrong user codes entered against this one.
	FailedAttempts int `json:"failed_attempts"`
	// Interval is the least time between polls; slow_down raises it.
	Interval time.Duration `json:"-"`
	// ClientIP is the address that started the pairing.
	ClientIP  string    `json:"client_ip,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	ExpiresAt time.Time `json:"expires_at"`
	// LastPolledAt is the last poll that was answered pending or
	// slow_down; zero before the first.
	LastPolledAt time.Time `json:"-"`
	// DecidedAt and DecidedBy record the approval or denial; DecidedBy is
	// the dashboard account, or "operator" for the CLI.
	DecidedAt time.Time `json:"decided_at,omitzero"`
	DecidedBy string    `json:"decided_by,omitempty"`
	// DeliveredAt is when the plugin received its key.
	DeliveredAt time.Time `json:"delivered_at,omitzero"`
	// DisconnectedAt is when the key was revoked by a disconnection or a
	// re-pairing; ReplacedBy is the pairing that replaced this one.
	DisconnectedAt time.Time `json:"disconnected_at,omitzero"`
	ReplacedBy     string    `json:"replaced_by,omitempty"`

	// The codes' hashes (HashCode), and the hash of the user code's first
	// group (the look-up key of an entered code).
	DeviceCodeHash [32]byte `json:"-"`
	UserCodeHash   [32]byte `json:"-"`
	UserGroupHash  [32]byte `json:"-"`
}

// Errors of the transitions. Service methods return them wrapped or as
// they are; test with errors.Is.
var (
	// ErrExpired: the codes ran out (ExpiresAt passed) or the user code
	// was entered wrong too often.
	ErrExpired = errors.New("pairing: the code has expired; start pairing again in WordPress")
	// ErrDecided: the pairing was already approved, denied or delivered.
	ErrDecided = errors.New("pairing: the code was already used")
	// ErrNotConnected: the pairing is not delivered, so there is nothing to
	// disconnect.
	ErrNotConnected = errors.New("pairing: not connected")
)

// Effective is the status at now: a pending or approved pairing whose
// ExpiresAt has passed is expired, whatever is stored.
func (p *Pairing) Effective(now time.Time) Status {
	if (p.Status == StatusPending || p.Status == StatusApproved) && !now.Before(p.ExpiresAt) {
		return StatusExpired
	}
	return p.Status
}

// Approve moves a pending pairing to approved for siteID. It fails with
// ErrExpired or ErrDecided.
func (p *Pairing) Approve(siteID, by string, now time.Time) error {
	if err := p.decidable(now); err != nil {
		return err
	}
	p.Status, p.SiteID, p.DecidedAt, p.DecidedBy = StatusApproved, siteID, now, by
	return nil
}

// Deny moves a pending pairing to denied. It fails with ErrExpired or
// ErrDecided.
func (p *Pairing) Deny(by string, now time.Time) error {
	if err := p.decidable(now); err != nil {
		return err
	}
	p.Status, p.DecidedAt, p.DecidedBy = StatusDenied, now, by
	return nil
}

func (p *Pairing) decidable(now time.Time) error {
	switch p.Effective(now) {
	case StatusPending:
		return nil
	case StatusExpired:
		return ErrExpired
	default:
		return ErrDecided
	}
}

// WrongEntry counts a wrong user code entered against a pending pairing;
// the max-th one kills it (expired). It reports whether the pairing
// changed: a pairing that is not pending at now is left alone.
func (p *Pairing) WrongEntry(max int, now time.Time) bool {
	if p.Effective(now) != StatusPending {
		return false
	}
	p.FailedAttempts++
	if p.FailedAttempts >= max {
		p.Status = StatusExpired
	}
	return true
}

// Poll errors, the RFC 8628 §3.5 / RFC 6749 §5.2 error codes of the token
// endpoint. A PollError is what a poll answers instead of a key.
type PollError string

// The answers of a poll that delivers no key.
const (
	// AuthorizationPending: not approved yet; poll again after the interval.
	AuthorizationPending PollError = "authorization_pending"
	// SlowDown: polled before the interval passed; the interval has grown
	// by SlowDownStep for this and every later poll.
	SlowDown PollError = "slow_down"
	// AccessDenied: the pairing was denied.
	AccessDenied PollError = "access_denied"
	// ExpiredToken: the session has concluded — the codes expired, were
	// killed by wrong entries, or the key was already delivered. Start a
	// new pairing, after user interaction.
	ExpiredToken PollError = "expired_token"
	// InvalidGrant: no pairing has this device code.
	InvalidGrant PollError = "invalid_grant"
)

func (e PollError) Error() string { return string(e) }

// Description is the error_description of e: fixed text that never echoes
// the request.
func (e PollError) Description() string {
	switch e {
	case AuthorizationPending:
		return "the pairing has not been approved yet"
	case SlowDown:
		return "polling too fast: wait at least the interval, now 5 seconds longer"
	case AccessDenied:
		return "the pairing was denied"
	case ExpiredToken:
		return "the pairing has ended: its codes expired or its key was already delivered; start pairing again"
	case InvalidGrant:
		return "unknown device_code"
	}
	return string(e)
}

// SlowDownStep is how much slow_down adds to a pairing's interval (RFC
// 8628 §3.5), up to MaxInterval.
const (
	SlowDownStep = 5 * time.Second
	MaxInterval  = 60 * time.Second
)

// pollLeeway is how early a poll may arrive before the interval has passed
// without being told slow_down: network jitter can bring two polls of a
// client that waits exactly the interval a little closer together.
const pollLeeway = 250 * time.Millisecond

// Poll applies a poll at now. It returns nil when the pairing is approved
// and its key is to be delivered now (the caller then calls Deliver in the
// same transaction); otherwise the PollError to answer, with the pairing
// changed only for authorization_pending and slow_down (the poll's time,
// and for slow_down a longer interval), which changed reports.
func (p *Pairing) Poll(now time.Time) (answer error, changed bool) {
	switch p.Effective(now) {
	case StatusDenied:
		return AccessDenied, false
	case StatusPending, StatusApproved:
	default: // expired, delivered, disconnected
		return ExpiredToken, false
	}
	if !p.LastPolledAt.IsZero() && now.Sub(p.LastPolledAt) < p.Interval-pollLeeway {
		p.Interval = min(p.Interval+SlowDownStep, MaxInterval)
		p.LastPolledAt = now
		return SlowDown, true
	}
	if p.Status == StatusPending {
		p.LastPolledAt = now
		return AuthorizationPending, true
	}
	return nil, false
}

// Deliver moves an approved pairing to delivered with its new key. It
// fails with ErrExpired, or ErrDecided for any state but approved.
func (p *Pairing) Deliver(keyID string, now time.Time) error {
	switch p.Effective(now) {
	case StatusApproved:
	case StatusExpired:
		return ErrExpired
	default:
		return fmt.Errorf("%w: %s, not approved", ErrDecided, p.Status)
	}
	p.Status, p.KeyID, p.DeliveredAt, p.LastPolledAt = StatusDelivered, keyID, now, now
	return nil
}

// Disconnect moves a delivered pairing to disconnected; replacedBy is the
// pairing that took its place, "" for a plain disconnection. It fails with
// ErrNotConnected. The caller revokes the key.
func (p *Pairing) Disconnect(replacedBy string, now time.Time) error {
	if p.Status != StatusDelivered {
		return ErrNotConnected
	}
	p.Status, p.DisconnectedAt, p.ReplacedBy = StatusDisconnected, now, replacedBy
	return nil
}
