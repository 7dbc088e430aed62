package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/listgate/listgate/pkg/apierror"
)

// Account is an agency: the owner of sites and of dashboard users.
type Account struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// User is a dashboard user. PasswordHash is the stored hash (bcrypt); it
// is never serialised.
type User struct {
	ID           string    `json:"id"`
	AccountID    string    `json:"account_id"`
	AccountName  string    `json:"account_name"`
	Email        string    `json:"email"`
	PasswordHash string    `json:"-"`
	CreatedAt    time.Time `json:"created_at"`
}

// NewUser is the input of CreateUser.
type NewUser struct {
	// Email is trimmed and lower-cased; it must be unique.
	Email string
	// PasswordHash is the password's hash, made by the caller.
	PasswordHash string
	// Account names the user's account, created when missing. Empty: a new
	// account named after Email.
	Account string
	// SiteIDs are attached to the account; a site of another account is
	// a CONFLICT error.
	SiteIDs []string
}

// NormalizeEmail is how e-mail addresses are stored and looked up.
func NormalizeEmail(email string) string { return strings.ToLower(strings.TrimSpace(email)) }

// CreateUser creates a dashboard user, its account when missing, and
// attaches sites to the account, in one transaction.
func (db *DB) CreateUser(ctx context.Context, nu NewUser) (User, error) {
	email := NormalizeEmail(nu.Email)
	if len(email) < 3 || len(email) > 254 || !strings.Contains(email, "@") || strings.ContainsAny(email, " \t\r\n") {
		return User{}, invalid("email", "must be an e-mail address")
	}
	if nu.PasswordHash == "" {
		return User{}, errors.New("store: create user: empty password hash")
	}
	account := strings.TrimSpace(nu.Account)
	if account == "" {
		account = email
	}
	if len(account) > 200 {
		return User{}, invalid("account", "must be 1 to 200 characters")
	}
	u := User{Email: email, AccountName: account}
	err := db.InTx(ctx, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, `INSERT INTO accounts (name) VALUES ($1)
			ON CONFLICT (name) DO UPDATE SET name = excluded.name RETURNING id`, account).Scan(&u.AccountID)
		if err != nil {
			return fmt.Errorf("store: create account: %w", err)
		}
		err = tx.QueryRow(ctx, `INSERT INTO users (account_id, email, password_hash) VALUES ($1, $2, $3)
			RETURNING id, created_at`, u.AccountID, email, nu.PasswordHash).Scan(&u.ID, &u.CreatedAt)
		if isUniqueViolation(err, "") {
			return apierror.Conflict("a user with this e-mail address exists")
		}
		if err != nil {
			return fmt.Errorf("store: create user: %w", err)
		}
		for _, site := range nu.SiteIDs {
			if err := attachSite(ctx, tx, u.AccountID, site); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return User{}, err
	}
	return u, nil
}

// attachSite makes siteID the account's; a site of another account is a
// CONFLICT error.
func attachSite(ctx context.Context, tx pgx.Tx, accountID, siteID string) error {
	var owner *string
	err := tx.QueryRow(ctx, `SELECT account_id FROM sites WHERE id = $1 FOR UPDATE`, siteID).Scan(&owner)
	if errors.Is(err, pgx.ErrNoRows) || isInvalidText(err) {
		return notFound("site")
	}
	if err != nil {
		return fmt.Errorf("store: attach site: %w", err)
	}
	if owner != nil && *owner != accountID {
		return apierror.Conflict("site " + siteID + " belongs to another account")
	}
	if _, err := tx.Exec(ctx, `UPDATE sites SET account_id = $1 WHERE id = $2`, accountID, siteID); err != nil {
		return fmt.Errorf("store: attach site: %w", err)
	}
	return nil
}

const userColumns = `u.id, u.account_id, a.name, u.email, u.password_hash, u.created_at`

// UserByEmail returns the user with this address (compared as
// NormalizeEmail), or a NOT_FOUND error.
func (db *DB) UserByEmail(ctx context.Context, email string) (User, error) {
	var u User
	err := db.Pool.QueryRow(ctx, `SELECT `+userColumns+` FROM users u JOIN accounts a ON a.id = u.account_id
		WHERE u.email = $1`, NormalizeEmail(email)).
		Scan(&u.ID, &u.AccountID, &u.AccountName, &u.Email, &u.PasswordHash, &u.CreatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return User{}, notFound("user")
	}
	if err != nil {
		return User{}, fmt.Errorf("store: user by e-mail: %w", err)
	}
	return u, nil
}

// Session is a signed-in dashboard session and its user.
type Session struct {
	User      User
	CSRFToken string
	ExpiresAt time.Time
}

// CreateSession stores a session whose cookie token hashes to tokenHash.
func (db *DB) CreateSession(ctx context.Context, tokenHash [32]byte, userID, csrfToken string, expiresAt time.Time) error {
	_, err := db.Pool.Exec(ctx, `INSERT INTO dashboard_sessions (token_hash, user_id, csrf_token, expires_at)
		VALUES ($1, $2, $3, $4)`, tokenHash[:], userID, csrfToken, expiresAt)
	if err != nil {
		return fmt.Errorf("store: create session: %w", err)
	}
	return nil
}

// SessionByToken returns the live session whose token hashes to tokenHash
// and records that it was seen at now, or a NOT_FOUND error (also for an
// expired session, which it deletes).
func (db *DB) SessionByToken(ctx context.Context, tokenHash [32]byte, now time.Time) (Session, error) {
	var s Session
	u := &s.User
	err := db.Pool.QueryRow(ctx, `UPDATE dashboard_sessions s SET last_seen = $2
		FROM users u JOIN accounts a ON a.id = u.account_id
		WHERE s.token_hash = $1 AND s.expires_at > $2 AND u.id = s.user_id
		RETURNING `+userColumns+`, s.csrf_token, s.expires_at`, tokenHash[:], now).
		Scan(&u.ID, &u.AccountID, &u.AccountName, &u.Email, &u.PasswordHash, &u.CreatedAt, &s.CSRFToken, &s.ExpiresAt)
	if errors.Is(err, pgx.ErrNoRows) {
		if _, err := db.Pool.Exec(ctx, `DELETE FROM dashboard_sessions WHERE token_hash = $1`, tokenHash[:]); err != nil {
			return Session{}, fmt.Errorf("store: delete expired session: %w", err)
		}
		return Session{}, notFound("session")
	}
	if err != nil {
		return Session{}, fmt.Errorf("store: session: %w", err)
	}
	return s, nil
}

// DeleteSession signs a session out. An unknown token is not an error.
func (db *DB) DeleteSession(ctx context.Context, tokenHash [32]byte) error {
	if _, err := db.Pool.Exec(ctx, `DELETE FROM dashboard_sessions WHERE token_hash = $1`, tokenHash[:]); err != nil {
		return fmt.Errorf("store: delete session: %w", err)
	}
	return nil
}

// DeleteExpiredSessions removes the sessions expired at now and returns
// how many.
func (db *DB) DeleteExpiredSessions(ctx context.Context, now time.Time) (int64, error) {
	tag, err := db.Pool.Exec(ctx, `DELETE FROM dashboard_sessions WHERE expires_at <= $1`, now)
	if err != nil {
		return 0, fmt.Errorf("store: delete expired sessions: %w", err)
	}
	return tag.RowsAffected(), nil
}

// AccountSites returns the account's sites, by name.
func (db *DB) AccountSites(ctx context.Context, accountID string) ([]Site, error) {
	rows, _ := db.Pool.Query(ctx, `SELECT `+siteColumns+` FROM sites
		WHERE account_id = $1 ORDER BY name, id`, accountID)
	sites, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Site, error) { return scanSite(r) })
	if err != nil {
		return nil, fmt.Errorf("store: account sites: %w", err)
	}
	return sites, nil
}

// AccountSite returns the site siteID when it belongs to the account, and
// a NOT_FOUND error otherwise (whether the site exists or not).
func (db *DB) AccountSite(ctx context.Context, accountID, siteID string) (Site, error) {
	s, err := scanSite(db.Pool.QueryRow(ctx, `SELECT `+siteColumns+` FROM sites
		WHERE id = $1 AND account_id = $2`, siteID, accountID))
	if errors.Is(err, pgx.ErrNoRows) || isInvalidText(err) {
		return Site{}, notFound("site")
	}
	if err != nil {
		return Site{}, fmt.Errorf("store: account site: %w", err)
	}
	return s, nil
}
