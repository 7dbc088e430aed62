package delivery

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	json "github.com/goccy/go-json"

	"github.com/listgate/listgate/origin/store"
)

// Payload is a webhook's body: the event's type, its time, the site, and
// the lead (docs/webhooks.md).
type Payload struct {
	Type      string    `json:"type"`
	Timestamp time.Time `json:"timestamp"`
	SiteID    string    `json:"site_id"`
	Data      Lead      `json:"data"`
}

// Lead is a lead as the webhooks show it: the fields of its submission
// (POST /v1/leads) with its id, status and assignment, its listing, and a
// link to it in the dashboard.
type Lead struct {
	LeadID   int64           `json:"lead_id"`
	Status   string          `json:"status"`
	Type     string          `json:"type"`
	Priority string          `json:"priority"`
	Name     string          `json:"name"`
	Email    *string         `json:"email"`
	Phone    *string         `json:"phone"`
	Mobile   *string         `json:"mobile"`
	Message  *string         `json:"message"`
	Metadata json.RawMessage `json:"metadata"`
	// AssignedTo is the agent's e-mail, null for nobody.
	AssignedTo *string  `json:"assigned_to"`
	Listing    *Listing `json:"listing"`
	// PreviousStatus is set on lead.updated: the status before the change.
	PreviousStatus string `json:"previous_status,omitempty"`
	// Submission is set on lead.duplicate: the submission that repeated
	// the lead.
	Submission   *Submission `json:"submission,omitempty"`
	CreatedAt    time.Time   `json:"created_at"`
	UpdatedAt    time.Time   `json:"updated_at"`
	DashboardURL string      `json:"dashboard_url"`
}

// Listing is the listing a lead is about, by the ids of the listings API.
type Listing struct {
	ListingRef int64   `json:"listing_ref"`
	ListingID  string  `json:"listing_id"`
	AgencyID   string  `json:"agency_id"`
	Type       string  `json:"type"`
	Status     string  `json:"status"`
	Headline   *string `json:"headline"`
	// Address is what the feed lets be shown of the address.
	Address *string `json:"address"`
	Suburb  *string `json:"suburb"`
	// URL is the listing's page on the agency's website, when its feed
	// gives one (its first externalLink).
	URL *string `json:"url"`
}

// Submission is one submission of a lead.
type Submission struct {
	SubmissionID int64     `json:"submission_id"`
	Name         string    `json:"name"`
	Email        *string   `json:"email"`
	Phone        *string   `json:"phone"`
	Message      *string   `json:"message"`
	CreatedAt    time.Time `json:"created_at"`
}

// eventRefs are the ids an outbox lead event's payload carries.
type eventRefs struct {
	LeadID         int64  `json:"lead_id"`
	SubmissionID   int64  `json:"submission_id"`
	PreviousStatus string `json:"previous_status"`
}

// leadEvent reads what a delivery of d tells.
func (w *Worker) leadEvent(ctx context.Context, d store.Delivery) (store.LeadEvent, eventRefs, error) {
	var refs eventRefs
	if err := json.Unmarshal(d.Payload, &refs); err != nil {
		return store.LeadEvent{}, refs, fmt.Errorf("delivery: event payload: %w", err)
	}
	sub := refs.SubmissionID
	if d.EventType != store.EventLeadDuplicate {
		sub = 0
	}
	ev, err := w.cfg.DB.LeadEventData(ctx, d.SiteID, d.LeadID, sub)
	return ev, refs, err
}

// webhookBody renders d's payload.
func (w *Worker) webhookBody(ctx context.Context, d store.Delivery) ([]byte, error) {
	ev, refs, err := w.leadEvent(ctx, d)
	if err != nil {
		return nil, err
	}
	p := Payload{Type: d.EventType, Timestamp: d.CreatedAt.UTC(), SiteID: d.SiteID, Data: w.lead(d.SiteID, ev)}
	if d.EventType == store.EventLeadUpdated {
		p.Data.PreviousStatus = refs.PreviousStatus
	}
	return json.Marshal(p)
}

// lead is ev's lead as the webhooks show it.
func (w *Worker) lead(siteID string, ev store.LeadEvent) Lead {
	l := ev.Lead
	out := Lead{LeadID: l.ID, Status: l.Status, Type: l.Type, Priority: l.Priority, Name: l.Name,
		Email: opt(l.Email), Phone: opt(l.Phone), Mobile: opt(l.Mobile), Message: opt(l.Message),
		Metadata: ev.Metadata, AssignedTo: opt(l.AssignedTo), CreatedAt: l.CreatedAt.UTC(), UpdatedAt: l.UpdatedAt.UTC(),
		DashboardURL: w.leadURL(siteID, l.ID)}
	if len(out.Metadata) == 0 {
		out.Metadata = json.RawMessage(`{}`)
	}
	if li := ev.Listing; li != nil {
		out.Listing = &Listing{ListingRef: li.Ref, ListingID: li.ListingID, AgencyID: li.AgencyID, Type: li.Type,
			Status: li.ListingState, Headline: opt(li.Headline), Address: opt(li.Address), Suburb: opt(li.Suburb),
			URL: opt(li.Link)}
	}
	if s := ev.Submission; s != nil {
		out.Submission = &Submission{SubmissionID: s.ID, Name: s.Name, Email: opt(s.Email), Phone: opt(s.Phone),
			Message: opt(s.Message), CreatedAt: s.CreatedAt.UTC()}
	}
	return out
}

// leadURL links to a lead in the dashboard.
func (w *Worker) leadURL(siteID string, leadID int64) string {
	return strings.TrimRight(w.cfg.PublicURL, "/") + "/dashboard/sites/" + url.PathEscape(siteID) +
		"/leads/" + fmt.Sprint(leadID)
}

func opt(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }
