package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// OAuthClient is an upload API client (OAuth 2.0 client credentials) of one
// site. Its secret is never stored: only its SHA-256.
type OAuthClient struct {
	ClientID  string     `json:"client_id"`
	SiteID    string     `json:"site_id"`
	Name      string     `json:"name"`
	CreatedAt time.Time  `json:"created_at"`
	RevokedAt *time.Time `json:"revoked_at"`
}

// NewOAuthClient is the input of CreateOAuthClient. The caller generates the
// client id and the secret; only the secret's hash reaches the database.
type NewOAuthClient struct {
	SiteID     string
	ClientID   string
	Name       string
	SecretHash [32]byte
}

// CreateOAuthClient stores a client. An unknown or malformed site is
// NOT_FOUND; a blank or over-long name is VALIDATION_ERROR.
func (db *DB) CreateOAuthClient(ctx context.Context, nc NewOAuthClient) (OAuthClient, error) {
	name := strings.TrimSpace(nc.Name)
	if name == "" || len(name) > 200 {
		return OAuthClient{}, invalid("name", "must be 1 to 200 characters")
	}
	c := OAuthClient{ClientID: nc.ClientID, SiteID: nc.SiteID, Name: name}
	err := db.Pool.QueryRow(ctx, `INSERT INTO oauth_clients (site_id, client_id, secret_hash, name)
		VALUES ($1, $2, $3, $4) RETURNING created_at`,
		nc.SiteID, nc.ClientID, nc.SecretHash[:], name).Scan(&c.CreatedAt)
	if isInvalidText(err) || isForeignKeyViolation(err) {
		return OAuthClient{}, notFound("site")
	}
	if err != nil {
		return OAuthClient{}, fmt.Errorf("store: create oauth client: %w", err)
	}
	return c, nil
}

// OAuthClientByID returns a client, revoked or not, and its secret hash, or
// a NOT_FOUND error.
func (db *DB) OAuthClientByID(ctx context.Context, clientID string) (OAuthClient, [32]byte, error) {
	var c OAuthClient
	var hash []byte
	var sum [32]byte
	err := db.Pool.QueryRow(ctx, `SELECT `+oauthClientColumns+`, secret_hash FROM oauth_clients
		WHERE client_id = $1`, clientID).Scan(&c.ClientID, &c.SiteID, &c.Name, &c.CreatedAt, &c.RevokedAt, &hash)
	if errors.Is(err, pgx.ErrNoRows) {
		return OAuthClient{}, sum, notFound("client")
	}
	if err != nil {
		return OAuthClient{}, sum, fmt.Errorf("store: oauth client: %w", err)
	}
	copy(sum[:], hash)
	return c, sum, nil
}

// ListOAuthClients returns a site's clients, newest first, revoked ones
// included. An unknown site is NOT_FOUND.
func (db *DB) ListOAuthClients(ctx context.Context, siteID string) ([]OAuthClient, error) {
	if _, err := db.GetSite(ctx, siteID); err != nil {
		return nil, err
	}
	rows, _ := db.Pool.Query(ctx, `SELECT `+oauthClientColumns+` FROM oauth_clients WHERE site_id = $1
		ORDER BY created_at DESC, client_id`, siteID)
	clients, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (OAuthClient, error) {
		var c OAuthClient
		err := r.Scan(&c.ClientID, &c.SiteID, &c.Name, &c.CreatedAt, &c.RevokedAt)
		return c, err
	})
	if err != nil {
		return nil, fmt.Errorf("store: list oauth clients: %w", err)
	}
	return clients, nil
}

// RevokeOAuthClient revokes a client and deletes its access tokens in one
// transaction, so none of them works afterwards. Revoking a revoked client
// succeeds and changes nothing. An unknown client is NOT_FOUND.
func (db *DB) RevokeOAuthClient(ctx context.Context, clientID string) (OAuthClient, error) {
	var c OAuthClient
	err := db.InTx(ctx, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, `UPDATE oauth_clients SET revoked_at = coalesce(revoked_at, now())
			WHERE client_id = $1 RETURNING `+oauthClientColumns, clientID).
			Scan(&c.ClientID, &c.SiteID, &c.Name, &c.CreatedAt, &c.RevokedAt)
		if errors.Is(err, pgx.ErrNoRows) {
			return notFound("client")
		}
		if err != nil {
			return fmt.Errorf("store: revoke oauth client: %w", err)
		}
		if _, err := tx.Exec(ctx, `DELETE FROM oauth_tokens WHERE site_id = $1 AND client_id = $2`,
			c.SiteID, c.ClientID); err != nil {
			return fmt.Errorf("store: revoke oauth client tokens: %w", err)
		}
		return nil
	})
	return c, err
}

const oauthClientColumns = `client_id, site_id, name, created_at, revoked_at`

// OAuthToken is an access token's record; the token itself is never stored.
type OAuthToken struct {
	Hash      [32]byte
	SiteID    string
	ClientID  string
	Scope     string
	ExpiresAt time.Time
}

// CreateOAuthToken stores an access token of a client that is not revoked.
// It returns a NOT_FOUND error when the client is unknown or revoked (a
// revocation that raced with the token request), and fills in t.SiteID.
func (db *DB) CreateOAuthToken(ctx context.Context, t *OAuthToken) error {
	err := db.Pool.QueryRow(ctx, `INSERT INTO oauth_tokens (token_hash, site_id, client_id, scope, expires_at)
		SELECT $1, site_id, client_id, $3, $4 FROM oauth_clients WHERE client_id = $2 AND revoked_at IS NULL
		RETURNING site_id`, t.Hash[:], t.ClientID, t.Scope, t.ExpiresAt).Scan(&t.SiteID)
	if errors.Is(err, pgx.ErrNoRows) {
		return notFound("client")
	}
	if err != nil {
		return fmt.Errorf("store: create oauth token: %w", err)
	}
	return nil
}

// OAuthTokenByHash returns the token whose hash is hash when it expires
// after now and its client is not revoked; otherwise a NOT_FOUND error.
func (db *DB) OAuthTokenByHash(ctx context.Context, hash [32]byte, now time.Time) (OAuthToken, error) {
	t := OAuthToken{Hash: hash}
	err := db.Pool.QueryRow(ctx, `SELECT t.site_id, t.client_id, t.scope, t.expires_at
		FROM oauth_tokens t JOIN oauth_clients c ON c.site_id = t.site_id AND c.client_id = t.client_id
		WHERE t.token_hash = $1 AND t.expires_at > $2 AND c.revoked_at IS NULL`, hash[:], now).
		Scan(&t.SiteID, &t.ClientID, &t.Scope, &t.ExpiresAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return OAuthToken{}, notFound("token")
	}
	if err != nil {
		return OAuthToken{}, fmt.Errorf("store: oauth token: %w", err)
	}
	return t, nil
}

// DeleteExpiredOAuthTokens deletes up to limit tokens that expired at or
// before now and returns how many it deleted.
func (db *DB) DeleteExpiredOAuthTokens(ctx context.Context, now time.Time, limit int) (int64, error) {
	tag, err := db.Pool.Exec(ctx, `DELETE FROM oauth_tokens WHERE token_hash IN (
		SELECT token_hash FROM oauth_tokens WHERE expires_at <= $1 LIMIT $2)`, now, limit)
	if err != nil {
		return 0, fmt.Errorf("store: delete expired oauth tokens: %w", err)
	}
	return tag.RowsAffected(), nil
}
