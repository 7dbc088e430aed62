package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// AgentRow is an agent as the dashboard's agents page lists it.
type AgentRow struct {
	ID                       int64
	Name, Email              string
	PhoneMobile, PhoneOffice string
	// CurrentListings is how many current listings name the agent.
	CurrentListings int64
	// RecentLeads is how many leads received since the time asked for are
	// assigned to the agent now.
	RecentLeads int64
	// RoundRobin: the agent takes turns for the leads no other rule
	// assigns (an agent with an e-mail; see submit_lead).
	RoundRobin bool
}

// DashboardAgents returns a page of the site's agents, by name, with
// their current listings and the leads received since since that are
// assigned to them, and whether there are more. An id that is not a UUID
// is NOT_FOUND.
func (db *DB) DashboardAgents(ctx context.Context, siteID string, since time.Time, limit, offset int) ([]AgentRow, bool, error) {
	// The page's agents first, then their counts: what is read is the
	// page's agents' listings and leads, not every agent's of the site.
	rows, _ := db.Pool.Query(ctx, `
		WITH a AS MATERIALIZED (
			SELECT id, name, email, phone_mobile, phone_office FROM agents WHERE site_id = $1
			ORDER BY lower(name), lower(email), id`+fmt.Sprintf(" LIMIT %d OFFSET %d", limit+1, max(offset, 0))+`),
		listed AS (
			SELECT la.agent_id, count(DISTINCT la.listing_ref) AS n
			FROM listing_agents la
			JOIN listings l ON l.site_id = $1 AND l.ref = la.listing_ref
			WHERE la.site_id = $1 AND la.agent_id IN (SELECT id FROM a) AND l.status = 'current'
			GROUP BY la.agent_id),
		recent AS (
			SELECT assigned_agent_id AS agent_id, count(*) AS n FROM leads
			WHERE site_id = $1 AND created_at >= $2 AND assigned_agent_id IN (SELECT id FROM a)
			GROUP BY assigned_agent_id)
		SELECT a.id, a.name, coalesce(a.email, ''), coalesce(a.phone_mobile, ''), coalesce(a.phone_office, ''),
			coalesce(listed.n, 0), coalesce(recent.n, 0), btrim(coalesce(a.email, '')) <> ''
		FROM a
		LEFT JOIN listed ON listed.agent_id = a.id
		LEFT JOIN recent ON recent.agent_id = a.id
		ORDER BY lower(a.name), lower(a.email), a.id`, siteID, since)
	as, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (AgentRow, error) {
		var a AgentRow
		err := r.Scan(&a.ID, &a.Name, &a.Email, &a.PhoneMobile, &a.PhoneOffice, &a.CurrentListings,
			&a.RecentLeads, &a.RoundRobin)
		return a, err
	})
	if isInvalidText(err) {
		return nil, false, notFound("site")
	}
	if err != nil {
		return nil, false, fmt.Errorf("store: dashboard agents: %w", err)
	}
	more := len(as) > limit
	if more {
		as = as[:limit]
	}
	return as, more, nil
}
