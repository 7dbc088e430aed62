package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/listgate/listgate/pkg/model"
)

// Site is a tenant: one agency website and its data.
type Site struct {
	ID        string     `json:"id"`
	Name      string     `json:"name"`
	Plan      model.Plan `json:"plan"`
	Timezone  string     `json:"timezone"`
	CreatedAt time.Time  `json:"created_at"`
}

// DefaultTimezone is the time zone of a site created without one; feeds carry
// local times and most agencies are on Sydney time.
const DefaultTimezone = "Australia/Sydney"

// CreateSite creates a site. timezone empty means DefaultTimezone; it must
// be an IANA zone name.
func (db *DB) CreateSite(ctx context.Context, name string, plan model.Plan, timezone string) (Site, error) {
	name = strings.TrimSpace(name)
	if name == "" || len(name) > 200 {
		return Site{}, invalid("name", "must be 1 to 200 characters")
	}
	if _, err := model.ParsePlan(string(plan)); err != nil {
		return Site{}, invalid("plan", err.Error())
	}
	if timezone == "" {
		timezone = DefaultTimezone
	}
	if _, err := time.LoadLocation(timezone); err != nil || timezone == "Local" {
		return Site{}, invalid("timezone", "not a known IANA time zone")
	}
	var s Site
	err := db.Pool.QueryRow(ctx, `INSERT INTO sites (name, plan, timezone) VALUES ($1, $2, $3)
		RETURNING id, name, plan, timezone, created_at`, name, plan, timezone).
		Scan(&s.ID, &s.Name, &s.Plan, &s.Timezone, &s.CreatedAt)
	if err != nil {
		return Site{}, fmt.Errorf("store: create site: %w", err)
	}
	return s, nil
}

// GetSite returns the site with the given id, or a NOT_FOUND error.
func (db *DB) GetSite(ctx context.Context, id string) (Site, error) {
	var s Site
	err := db.Pool.QueryRow(ctx, `SELECT id, name, plan, timezone, created_at FROM sites WHERE id = $1`, id).
		Scan(&s.ID, &s.Name, &s.Plan, &s.Timezone, &s.CreatedAt)
	if errors.Is(err, pgx.ErrNoRows) || isInvalidText(err) {
		return Site{}, notFound("site")
	}
	if err != nil {
		return Site{}, fmt.Errorf("store: get site: %w", err)
	}
	return s, nil
}

// SetPlan changes a site's plan and, in the same transaction, tells the edges
// through the outbox (site.plan_changed), so the new limit applies without a
// restart.
func (db *DB) SetPlan(ctx context.Context, siteID string, plan model.Plan) error {
	if _, err := model.ParsePlan(string(plan)); err != nil {
		return invalid("plan", err.Error())
	}
	return db.InTx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE sites SET plan = $2, updated_at = now() WHERE id = $1`, siteID, plan)
		if isInvalidText(err) || (err == nil && tag.RowsAffected() == 0) {
			return notFound("site")
		}
		if err != nil {
			return fmt.Errorf("store: set plan: %w", err)
		}
		return InsertEvent(ctx, tx, siteID, EventPlanChanged, map[string]any{
			"site_id": siteID, "plan": plan, "limit": plan.Limit(),
		})
	})
}

// ListSites returns every site, oldest first.
func (db *DB) ListSites(ctx context.Context) ([]Site, error) {
	rows, _ := db.Pool.Query(ctx, `SELECT id, name, plan, timezone, created_at FROM sites ORDER BY created_at, id`)
	sites, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Site, error) {
		var s Site
		err := r.Scan(&s.ID, &s.Name, &s.Plan, &s.Timezone, &s.CreatedAt)
		return s, err
	})
	if err != nil {
		return nil, fmt.Errorf("store: list sites: %w", err)
	}
	return sites, nil
}
