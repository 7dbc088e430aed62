package dashboard

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/listgate/listgate/origin/api"
	"github.com/listgate/listgate/origin/store"
	"github.com/listgate/listgate/pkg/apierror"
	"github.com/listgate/listgate/pkg/webhook"
)

// rotateOverlap is how long the previous signing secret keeps signing
// beside the new one after a rotation from the dashboard (the CLI's
// default), for the receiver to be given the new one.
const rotateOverlap = 24 * time.Hour

// noSecretKey is why webhooks cannot be created without Config.SecretKey.
const noSecretKey = "Webhooks cannot be created: LISTGATE_SECRET_KEY is not set on the origin. " +
	"Signing secrets derive from it; ask whoever runs Listgate to set it."

// eventDescriptions say what each lead event is, on the form.
var eventDescriptions = map[string]string{
	store.EventLeadCreated:   "a new lead",
	store.EventLeadDuplicate: "a known lead sent the form again",
	store.EventLeadUpdated:   "a lead changed, e.g. its status",
}

// eventChoice is an event checkbox of the new-endpoint form.
type eventChoice struct {
	Name, About string
	Checked     bool
}

func eventChoices(checked []string) []eventChoice {
	cs := make([]eventChoice, 0, len(store.WebhookEvents))
	for _, ev := range store.WebhookEvents {
		cs = append(cs, eventChoice{Name: ev, About: eventDescriptions[ev], Checked: slices.Contains(checked, ev)})
	}
	return cs
}

// hoursText writes d in whole hours, e.g. "24 h".
func hoursText(d time.Duration) string { return fmt.Sprintf("%d h", int(d.Hours())) }

// webhookState says whether an endpoint is enabled, and when and why not.
// Its time is in loc (see formatMinute).
func webhookState(loc *time.Location, e store.WebhookEndpoint) string {
	if e.Enabled {
		return "enabled"
	}
	when := formatMinute(loc, e.DisabledAt)
	if e.DisabledReason == "failing" {
		return fmt.Sprintf("disabled on %s: every attempt failed for more than %s", when, hoursText(store.DisableAfter))
	}
	return "disabled on " + when + " (by hand)"
}

// webhookPath is the site's webhooks page, or with id an endpoint's log.
func webhookPath(siteID string, id ...string) string {
	p := Prefix + "/sites/" + siteID + "/webhooks"
	for _, s := range id {
		p += "/" + s
	}
	return p
}

// endpoint returns the request's {webhook} when it is an endpoint of site;
// a 404 otherwise, and for anything that is not a UUID.
func (h *Handler) endpoint(r *http.Request, site store.Site) (store.WebhookEndpoint, error) {
	id := r.PathValue("webhook")
	if !api.IsUUID(id) {
		return store.WebhookEndpoint{}, errNotFound()
	}
	return h.db.WebhookEndpoint(r.Context(), site.ID, id)
}

func (h *Handler) webhooks(w http.ResponseWriter, r *http.Request, s *store.Session) error {
	site, err := h.site(r, s)
	if err != nil {
		return err
	}
	return h.renderWebhooks(w, r, s, site, http.StatusOK, "", "", []string{store.EventLeadCreated})
}

// renderWebhooks renders the site's webhooks page; problem, url and events
// are the new-endpoint form's message and values.
func (h *Handler) renderWebhooks(w http.ResponseWriter, r *http.Request, s *store.Session, site store.Site,
	status int, problem, url string, events []string) error {
	eps, err := h.db.WebhookEndpoints(r.Context(), site.ID)
	if err != nil {
		return err
	}
	data := h.base(s)
	data["Title"] = "Webhooks · " + site.Name
	data["Site"] = site
	data["Endpoints"] = eps
	data["EmailOn"] = h.cfg.EmailOn
	data["CanSign"] = h.cfg.SecretKey != nil
	data["NoSecretKey"] = noSecretKey
	data["Full"] = len(eps) >= store.MaxWebhookEndpoints
	data["MaxEndpoints"] = store.MaxWebhookEndpoints
	data["DisableAfter"] = hoursText(store.DisableAfter)
	data["Events"] = eventChoices(events)
	data["URL"] = url
	data["Problem"] = problem
	data["Notice"] = notice(r)
	return h.render(w, status, "webhooks.html", data)
}

func (h *Handler) createWebhook(w http.ResponseWriter, r *http.Request, s *store.Session) error {
	site, err := h.site(r, s)
	if err != nil {
		return err
	}
	raw := r.PostForm.Get("url")
	events := r.PostForm["event"]
	refuse := func(status int, problem string) error {
		return h.renderWebhooks(w, r, s, site, status, problem, raw, events)
	}
	if h.cfg.SecretKey == nil {
		return refuse(http.StatusConflict, noSecretKey)
	}
	for _, ev := range events {
		if !slices.Contains(store.WebhookEvents, ev) {
			return refuse(http.StatusUnprocessableEntity, "Unknown event.")
		}
	}
	if len(events) == 0 {
		return refuse(http.StatusUnprocessableEntity, "Choose at least one event.")
	}
	u, err := webhook.CheckURL(raw, h.cfg.WebhookTargets)
	if err != nil {
		reason := "the URL is not one webhooks can be sent to"
		if ue, ok := errors.AsType[*webhook.URLError](err); ok {
			reason = ue.Reason
		}
		return refuse(http.StatusUnprocessableEntity, "Not created: "+reason+".")
	}
	ep, err := h.db.CreateWebhookEndpoint(r.Context(), site.ID, u, events)
	if err != nil {
		if !isInvalid(err) {
			return err
		}
		return refuse(http.StatusUnprocessableEntity, "Not created: "+invalidReason(err)+".")
	}
	// Neither the URL (it may carry the receiver's token) nor the secret.
	h.log.InfoContext(r.Context(), "dashboard created a webhook endpoint", "webhook_id", ep.ID,
		"site_id", site.ID, "user_id", s.User.ID)
	return h.renderSecret(w, s, site, ep, false)
}

// invalidReason is a validation error's first field message.
func invalidReason(err error) string {
	if ae, ok := errors.AsType[*apierror.Error](err); ok {
		for _, f := range []string{"url", "events"} {
			if msg := ae.Details[f]; msg != "" {
				return msg
			}
		}
	}
	return "the endpoint is not valid"
}

// renderSecret shows an endpoint's signing secret, the only time it is
// shown: after creating the endpoint, or rotating its secret.
func (h *Handler) renderSecret(w http.ResponseWriter, s *store.Session, site store.Site, ep store.WebhookEndpoint,
	rotated bool) error {
	data := h.base(s)
	data["Title"] = "Webhook signing secret · " + site.Name
	if rotated {
		data["Title"] = "New webhook signing secret · " + site.Name
	}
	data["Site"] = site
	data["Endpoint"] = ep
	data["Secret"] = webhook.DeriveSecret(h.cfg.SecretKey, ep.ID, ep.SecretGen)
	data["Rotated"] = rotated
	return h.render(w, http.StatusOK, "webhook_secret.html", data)
}

func (h *Handler) enableWebhook(w http.ResponseWriter, r *http.Request, s *store.Session) error {
	return h.setWebhookEnabled(w, r, s, true)
}

func (h *Handler) disableWebhook(w http.ResponseWriter, r *http.Request, s *store.Session) error {
	return h.setWebhookEnabled(w, r, s, false)
}

func (h *Handler) setWebhookEnabled(w http.ResponseWriter, r *http.Request, s *store.Session, enabled bool) error {
	site, err := h.site(r, s)
	if err != nil {
		return err
	}
	ep, err := h.endpoint(r, site)
	if err != nil {
		return err
	}
	if _, err := h.db.SetWebhookEnabled(r.Context(), site.ID, ep.ID, enabled); err != nil {
		return err
	}
	h.log.InfoContext(r.Context(), "dashboard set a webhook endpoint's state", "webhook_id", ep.ID, "enabled", enabled,
		"site_id", site.ID, "user_id", s.User.ID)
	done := "webhook_disabled"
	if enabled {
		done = "webhook_enabled"
	}
	redirect(w, r, webhookPath(site.ID), done)
	return nil
}

func (h *Handler) deleteWebhook(w http.ResponseWriter, r *http.Request, s *store.Session) error {
	site, err := h.site(r, s)
	if err != nil {
		return err
	}
	ep, err := h.endpoint(r, site)
	if err != nil {
		return err
	}
	if err := h.db.DeleteWebhookEndpoint(r.Context(), site.ID, ep.ID); err != nil {
		return err
	}
	h.log.InfoContext(r.Context(), "dashboard deleted a webhook endpoint", "webhook_id", ep.ID,
		"site_id", site.ID, "user_id", s.User.ID)
	redirect(w, r, webhookPath(site.ID), "webhook_deleted")
	return nil
}

func (h *Handler) rotateWebhook(w http.ResponseWriter, r *http.Request, s *store.Session) error {
	site, err := h.site(r, s)
	if err != nil {
		return err
	}
	ep, err := h.endpoint(r, site)
	if err != nil {
		return err
	}
	if h.cfg.SecretKey == nil {
		return &pageError{http.StatusConflict, "The secret cannot be rotated: LISTGATE_SECRET_KEY is not set on the origin."}
	}
	ep, err = h.db.RotateWebhookSecret(r.Context(), site.ID, ep.ID, rotateOverlap)
	if err != nil {
		return err
	}
	h.log.InfoContext(r.Context(), "dashboard rotated a webhook secret", "webhook_id", ep.ID,
		"generation", ep.SecretGen, "site_id", site.ID, "user_id", s.User.ID)
	return h.renderSecret(w, s, site, ep, true)
}
