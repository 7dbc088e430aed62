package dashboard

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/listgate/listgate/origin/delivery"
	"github.com/listgate/listgate/origin/store"
)

// logLines is how many lines of an endpoint's delivery log its page shows.
const logLines = 100

// answerChars is how much of a receiver's answer a log line shows.
const answerChars = 100

// replayWindow is a choice of the replay form: every delivery created in
// the last Back.
type replayWindow struct {
	Value, Label string
	Back         time.Duration
}

var replayWindows = []replayWindow{
	{"1h", "the last hour", time.Hour},
	{"24h", "the last 24 hours", 24 * time.Hour},
	{"168h", "the last 7 days", 7 * 24 * time.Hour},
	{"720h", "the last 30 days (all that is kept)", store.DeliveryRetention},
}

// stateCount is one state's deliveries, at the top of the log.
type stateCount struct {
	State string
	N     int64
}

// deliveryStates are the delivery states in the order the counts show them.
var deliveryStates = []string{store.DeliveryPending, store.DeliveryDelivered, store.DeliveryFailed,
	store.DeliveryHeld, store.DeliverySkipped}

// logLine is a line of the delivery log as the page shows it.
type logLine struct {
	store.DeliveryLogRow
	// WebhookID is the webhook-id header the receiver saw.
	WebhookID string
	// Outcome is the delivery's state on its newest line, what became of
	// the attempt on the older ones.
	Outcome string
	// Answer is the first characters of the receiver's answer.
	Answer string
	// Newest: the delivery's newest line, which has its resend button.
	Newest bool
}

// newLogLines turns the store's rows (newest first) into the page's lines,
// their times in loc.
func newLogLines(rows []store.DeliveryLogRow, loc *time.Location) []logLine {
	seen := map[int64]bool{}
	lines := make([]logLine, 0, len(rows))
	for _, row := range rows {
		l := logLine{DeliveryLogRow: row, WebhookID: delivery.MessageID(row.EventID), Answer: clip(row.Response, answerChars),
			Newest: !seen[row.DeliveryID]}
		seen[row.DeliveryID] = true
		switch {
		case !l.Newest:
			l.Outcome = "failed, tried again"
		case row.State == store.DeliveryPending && row.Attempt > 0:
			l.Outcome = "pending: next try " + formatSecond(loc, row.NextAt)
		case row.State == store.DeliveryHeld:
			l.Outcome = "held: the endpoint is disabled"
		case row.State == store.DeliveryFailed:
			l.Outcome = "failed: given up"
		default:
			l.Outcome = row.State
		}
		lines = append(lines, l)
	}
	return lines
}

// clip returns s cut to n characters, with "…" when cut.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "…"
}

func (h *Handler) webhookLog(w http.ResponseWriter, r *http.Request, s *store.Session) error {
	site, err := h.site(r, s)
	if err != nil {
		return err
	}
	ep, err := h.endpoint(r, site)
	if err != nil {
		return err
	}
	rows, err := h.db.DeliveryLog(r.Context(), site.ID, ep.ID, logLines)
	if err != nil {
		return err
	}
	counts, err := h.db.DeliveryCounts(r.Context(), site.ID, ep.ID)
	if err != nil {
		return err
	}
	var cs []stateCount
	for _, st := range deliveryStates {
		cs = append(cs, stateCount{State: st, N: counts[st]})
	}
	data := h.base(s)
	data["Title"] = "Webhook deliveries · " + site.Name
	data["Site"] = site
	data["Endpoint"] = ep
	data["DisableAfter"] = hoursText(store.DisableAfter)
	data["Counts"] = cs
	data["Lines"] = newLogLines(rows, siteLocation(site))
	data["Cut"] = len(rows) == logLines
	data["LogLines"] = logLines
	data["Windows"] = replayWindows
	data["Notice"] = notice(r)
	if msg := replayNotice(r.URL.Query()); msg != "" {
		data["Notice"] = msg
	}
	return h.render(w, http.StatusOK, "webhook.html", data)
}

// replayNotice is the message after a replay (?done=replayed&queued=N).
func replayNotice(q url.Values) string {
	if q.Get("done") != "replayed" {
		return ""
	}
	n, err := strconv.ParseInt(q.Get("queued"), 10, 64)
	switch {
	case err != nil || n < 0:
		return ""
	case n == 0:
		return "Nothing was queued: no delivery of that time was delivered, failed or held (or one is pending already)."
	case n == 1:
		return "1 delivery is queued to be sent again."
	}
	return fmt.Sprintf("%d deliveries are queued to be sent again.", n)
}

func (h *Handler) replayWebhooks(w http.ResponseWriter, r *http.Request, s *store.Session) error {
	site, err := h.site(r, s)
	if err != nil {
		return err
	}
	ep, err := h.endpoint(r, site)
	if err != nil {
		return err
	}
	var back time.Duration
	for _, win := range replayWindows {
		if win.Value == r.PostForm.Get("since") {
			back = win.Back
		}
	}
	if back == 0 {
		return &pageError{http.StatusUnprocessableEntity, "Choose how far back to replay."}
	}
	since := h.cfg.Now().Add(-back)
	n, err := h.db.ReplayWebhooks(r.Context(), site.ID, ep.ID, since)
	if err != nil {
		return err
	}
	h.log.InfoContext(r.Context(), "dashboard replayed webhooks", "webhook_id", ep.ID, "since", since, "queued", n,
		"site_id", site.ID, "user_id", s.User.ID)
	setHeaders(w)
	http.Redirect(w, r, webhookPath(site.ID, ep.ID)+"?done=replayed&queued="+strconv.FormatInt(n, 10), http.StatusSeeOther)
	return nil
}

func (h *Handler) resendDelivery(w http.ResponseWriter, r *http.Request, s *store.Session) error {
	site, err := h.site(r, s)
	if err != nil {
		return err
	}
	ep, err := h.endpoint(r, site)
	if err != nil {
		return err
	}
	id, err := strconv.ParseInt(r.PathValue("delivery"), 10, 64)
	if err != nil || id <= 0 {
		return errNotFound()
	}
	// The delivery must be the endpoint's, not only the site's.
	epID, err := h.db.WebhookDeliveryEndpoint(r.Context(), site.ID, id)
	if err != nil {
		return err
	}
	if epID != ep.ID {
		return errNotFound()
	}
	if _, err := h.db.ResendDelivery(r.Context(), site.ID, id); err != nil {
		return err
	}
	h.log.InfoContext(r.Context(), "dashboard resent a webhook delivery", "delivery_id", id, "webhook_id", ep.ID,
		"site_id", site.ID, "user_id", s.User.ID)
	redirect(w, r, webhookPath(site.ID, ep.ID), "resent")
	return nil
}
