package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// LeadStatuses are the statuses a lead can have, in workflow order.
var LeadStatuses = []string{"new", "contacted", "qualified", "closed", "spam"}

// LeadTypes are the types a lead can have.
var LeadTypes = []string{"inquiry", "appraisal", "rental_application", "general"}

// ValidLeadStatus reports whether s is one of LeadStatuses.
func ValidLeadStatus(s string) bool {
	for _, v := range LeadStatuses {
		if v == s {
			return true
		}
	}
	return false
}

// LeadFilter filters a site's leads on the dashboard. Zero fields do not
// filter. From and To bound created_at: From inclusive, To exclusive.
type LeadFilter struct {
	Status     string
	Type       string
	AgentEmail string
	From, To   time.Time
}

// LeadRow is a lead as the dashboard lists it.
type LeadRow struct {
	ID         int64
	Type       string
	Priority   string
	Status     string
	Name       string
	Email      string
	Phone      string
	Mobile     string
	Message    string
	AssignedTo string
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// LeadSubmissionRow is one submission of a lead (duplicates included).
type LeadSubmissionRow struct {
	ID        int64
	Duplicate bool
	Name      string
	Email     string
	Phone     string
	Message   string
	CreatedAt time.Time
}

// LeadAssignmentRow is one entry of a lead's assignment history.
type LeadAssignmentRow struct {
	ID         int64
	AgentID    *int64
	AssignedTo string
	Reason     string
	CreatedAt  time.Time
}

func (f LeadFilter) where(siteID string) (string, []any) {
	conds := []string{"site_id = $1"}
	args := []any{siteID}
	add := func(cond string, v any) {
		args = append(args, v)
		conds = append(conds, strings.ReplaceAll(cond, "?", "$"+strconv.Itoa(len(args))))
	}
	if f.Status != "" {
		add("status = ?", f.Status)
	}
	if f.Type != "" {
		add("type = ?", f.Type)
	}
	if e := strings.TrimSpace(f.AgentEmail); e != "" {
		add("lower(assigned_to) = lower(?)", e)
	}
	if !f.From.IsZero() {
		add("created_at >= ?", f.From)
	}
	if !f.To.IsZero() {
		add("created_at < ?", f.To)
	}
	return strings.Join(conds, " AND "), args
}

const leadRowColumns = `id, type, priority, status, name, coalesce(email, ''), coalesce(phone, ''),
	coalesce(mobile, ''), coalesce(message, ''), coalesce(assigned_to, ''), created_at, updated_at`

func scanLeadRow(r pgx.Row) (LeadRow, error) {
	var l LeadRow
	err := r.Scan(&l.ID, &l.Type, &l.Priority, &l.Status, &l.Name, &l.Email, &l.Phone, &l.Mobile,
		&l.Message, &l.AssignedTo, &l.CreatedAt, &l.UpdatedAt)
	return l, err
}

// DashboardLeads returns up to limit of a site's leads matching f, newest
// first, skipping offset; and whether more follow. limit <= 0 means all.
func (db *DB) DashboardLeads(ctx context.Context, siteID string, f LeadFilter, limit, offset int) ([]LeadRow, bool, error) {
	where, args := f.where(siteID)
	q := `SELECT ` + leadRowColumns + ` FROM leads WHERE ` + where + ` ORDER BY created_at DESC, id DESC`
	if limit > 0 {
		q += fmt.Sprintf(" LIMIT %d OFFSET %d", limit+1, max(offset, 0))
	}
	rows, _ := db.Pool.Query(ctx, q, args...)
	leads, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (LeadRow, error) { return scanLeadRow(r) })
	if isInvalidText(err) {
		return nil, false, notFound("site")
	}
	if err != nil {
		return nil, false, fmt.Errorf("store: dashboard leads: %w", err)
	}
	more := false
	if limit > 0 && len(leads) > limit {
		leads, more = leads[:limit], true
	}
	return leads, more, nil
}

// DashboardLead returns one of a site's leads with its submissions (oldest
// first) and assignment history, or NOT_FOUND.
func (db *DB) DashboardLead(ctx context.Context, siteID string, leadID int64) (LeadRow, []LeadSubmissionRow, []LeadAssignmentRow, error) {
	l, err := scanLeadRow(db.Pool.QueryRow(ctx, `SELECT `+leadRowColumns+` FROM leads WHERE site_id = $1 AND id = $2`,
		siteID, leadID))
	if errors.Is(err, pgx.ErrNoRows) || isInvalidText(err) {
		return LeadRow{}, nil, nil, notFound("lead")
	}
	if err != nil {
		return LeadRow{}, nil, nil, fmt.Errorf("store: dashboard lead: %w", err)
	}
	rows, _ := db.Pool.Query(ctx, `SELECT id, duplicate, coalesce(payload->>'name', ''), coalesce(payload->>'email', ''),
		coalesce(payload->>'phone', payload->>'mobile', ''), coalesce(payload->>'message', ''), created_at
		FROM lead_submissions WHERE site_id = $1 AND lead_id = $2 ORDER BY created_at, id`, siteID, leadID)
	subs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (LeadSubmissionRow, error) {
		var s LeadSubmissionRow
		err := r.Scan(&s.ID, &s.Duplicate, &s.Name, &s.Email, &s.Phone, &s.Message, &s.CreatedAt)
		return s, err
	})
	if err != nil {
		return LeadRow{}, nil, nil, fmt.Errorf("store: lead submissions: %w", err)
	}
	rows, _ = db.Pool.Query(ctx, `SELECT id, agent_id, coalesce(assigned_to, ''), reason, created_at
		FROM lead_assignments WHERE site_id = $1 AND lead_id = $2 ORDER BY created_at, id`, siteID, leadID)
	assigns, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (LeadAssignmentRow, error) {
		var a LeadAssignmentRow
		err := r.Scan(&a.ID, &a.AgentID, &a.AssignedTo, &a.Reason, &a.CreatedAt)
		return a, err
	})
	if err != nil {
		return LeadRow{}, nil, nil, fmt.Errorf("store: lead assignments: %w", err)
	}
	return l, subs, assigns, nil
}

// SetLeadStatus changes a site's lead's status. An unknown lead is
// NOT_FOUND; a status not in LeadStatuses is VALIDATION_ERROR.
func (db *DB) SetLeadStatus(ctx context.Context, siteID string, leadID int64, status string) error {
	if !ValidLeadStatus(status) {
		return invalid("status", "must be one of "+strings.Join(LeadStatuses, ", "))
	}
	// The change and its lead.updated event, in one statement: no event
	// when the status is unchanged.
	tag, err := db.Pool.Exec(ctx, `WITH old AS (SELECT status FROM leads WHERE site_id = $1 AND id = $2 FOR UPDATE),
			u AS (UPDATE leads l SET status = $3, updated_at = now() FROM old
				WHERE l.site_id = $1 AND l.id = $2 RETURNING old.status AS previous),
			e AS (INSERT INTO events (site_id, type, payload)
				SELECT $1, 'lead.updated', jsonb_build_object('lead_id', $2::bigint, 'previous_status', u.previous,
					'status', $3::text)
				FROM u WHERE u.previous <> $3)
		SELECT 1 FROM u`,
		siteID, leadID, status)
	if isInvalidText(err) {
		return notFound("lead")
	}
	if err != nil {
		return fmt.Errorf("store: set lead status: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return notFound("lead")
	}
	return nil
}
