package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/listgate/listgate/pairing"
	"github.com/listgate/listgate/pkg/apierror"
	"github.com/listgate/listgate/pkg/apikey"
)

// Pairings is the pairing flow's store (pairing.Store) on the origin's
// database. Get it with DB.Pairings. Safe for concurrent use.
type Pairings struct {
	db *DB
}

var (
	_ pairing.Store = (*Pairings)(nil)
	_ pairing.Tx    = (*pairingTx)(nil)
)

// Pairings returns the pairing store of db.
func (db *DB) Pairings() *Pairings { return &Pairings{db: db} }

// InTx implements pairing.Store: fn runs in one transaction.
func (s *Pairings) InTx(ctx context.Context, fn func(pairing.Tx) error) error {
	return s.db.InTx(ctx, func(tx pgx.Tx) error { return fn(&pairingTx{tx: tx}) })
}

// ListPairings implements pairing.Store.
func (s *Pairings) ListPairings(ctx context.Context, siteID string) ([]pairing.Pairing, error) {
	if _, err := s.db.GetSite(ctx, siteID); err != nil {
		if apierror.CodeOf(err) == apierror.CodeNotFound {
			return nil, pairing.ErrUnknownSite
		}
		return nil, err
	}
	rows, _ := s.db.Pool.Query(ctx, `SELECT `+pairingColumns+` FROM pairings WHERE site_id = $1
		ORDER BY created_at DESC, id`, siteID)
	ps, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (pairing.Pairing, error) {
		var p pairing.Pairing
		return p, scanPairing(r, &p)
	})
	if err != nil {
		return nil, fmt.Errorf("store: list pairings: %w", err)
	}
	return ps, nil
}

// ExpirePairings implements pairing.Store.
func (s *Pairings) ExpirePairings(ctx context.Context, now time.Time) (int, error) {
	tag, err := s.db.Pool.Exec(ctx, `UPDATE pairings SET status = 'expired'
		WHERE status IN ('pending', 'approved') AND expires_at <= $1`, now)
	if err != nil {
		return 0, fmt.Errorf("store: expire pairings: %w", err)
	}
	return int(tag.RowsAffected()), nil
}

// pairingTx is pairing.Tx on a pgx transaction.
type pairingTx struct {
	tx pgx.Tx
}

// pairingColumns are the columns scanPairing reads, in its order.
const pairingColumns = `id, coalesce(site_id::text, ''), home_url, coalesce(site_name, ''), coalesce(plugin_version, ''),
	status, coalesce(api_key_id::text, ''), failed_attempts, poll_interval_ms, coalesce(client_ip, ''),
	created_at, expires_at, last_polled_at, decided_at, coalesce(decided_by, ''), delivered_at, disconnected_at,
	coalesce(replaced_by::text, ''), device_code_hash, user_code_hash, user_code_group`

func scanPairing(row pgx.Row, p *pairing.Pairing) error {
	var intervalMS int64
	var polled, decided, delivered, disconnected *time.Time
	var device, user, group []byte
	err := row.Scan(&p.ID, &p.SiteID, &p.HomeURL, &p.SiteName, &p.PluginVersion, &p.Status, &p.KeyID,
		&p.FailedAttempts, &intervalMS, &p.ClientIP, &p.CreatedAt, &p.ExpiresAt, &polled, &decided, &p.DecidedBy,
		&delivered, &disconnected, &p.ReplacedBy, &device, &user, &group)
	if err != nil {
		return err
	}
	p.Interval = time.Duration(intervalMS) * time.Millisecond
	p.LastPolledAt, p.DecidedAt, p.DeliveredAt, p.DisconnectedAt =
		deref(polled), deref(decided), deref(delivered), deref(disconnected)
	copy(p.DeviceCodeHash[:], device)
	copy(p.UserCodeHash[:], user)
	copy(p.UserGroupHash[:], group)
	return nil
}

func deref(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return *t
}

// orNull is nil for the zero time and "", so that they are stored as NULL.
func orNull[T comparable](v T) any {
	var zero T
	if v == zero {
		return nil
	}
	return v
}

// Insert implements pairing.Tx.
func (t *pairingTx) Insert(ctx context.Context, p *pairing.Pairing) error {
	err := t.tx.QueryRow(ctx, `INSERT INTO pairings (device_code_hash, user_code_hash, user_code_group, home_url,
			site_name, plugin_version, status, failed_attempts, poll_interval_ms, client_ip, created_at, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) RETURNING id`,
		p.DeviceCodeHash[:], p.UserCodeHash[:], p.UserGroupHash[:], p.HomeURL, orNull(p.SiteName),
		orNull(p.PluginVersion), p.Status, p.FailedAttempts, p.Interval.Milliseconds(), orNull(p.ClientIP),
		p.CreatedAt, p.ExpiresAt).Scan(&p.ID)
	if isUniqueViolation(err, "pairings_device_code_hash_key") || isUniqueViolation(err, "pairings_pending_user_code") {
		return pairing.ErrCodeTaken
	}
	if err != nil {
		return fmt.Errorf("store: insert pairing: %w", err)
	}
	return nil
}

// one scans the single row of a locking query, or pairing.ErrNotFound.
func (t *pairingTx) one(ctx context.Context, what, query string, args ...any) (*pairing.Pairing, error) {
	var p pairing.Pairing
	err := scanPairing(t.tx.QueryRow(ctx, query, args...), &p)
	if errors.Is(err, pgx.ErrNoRows) || isInvalidText(err) {
		return nil, pairing.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("store: pairing by %s: %w", what, err)
	}
	return &p, nil
}

// many scans the rows of a locking query.
func (t *pairingTx) many(ctx context.Context, what, query string, args ...any) ([]*pairing.Pairing, error) {
	rows, _ := t.tx.Query(ctx, query, args...)
	ps, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*pairing.Pairing, error) {
		var p pairing.Pairing
		return &p, scanPairing(r, &p)
	})
	if err != nil {
		return nil, fmt.Errorf("store: pairings by %s: %w", what, err)
	}
	return ps, nil
}

// ByDeviceCode implements pairing.Tx.
func (t *pairingTx) ByDeviceCode(ctx context.Context, hash [32]byte) (*pairing.Pairing, error) {
	return t.one(ctx, "device code", `SELECT `+pairingColumns+` FROM pairings WHERE device_code_hash = $1 FOR UPDATE`, hash[:])
}

// ByUserGroup implements pairing.Tx.
func (t *pairingTx) ByUserGroup(ctx context.Context, hash [32]byte, since time.Time) ([]*pairing.Pairing, error) {
	return t.many(ctx, "user code", `SELECT `+pairingColumns+` FROM pairings
		WHERE user_code_group = $1 AND expires_at > $2 ORDER BY id FOR UPDATE`, hash[:], since)
}

// ByKey implements pairing.Tx: only a key of source pairing finds its
// pairing.
func (t *pairingTx) ByKey(ctx context.Context, keyID string) (*pairing.Pairing, error) {
	p, err := t.one(ctx, "key", `SELECT `+pairingColumns+` FROM pairings
		WHERE api_key_id = $1 AND EXISTS (SELECT 1 FROM api_keys k WHERE k.id = $1 AND k.source = 'pairing')
		FOR UPDATE`, keyID)
	if errors.Is(err, pairing.ErrNotFound) {
		return nil, pairing.ErrNotPairingKey
	}
	return p, err
}

// ByID implements pairing.Tx.
func (t *pairingTx) ByID(ctx context.Context, siteID, id string) (*pairing.Pairing, error) {
	return t.one(ctx, "id", `SELECT `+pairingColumns+` FROM pairings WHERE site_id = $1 AND id = $2 FOR UPDATE`,
		siteID, id)
}

// Delivered implements pairing.Tx. The transaction-scoped advisory lock on
// (site, home URL) is taken before the query, whose snapshot therefore
// includes every delivery committed before the lock was granted.
func (t *pairingTx) Delivered(ctx context.Context, siteID, homeURL string) ([]*pairing.Pairing, error) {
	if _, err := t.tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('pairing:' || $1 || ' ' || $2, 0))`,
		siteID, homeURL); err != nil {
		return nil, fmt.Errorf("store: lock pairings of a home url: %w", err)
	}
	return t.many(ctx, "home url", `SELECT `+pairingColumns+` FROM pairings
		WHERE site_id = $1 AND home_url = $2 AND status = 'delivered' ORDER BY id FOR UPDATE`, siteID, homeURL)
}

// Save implements pairing.Tx.
func (t *pairingTx) Save(ctx context.Context, p *pairing.Pairing) error {
	tag, err := t.tx.Exec(ctx, `UPDATE pairings SET site_id = $2, status = $3, api_key_id = $4, failed_attempts = $5,
			poll_interval_ms = $6, last_polled_at = $7, decided_at = $8, decided_by = $9, delivered_at = $10,
			disconnected_at = $11, replaced_by = $12
		WHERE id = $1`,
		p.ID, orNull(p.SiteID), p.Status, orNull(p.KeyID), p.FailedAttempts, p.Interval.Milliseconds(),
		orNull(p.LastPolledAt), orNull(p.DecidedAt), orNull(p.DecidedBy), orNull(p.DeliveredAt),
		orNull(p.DisconnectedAt), orNull(p.ReplacedBy))
	if isForeignKeyViolation(err) {
		return pairing.ErrUnknownSite
	}
	if err == nil && tag.RowsAffected() == 0 {
		err = errors.New("no such row")
	}
	if err != nil {
		return fmt.Errorf("store: save pairing %s: %w", p.ID, err)
	}
	return nil
}

// CheckSite implements pairing.Tx.
func (t *pairingTx) CheckSite(ctx context.Context, siteID string) error {
	var one int
	err := t.tx.QueryRow(ctx, `SELECT 1 FROM sites WHERE id = $1`, siteID).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) || isInvalidText(err) {
		return pairing.ErrUnknownSite
	}
	if err != nil {
		return fmt.Errorf("store: check site: %w", err)
	}
	return nil
}

// BeaconID implements pairing.Tx: the site's beacon id (store.BeaconID).
func (t *pairingTx) BeaconID(ctx context.Context, siteID string) (string, error) {
	_, id, err := beaconIDTx(ctx, t.tx, siteID, SourcePairing, false)
	return id, err
}

// CreateKey implements pairing.Tx: a key of source pairing.
func (t *pairingTx) CreateKey(ctx context.Context, siteID, name string, scopes apikey.Scope) (pairing.IssuedKey, error) {
	k, secret, err := createKey(ctx, t.tx, NewKey{SiteID: siteID, Name: name, Scopes: scopes, Source: SourcePairing})
	if err != nil {
		return pairing.IssuedKey{}, err
	}
	return pairing.IssuedKey{ID: k.ID, Secret: secret, Scopes: k.ScopeNames}, nil
}

// RevokeKey implements pairing.Tx.
func (t *pairingTx) RevokeKey(ctx context.Context, keyID string) error {
	_, err := revokeKeyTx(ctx, t.tx, keyID)
	return err
}

// PendingPairing is what the dashboard shows of a pairing before it is
// approved.
type PendingPairing struct {
	HomeURL   string
	SiteName  string
	ExpiresAt time.Time
}

// PendingPairingByUserCode returns the live pending pairing whose user code
// hashes to hash (pairing.HashCode of the normalised code), or a NOT_FOUND
// error.
func (db *DB) PendingPairingByUserCode(ctx context.Context, hash [32]byte, now time.Time) (PendingPairing, error) {
	var p PendingPairing
	var siteName *string
	err := db.Pool.QueryRow(ctx, `SELECT home_url, site_name, expires_at FROM pairings
		WHERE user_code_hash = $1 AND status = 'pending' AND expires_at > $2`, hash[:], now).
		Scan(&p.HomeURL, &siteName, &p.ExpiresAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return PendingPairing{}, notFound("pairing")
	}
	if err != nil {
		return PendingPairing{}, fmt.Errorf("store: pending pairing: %w", err)
	}
	if siteName != nil {
		p.SiteName = *siteName
	}
	return p, nil
}
