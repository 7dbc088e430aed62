package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/listgate/listgate/pkg/cors"
	"github.com/listgate/listgate/pkg/internalapi"
	"github.com/listgate/listgate/pkg/model"
)

// Site is a tenant: one agency website and its data.
type Site struct {
	ID       string     `json:"id"`
	Name     string     `json:"name"`
	Plan     model.Plan `json:"plan"`
	Timezone string     `json:"timezone"`
	// CORSOrigins are the browser origins allowed to call the API with the
	// site's keys, in the form of cors.Normalize; [] for none.
	CORSOrigins []string  `json:"cors_origins"`
	CreatedAt   time.Time `json:"created_at"`
}

// siteColumns are the columns scanSite reads, in its order.
const siteColumns = `id, name, plan, timezone, cors_origins, created_at`

// scanSite scans a row of siteColumns.
func scanSite(row pgx.Row) (Site, error) {
	var s Site
	if err := row.Scan(&s.ID, &s.Name, &s.Plan, &s.Timezone, &s.CORSOrigins, &s.CreatedAt); err != nil {
		return Site{}, err
	}
	if s.CORSOrigins == nil {
		s.CORSOrigins = []string{}
	}
	return s, nil
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
	s, err := scanSite(db.Pool.QueryRow(ctx, `INSERT INTO sites (name, plan, timezone) VALUES ($1, $2, $3)
		RETURNING `+siteColumns, name, plan, timezone))
	if err != nil {
		return Site{}, fmt.Errorf("store: create site: %w", err)
	}
	return s, nil
}

// GetSite returns the site with the given id, or a NOT_FOUND error.
func (db *DB) GetSite(ctx context.Context, id string) (Site, error) {
	s, err := scanSite(db.Pool.QueryRow(ctx, `SELECT `+siteColumns+` FROM sites WHERE id = $1`, id))
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

// SetCORS replaces the browser origins a site allows with origins,
// normalized by cors.NormalizeList (repeats dropped, at most
// cors.MaxOrigins; none clears the list), and in the same transaction tells
// the edges through the outbox (site.cors_changed, data internalapi.SiteCORS).
// It returns the list stored. A bad origin or too many are a
// VALIDATION_ERROR on "origins"; an unknown site is NOT_FOUND.
func (db *DB) SetCORS(ctx context.Context, siteID string, origins []string) ([]string, error) {
	list, err := cors.NormalizeList(origins)
	if err != nil {
		return nil, invalid("origins", err.Error())
	}
	err = db.InTx(ctx, func(tx pgx.Tx) error {
		// The event names the site as stored, whatever form of its id the
		// caller used: edges compare ids as strings.
		var id string
		err := tx.QueryRow(ctx, `UPDATE sites SET cors_origins = $2, updated_at = now() WHERE id = $1
			RETURNING id`, siteID, list).Scan(&id)
		if errors.Is(err, pgx.ErrNoRows) || isInvalidText(err) {
			return notFound("site")
		}
		if err != nil {
			return fmt.Errorf("store: set cors: %w", err)
		}
		return InsertEvent(ctx, tx, id, EventCORSChanged, internalapi.SiteCORS{SiteID: id, Origins: list})
	})
	if err != nil {
		return nil, err
	}
	return list, nil
}

// ListSites returns every site, oldest first.
func (db *DB) ListSites(ctx context.Context) ([]Site, error) {
	rows, _ := db.Pool.Query(ctx, `SELECT `+siteColumns+` FROM sites ORDER BY created_at, id`)
	sites, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Site, error) { return scanSite(r) })
	if err != nil {
		return nil, fmt.Errorf("store: list sites: %w", err)
	}
	return sites, nil
}
