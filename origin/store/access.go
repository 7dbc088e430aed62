package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/listgate/listgate/pkg/apierror"
)

// SiteAccess is the outcome of GrantSite and RevokeSite: the user named,
// their account, the site, and whether anything changed.
type SiteAccess struct {
	User    User   `json:"user"`
	SiteID  string `json:"site_id"`
	Changed bool   `json:"changed"`
}

// GrantSite gives the account of the user with this e-mail address the
// site: it appears in the dashboard of every user of the account from
// their next request. A site the account has already is no change; a site
// of another account is a CONFLICT error (revoke it there first), an
// unknown user or site NOT_FOUND.
func (db *DB) GrantSite(ctx context.Context, email, siteID string) (SiteAccess, error) {
	var out SiteAccess
	err := db.InTx(ctx, func(tx pgx.Tx) error {
		u, err := userByEmailTx(ctx, tx, email)
		if err != nil {
			return err
		}
		out = SiteAccess{User: u, SiteID: siteID}
		var owner *string
		var ownerName *string
		err = tx.QueryRow(ctx, `SELECT s.account_id, a.name FROM sites s LEFT JOIN accounts a ON a.id = s.account_id
			WHERE s.id = $1 FOR UPDATE OF s`, siteID).Scan(&owner, &ownerName)
		if errors.Is(err, pgx.ErrNoRows) || isInvalidText(err) {
			return notFound("site")
		}
		if err != nil {
			return fmt.Errorf("store: grant site: %w", err)
		}
		switch {
		case owner != nil && *owner == u.AccountID:
			return nil
		case owner != nil:
			name := ""
			if ownerName != nil {
				name = *ownerName
			}
			return apierror.Conflict(fmt.Sprintf("site %s belongs to another account (%q): revoke it from a user of that account first", siteID, name))
		}
		if _, err := tx.Exec(ctx, `UPDATE sites SET account_id = $1 WHERE id = $2`, u.AccountID, siteID); err != nil {
			return fmt.Errorf("store: grant site: %w", err)
		}
		out.Changed = true
		return nil
	})
	return out, err
}

// RevokeSite takes the site away from the account of the user with this
// e-mail address (from every user of the account): the dashboard answers
// its pages 404 from the next request. A site the account does not have
// is a NOT_FOUND error.
func (db *DB) RevokeSite(ctx context.Context, email, siteID string) (SiteAccess, error) {
	var out SiteAccess
	err := db.InTx(ctx, func(tx pgx.Tx) error {
		u, err := userByEmailTx(ctx, tx, email)
		if err != nil {
			return err
		}
		out = SiteAccess{User: u, SiteID: siteID}
		tag, err := tx.Exec(ctx, `UPDATE sites SET account_id = NULL WHERE id = $1 AND account_id = $2`, siteID, u.AccountID)
		if isInvalidText(err) || (err == nil && tag.RowsAffected() == 0) {
			return apierror.NotFound("site " + siteID + " is not one of the sites of " + u.Email + "'s account")
		}
		if err != nil {
			return fmt.Errorf("store: revoke site: %w", err)
		}
		out.Changed = true
		return nil
	})
	return out, err
}

// UserAccess is a dashboard user with the sites of their account.
type UserAccess struct {
	User
	SiteIDs []string `json:"site_ids"`
}

// ListUsers returns every dashboard user with their account's sites, by
// e-mail address.
func (db *DB) ListUsers(ctx context.Context) ([]UserAccess, error) {
	rows, _ := db.Pool.Query(ctx, `SELECT `+userColumns+`,
		coalesce((SELECT array_agg(s.id::text ORDER BY s.name, s.id) FROM sites s WHERE s.account_id = u.account_id), '{}')
		FROM users u JOIN accounts a ON a.id = u.account_id ORDER BY u.email`)
	users, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (UserAccess, error) {
		var ua UserAccess
		err := r.Scan(&ua.ID, &ua.AccountID, &ua.AccountName, &ua.Email, &ua.PasswordHash, &ua.CreatedAt, &ua.SiteIDs)
		ua.PasswordHash = ""
		return ua, err
	})
	if err != nil {
		return nil, fmt.Errorf("store: list users: %w", err)
	}
	return users, nil
}

// userByEmailTx is UserByEmail in tx, with a NOT_FOUND error that says
// what to do.
func userByEmailTx(ctx context.Context, tx pgx.Tx, email string) (User, error) {
	var u User
	err := tx.QueryRow(ctx, `SELECT `+userColumns+` FROM users u JOIN accounts a ON a.id = u.account_id
		WHERE u.email = $1`, NormalizeEmail(email)).
		Scan(&u.ID, &u.AccountID, &u.AccountName, &u.Email, &u.PasswordHash, &u.CreatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return User{}, apierror.NotFound("no dashboard user has the e-mail address " + NormalizeEmail(email) + ": create one with origin users create")
	}
	if err != nil {
		return User{}, fmt.Errorf("store: user by e-mail: %w", err)
	}
	return u, nil
}
