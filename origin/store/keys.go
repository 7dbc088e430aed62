package store

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/listgate/listgate/pkg/apikey"
)

// Key sources, recorded on every key.
const (
	SourceDashboard = "dashboard"
	SourceCLI       = "cli"
	SourcePairing   = "pairing"
)

// Key is an API key's record. The secret is never stored: only its SHA-256.
type Key struct {
	ID         string       `json:"id"`
	SiteID     string       `json:"site_id"`
	Name       string       `json:"name"`
	Scopes     apikey.Scope `json:"-"`
	ScopeNames []string     `json:"scopes"`
	Source     string       `json:"source"`
	// Hint is the key's last four characters, to tell keys apart in lists.
	Hint       string     `json:"hint"`
	CreatedAt  time.Time  `json:"created_at"`
	LastUsedAt *time.Time `json:"last_used_at"`
	RevokedAt  *time.Time `json:"revoked_at"`
}

// NewKey is the input of CreateKey.
type NewKey struct {
	SiteID string
	Name   string
	Scopes apikey.Scope
	Source string
}

// CreateKey generates a key for a site and stores its hash. It returns the
// record and the secret, which exists nowhere else: the caller shows it once.
func (db *DB) CreateKey(ctx context.Context, nk NewKey) (Key, string, error) {
	return createKey(ctx, db.Pool, nk)
}

// querier is what pgxpool.Pool and pgx.Tx share.
type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

func createKey(ctx context.Context, q querier, nk NewKey) (Key, string, error) {
	name := strings.TrimSpace(nk.Name)
	if name == "" || len(name) > 200 {
		return Key{}, "", invalid("name", "must be 1 to 200 characters")
	}
	if nk.Scopes == 0 || nk.Scopes&^apikey.All != 0 {
		return Key{}, "", invalid("scopes", "at least one known scope is required")
	}
	if !nk.Scopes.ValidSet() {
		return Key{}, "", invalid("scopes", "views:write is granted alone: a beacon id is public and can do nothing else")
	}
	switch nk.Source {
	case SourceDashboard, SourceCLI, SourcePairing:
	default:
		return Key{}, "", fmt.Errorf("store: create key: unknown source %q", nk.Source)
	}
	secret, err := apikey.Generate()
	if err != nil {
		return Key{}, "", fmt.Errorf("store: create key: %w", err)
	}
	hash := apikey.Hash(secret)
	k := Key{SiteID: nk.SiteID, Name: name, Scopes: nk.Scopes, ScopeNames: nk.Scopes.Names(),
		Source: nk.Source, Hint: secret[len(secret)-4:]}
	err = q.QueryRow(ctx, `INSERT INTO api_keys (site_id, key_hash, hint, name, scopes, source)
		VALUES ($1, $2, $3, $4, $5, $6) RETURNING id, created_at`,
		nk.SiteID, hash[:], k.Hint, k.Name, k.ScopeNames, k.Source).Scan(&k.ID, &k.CreatedAt)
	if isInvalidText(err) || isForeignKeyViolation(err) {
		return Key{}, "", notFound("site")
	}
	if err != nil {
		return Key{}, "", fmt.Errorf("store: create key: %w", err)
	}
	return k, secret, nil
}

// RevokeKey revokes a key and, in the same transaction, tells the edges
// (key.revoked with the key's hash), so they refuse it within a second.
// Revoking a revoked key is a no-op that succeeds.
func (db *DB) RevokeKey(ctx context.Context, keyID string) (Key, error) {
	var k Key
	err := db.InTx(ctx, func(tx pgx.Tx) error {
		var err error
		k, err = revokeKeyTx(ctx, tx, keyID)
		return err
	})
	return k, err
}

// revokeKeyTx revokes a key in tx and writes key.revoked when it was live.
func revokeKeyTx(ctx context.Context, tx pgx.Tx, keyID string) (Key, error) {
	var k Key
	var hash []byte
	var wasRevoked bool
	row := tx.QueryRow(ctx, `UPDATE api_keys k SET revoked_at = coalesce(k.revoked_at, now())
		FROM (SELECT id AS old_id, revoked_at AS old_revoked FROM api_keys WHERE id = $1 FOR UPDATE) o
		WHERE k.id = o.old_id
		RETURNING `+keyColumns+`, key_hash, o.old_revoked IS NOT NULL`, keyID)
	if err := scanKey(row, &k, &hash, &wasRevoked); err != nil {
		if errors.Is(err, pgx.ErrNoRows) || isInvalidText(err) {
			return Key{}, notFound("key")
		}
		return Key{}, fmt.Errorf("store: revoke key: %w", err)
	}
	if wasRevoked {
		return k, nil
	}
	return k, InsertEvent(ctx, tx, k.SiteID, EventKeyRevoked, map[string]any{
		"key_id": k.ID, "site_id": k.SiteID, "key_hash": hex.EncodeToString(hash),
	})
}

// ListKeys returns a site's keys, newest first, revoked ones included.
func (db *DB) ListKeys(ctx context.Context, siteID string) ([]Key, error) {
	if _, err := db.GetSite(ctx, siteID); err != nil {
		return nil, err
	}
	rows, _ := db.Pool.Query(ctx, `SELECT `+keyColumns+` FROM api_keys WHERE site_id = $1
		ORDER BY created_at DESC, id`, siteID)
	keys, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Key, error) {
		var k Key
		return k, scanKey(r, &k)
	})
	if err != nil {
		return nil, fmt.Errorf("store: list keys: %w", err)
	}
	return keys, nil
}

// KeyByHash returns the key whose secret hashes to hash, revoked or not, or a
// NOT_FOUND error. The site's plan comes with it.
func (db *DB) KeyByHash(ctx context.Context, hash [32]byte) (Key, error) {
	var k Key
	err := scanKey(db.Pool.QueryRow(ctx, `SELECT `+keyColumns+` FROM api_keys WHERE key_hash = $1`, hash[:]), &k)
	if errors.Is(err, pgx.ErrNoRows) {
		return Key{}, notFound("key")
	}
	if err != nil {
		return Key{}, fmt.Errorf("store: key by hash: %w", err)
	}
	return k, nil
}

// EdgeKey is what the edge is told of a key (introspection): its identity,
// scopes, whether it is revoked, and its site's plan and browser origins.
type EdgeKey struct {
	ID, SiteID  string
	ScopeNames  []string
	Revoked     bool
	Plan        string
	CORSOrigins []string
	// Timezone is the site's IANA time zone: the edge counts listing views
	// per day in it.
	Timezone string
}

// KeyForEdge looks a key up by the hash of its secret for an edge's
// introspection, revoked or not (NOT_FOUND when there is none), and marks a
// live key used when its last_used_at is a minute old or unset — in one
// round trip: a data-modifying WITH runs whether or not the main query
// reads it, and its guard makes it a no-op most of the time.
func (db *DB) KeyForEdge(ctx context.Context, hash [32]byte) (EdgeKey, error) {
	var k EdgeKey
	err := db.Pool.QueryRow(ctx, `
		WITH touch AS (
			UPDATE api_keys SET last_used_at = now()
			WHERE key_hash = $1 AND revoked_at IS NULL
			  AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')
		)
		SELECT k.id, k.site_id, k.scopes, k.revoked_at IS NOT NULL, s.plan, s.cors_origins, s.timezone
		FROM api_keys k JOIN sites s ON s.id = k.site_id
		WHERE k.key_hash = $1`, hash[:]).Scan(&k.ID, &k.SiteID, &k.ScopeNames, &k.Revoked, &k.Plan, &k.CORSOrigins, &k.Timezone)
	if errors.Is(err, pgx.ErrNoRows) {
		return EdgeKey{}, notFound("key")
	}
	if err != nil {
		return EdgeKey{}, fmt.Errorf("store: key for edge: %w", err)
	}
	return k, nil
}

const keyColumns = `id, site_id, name, scopes, source, hint, created_at, last_used_at, revoked_at`

// scanKey scans keyColumns, then extra destinations.
func scanKey(row pgx.Row, k *Key, extra ...any) error {
	dst := append([]any{&k.ID, &k.SiteID, &k.Name, &k.ScopeNames, &k.Source, &k.Hint,
		&k.CreatedAt, &k.LastUsedAt, &k.RevokedAt}, extra...)
	if err := row.Scan(dst...); err != nil {
		return err
	}
	s, err := apikey.ParseScopeList(k.ScopeNames)
	if err != nil {
		return fmt.Errorf("key %s: %w", k.ID, err)
	}
	k.Scopes = s
	return nil
}
