package delivery

import (
	"bytes"
	"context"
	htmltemplate "html/template"
	netmail "net/mail"
	"strconv"
	texttemplate "text/template"
	"time"

	"github.com/listgate/listgate/origin/store"
	"github.com/listgate/listgate/pkg/mail"
)

// emailView is what the lead e-mail's templates show.
type emailView struct {
	Kind         string
	SiteName     string
	AgentName    string
	Lead         Lead
	Listing      *Listing
	ListingLine  string
	DashboardURL string
	Received     string
}

var emailText = texttemplate.Must(texttemplate.New("text").Parse(`New {{.Kind}} for {{.SiteName}}{{if .AgentName}}, assigned to {{.AgentName}}{{end}}.

From:    {{.Lead.Name}}
{{- if .Lead.Email}}
E-mail:  {{.Lead.Email}}{{end}}
{{- if .Lead.Phone}}
Phone:   {{.Lead.Phone}}{{end}}
{{- if .Lead.Mobile}}
Mobile:  {{.Lead.Mobile}}{{end}}
Priority: {{.Lead.Priority}}
Received: {{.Received}}
{{if .Listing}}
Listing: {{.ListingLine}}
         {{.Listing.ListingID}} (ref {{.Listing.ListingRef}})
{{- if .Listing.URL}}
         {{.Listing.URL}}{{end}}
{{end}}
{{- if .Lead.Message}}
Message:
{{.Lead.Message}}
{{end}}
Open the lead: {{.DashboardURL}}

Reply to this e-mail to answer {{.Lead.Name}} directly.
`))

var emailHTML = htmltemplate.Must(htmltemplate.New("html").Parse(`<!doctype html>
<html><body style="font-family: sans-serif; line-height: 1.4">
<p>New {{.Kind}} for <strong>{{.SiteName}}</strong>{{if .AgentName}}, assigned to {{.AgentName}}{{end}}.</p>
<table cellpadding="4">
<tr><th align="left">From</th><td>{{.Lead.Name}}</td></tr>
{{- if .Lead.Email}}<tr><th align="left">E-mail</th><td><a href="mailto:{{.Lead.Email}}">{{.Lead.Email}}</a></td></tr>{{end}}
{{- if .Lead.Phone}}<tr><th align="left">Phone</th><td><a href="tel:{{.Lead.Phone}}">{{.Lead.Phone}}</a></td></tr>{{end}}
{{- if .Lead.Mobile}}<tr><th align="left">Mobile</th><td><a href="tel:{{.Lead.Mobile}}">{{.Lead.Mobile}}</a></td></tr>{{end}}
<tr><th align="left">Priority</th><td>{{.Lead.Priority}}</td></tr>
<tr><th align="left">Received</th><td>{{.Received}}</td></tr>
{{- if .Listing}}<tr><th align="left">Listing</th><td>{{if .Listing.URL}}<a href="{{.Listing.URL}}">{{.ListingLine}}</a>{{else}}{{.ListingLine}}{{end}}<br><small>{{.Listing.ListingID}} (ref {{.Listing.ListingRef}})</small></td></tr>{{end}}
</table>
{{if .Lead.Message}}<blockquote style="white-space: pre-wrap; border-left: 3px solid #ccc; margin: 1em 0; padding-left: 1em">{{.Lead.Message}}</blockquote>{{end}}
<p><a href="{{.DashboardURL}}">Open the lead in the dashboard</a></p>
<p><small>Reply to this e-mail to answer {{.Lead.Name}} directly.</small></p>
</body></html>
`))

// kinds name the lead types in e-mail.
var kinds = map[string]string{"inquiry": "enquiry", "appraisal": "appraisal request",
	"rental_application": "rental application", "general": "general enquiry"}

// sendEmail e-mails a new lead to its agent, or to the site's default
// recipient when nobody is assigned.
func (w *Worker) sendEmail(ctx context.Context, d store.Delivery) store.DeliveryResult {
	ev, _, err := w.leadEvent(ctx, d)
	if store.IsNotFound(err) {
		return store.DeliveryResult{State: store.DeliverySkipped, Error: "the lead no longer exists"}
	}
	if err != nil {
		return store.DeliveryResult{State: store.DeliveryPending, RetryAt: retry(d.Attempt, 0), Error: err.Error()}
	}
	to := ev.Lead.AssignedTo
	if to == "" {
		to = ev.DefaultRecipient
	}
	if to == "" {
		return store.DeliveryResult{State: store.DeliverySkipped, Error: "no agent assigned and no default recipient"}
	}
	m, err := w.leadEmail(d, ev, to)
	if err != nil {
		return store.DeliveryResult{State: store.DeliveryFailed, Error: err.Error()}
	}
	start := time.Now()
	err = w.cfg.Mailer.Send(ctx, m)
	r := store.DeliveryResult{Attempted: true, Latency: time.Since(start)}
	switch {
	case err == nil:
		r.State = store.DeliveryDelivered
	case mail.IsPermanent(err):
		r.State, r.Error = store.DeliveryFailed, err.Error()
	default:
		r.State, r.RetryAt, r.Error = store.DeliveryPending, retry(d.Attempt, 0), err.Error()
	}
	return r
}

// leadEmail composes the e-mail of ev's lead to to.
func (w *Worker) leadEmail(d store.Delivery, ev store.LeadEvent, to string) (mail.Message, error) {
	l := w.lead(d.SiteID, ev)
	kind := kinds[l.Type]
	if kind == "" {
		kind = "enquiry"
	}
	received := l.CreatedAt
	if loc, err := time.LoadLocation(ev.SiteTimezone); err == nil {
		received = received.In(loc)
	}
	v := emailView{Kind: kind, SiteName: ev.SiteName, AgentName: ev.AgentName, Lead: l, Listing: l.Listing,
		DashboardURL: l.DashboardURL, Received: received.Format("Mon 2 Jan 2006 15:04 MST")}
	subject := "New " + kind + " from " + l.Name
	if li := l.Listing; li != nil {
		v.ListingLine = deref(li.Headline)
		if a := deref(li.Address); a != "" {
			if v.ListingLine != "" {
				v.ListingLine += " — "
			}
			v.ListingLine += a
		}
		if v.ListingLine == "" {
			v.ListingLine = li.ListingID
		}
		subject += ": " + firstNonEmpty(deref(li.Address), deref(li.Headline), li.ListingID)
	}
	var text, html bytes.Buffer
	if err := emailText.Execute(&text, v); err != nil {
		return mail.Message{}, err
	}
	if err := emailHTML.Execute(&html, v); err != nil {
		return mail.Message{}, err
	}
	m := mail.Message{To: &netmail.Address{Address: to}, Subject: subject, Text: text.String(), HTML: html.String(),
		Headers: map[string]string{"X-Listgate-Lead-Id": strconv.FormatInt(l.LeadID, 10)}}
	// An address the leads API accepts but a header cannot carry (an
	// internationalised one) is left out of Reply-To: the text shows it,
	// and the agent gets the lead.
	if l.Email != nil && mail.CheckAddress(*l.Email) == nil {
		m.ReplyTo = &netmail.Address{Name: l.Name, Address: *l.Email}
	}
	return m, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
