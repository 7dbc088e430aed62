package pairing

import (
	"context"
	"errors"
	"time"

	"github.com/listgate/listgate/pkg/apikey"
)

// Store keeps pairings and issues their keys. The origin's implementation
// is origin/store's Pairings, on Postgres. Safe for concurrent use.
type Store interface {
	// InTx runs fn in one transaction, committed when fn returns nil and
	// rolled back otherwise; it returns fn's error, or the store's. fn
	// works through the Tx only, so that a rollback undoes all it did.
	InTx(ctx context.Context, fn func(Tx) error) error
	// ListPairings returns the pairings approved for siteID, newest first,
	// as stored (see Pairing.Effective). An unknown site is ErrUnknownSite.
	ListPairings(ctx context.Context, siteID string) ([]Pairing, error)
	// ExpirePairings marks the pending and approved pairings whose
	// ExpiresAt is at or before now as expired, and returns how many.
	ExpirePairings(ctx context.Context, now time.Time) (int, error)
}

// Tx is the work of one Store transaction. The By… methods lock the rows
// they return until the transaction ends; they return ErrNotFound when
// there is none. Changes to a returned Pairing are stored by Save.
type Tx interface {
	// Insert stores a new pairing and sets its ID. A device or user code
	// already in use is ErrCodeTaken, and the transaction is then spent.
	Insert(ctx context.Context, p *Pairing) error
	// ByDeviceCode returns the pairing whose device code hashes to hash.
	ByDeviceCode(ctx context.Context, hash [32]byte) (*Pairing, error)
	// ByUserGroup returns the pairings whose user code's first group
	// hashes to hash and whose ExpiresAt is after since: the candidates for
	// a user code being entered. None is not an error.
	ByUserGroup(ctx context.Context, hash [32]byte, since time.Time) ([]*Pairing, error)
	// ByKey returns the pairing whose key is keyID, if that key was issued
	// by pairing; ErrNotPairingKey otherwise.
	ByKey(ctx context.Context, keyID string) (*Pairing, error)
	// ByID returns siteID's pairing id.
	ByID(ctx context.Context, siteID, id string) (*Pairing, error)
	// Delivered returns siteID's delivered pairings of homeURL. It first
	// takes a lock on (siteID, homeURL) that lasts until the transaction
	// ends, so that two deliveries for the same home URL are serialised
	// and each sees the other's.
	Delivered(ctx context.Context, siteID, homeURL string) ([]*Pairing, error)
	// Save stores p's changes (status, site, key, counts, times).
	Save(ctx context.Context, p *Pairing) error
	// CheckSite returns ErrUnknownSite when siteID names no site.
	CheckSite(ctx context.Context, siteID string) error
	// CreateKey creates a key of source pairing for siteID.
	CreateKey(ctx context.Context, siteID, name string, scopes apikey.Scope) (IssuedKey, error)
	// RevokeKey revokes keyID and tells the edges (the key.revoked event),
	// as store.RevokeKey does. Revoking a revoked key does nothing.
	RevokeKey(ctx context.Context, keyID string) error
	// BeaconID returns siteID's beacon id (scope views:write, public by
	// design), made on first use, as store.BeaconID does. Every pairing of
	// the site gets the same one; disconnecting a pairing leaves it.
	BeaconID(ctx context.Context, siteID string) (string, error)
}

// IssuedKey is a key just created: the secret exists only here.
type IssuedKey struct {
	ID     string
	Secret string
	Scopes []string
}

// Errors a Store returns.
var (
	// ErrNotFound: no pairing has this code (or id).
	ErrNotFound = errors.New("pairing: no pairing has this code")
	// ErrUnknownSite: no site has this id.
	ErrUnknownSite = errors.New("pairing: site not found")
	// ErrNotPairingKey: the key was not issued by pairing.
	ErrNotPairingKey = errors.New("pairing: the key was not issued by pairing")
	// ErrCodeTaken: a new pairing's code is already in use.
	ErrCodeTaken = errors.New("pairing: code already in use")
)
