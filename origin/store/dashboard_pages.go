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
	tag, err := db.Pool.Exec(ctx, `UPDATE leads SET status = $3, updated_at = now() WHERE site_id = $1 AND id = $2`,
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

// ListingRow is a listing as the dashboard lists it.
type ListingRow struct {
	Ref        int64
	AgencyID   string
	UniqueID   string
	Type       string
	Status     string
	Headline   string
	Suburb     string
	Featured   bool
	ModifiedAt time.Time
}

// escapeLike escapes the LIKE wildcards of s.
func escapeLike(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// DashboardListings returns up to limit of a site's listings whose headline
// or suburb contains q (case-insensitive; all when q is blank), newest
// modified first, skipping offset; and whether more follow.
func (db *DB) DashboardListings(ctx context.Context, siteID, q string, limit, offset int) ([]ListingRow, bool, error) {
	args := []any{siteID}
	where := "site_id = $1 AND status <> 'deleted'"
	if q = strings.TrimSpace(q); q != "" {
		args = append(args, "%"+escapeLike(q)+"%")
		where += " AND (headline ILIKE $2 OR suburb ILIKE $2)"
	}
	rows, _ := db.Pool.Query(ctx, `SELECT ref, agency_id, unique_id, type, status, coalesce(headline, ''),
		coalesce(suburb, ''), featured, modified_at FROM listings WHERE `+where+
		fmt.Sprintf(" ORDER BY modified_at DESC, ref DESC LIMIT %d OFFSET %d", limit+1, max(offset, 0)), args...)
	ls, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ListingRow, error) {
		var l ListingRow
		err := r.Scan(&l.Ref, &l.AgencyID, &l.UniqueID, &l.Type, &l.Status, &l.Headline, &l.Suburb,
			&l.Featured, &l.ModifiedAt)
		return l, err
	})
	if isInvalidText(err) {
		return nil, false, notFound("site")
	}
	if err != nil {
		return nil, false, fmt.Errorf("store: dashboard listings: %w", err)
	}
	more := len(ls) > limit
	if more {
		ls = ls[:limit]
	}
	return ls, more, nil
}

// SetListingFeatured sets a site's listing's featured flag and, in the
// same transaction, writes a site.content_changed event so that edges drop
// their cached pages. An unknown listing is NOT_FOUND.
func (db *DB) SetListingFeatured(ctx context.Context, siteID string, ref int64, featured bool) error {
	return db.InTx(ctx, func(tx pgx.Tx) error {
		var uniqueID string
		err := tx.QueryRow(ctx, `UPDATE listings SET featured = $3, modified_at = now()
			WHERE site_id = $1 AND ref = $2 RETURNING unique_id`, siteID, ref, featured).Scan(&uniqueID)
		if errors.Is(err, pgx.ErrNoRows) || isInvalidText(err) {
			return notFound("listing")
		}
		if err != nil {
			return fmt.Errorf("store: set listing featured: %w", err)
		}
		return InsertEvent(ctx, tx, siteID, EventContentChanged, map[string]any{
			"reason": "featured", "ref": ref, "unique_id": uniqueID, "featured": featured})
	})
}
