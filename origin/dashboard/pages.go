package dashboard

import (
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/listgate/listgate/origin/store"
	"github.com/listgate/listgate/pkg/apierror"
	"github.com/listgate/listgate/pkg/apikey"
	"github.com/listgate/listgate/pkg/cors"
)

// notices are the flash messages an action's redirect can name (?done=…).
var notices = map[string]string{
	"revoked":          "The key is revoked. Edges refuse it within a second.",
	"disconnected":     "The WordPress site is disconnected: its key is revoked.",
	"status":           "The lead's status is changed.",
	"featured":         "The listing is updated. Edges show the change within seconds.",
	"client_revoked":   "The upload client is revoked: its tokens no longer work.",
	"cors":             "The allowed browser origins are saved. Edges apply them within seconds.",
	"webhook_enabled":  "The endpoint is enabled. Deliveries held while it was disabled wait for a replay from its log.",
	"webhook_disabled": "The endpoint is disabled: its new events are held until you enable it and replay them.",
	"webhook_deleted":  "The endpoint and its delivery log are deleted.",
	"resent":           "The delivery is queued to be sent again, with the same webhook-id and body.",
}

// redirect answers an action with 303 to path, naming a notice.
func redirect(w http.ResponseWriter, r *http.Request, path, notice string) {
	setHeaders(w)
	if notice != "" {
		path += "?done=" + url.QueryEscape(notice)
	}
	http.Redirect(w, r, path, http.StatusSeeOther)
}

// notice returns the flash message the request names, if any.
func notice(r *http.Request) string { return notices[r.URL.Query().Get("done")] }

// site returns the request's {site} when it is the account's; NOT_FOUND
// (a 404 page) otherwise.
func (h *Handler) site(r *http.Request, s *store.Session) (store.Site, error) {
	return h.db.AccountSite(r.Context(), s.User.AccountID, r.PathValue("site"))
}

func (h *Handler) home(w http.ResponseWriter, r *http.Request, s *store.Session) error {
	sites, err := h.db.AccountSites(r.Context(), s.User.AccountID)
	if err != nil {
		return err
	}
	data := h.base(s)
	data["Title"] = "Sites"
	data["Sites"] = sites
	return h.render(w, http.StatusOK, "sites.html", data)
}

func (h *Handler) siteDetail(w http.ResponseWriter, r *http.Request, s *store.Session) error {
	site, err := h.site(r, s)
	if err != nil {
		return err
	}
	return h.renderSite(w, r, s, site, http.StatusOK, "", strings.Join(site.CORSOrigins, "\n"))
}

// renderSite renders the site's page; problem and corsText are the
// origins form's message and text.
func (h *Handler) renderSite(w http.ResponseWriter, r *http.Request, s *store.Session, site store.Site,
	status int, problem, corsText string) error {
	data := h.base(s)
	data["Title"] = site.Name
	data["Site"] = site
	data["Limit"] = site.Plan.Limit()
	data["CORSProblem"] = problem
	data["CORSText"] = corsText
	data["MaxOrigins"] = cors.MaxOrigins
	data["Notice"] = notice(r)
	return h.render(w, status, "site.html", data)
}

// scopeChoice is a scope checkbox of the new-key form.
type scopeChoice struct {
	Name    string
	Checked bool
}

func scopeChoices(checked apikey.Scope) []scopeChoice {
	var cs []scopeChoice
	for _, n := range apikey.All.Names() {
		sc, _ := apikey.ScopeByName(n)
		cs = append(cs, scopeChoice{Name: n, Checked: checked.Has(sc)})
	}
	return cs
}

func (h *Handler) keys(w http.ResponseWriter, r *http.Request, s *store.Session) error {
	site, err := h.site(r, s)
	if err != nil {
		return err
	}
	return h.renderKeys(w, r, s, site, http.StatusOK, "", "", apikey.ReadOnly)
}

func (h *Handler) renderKeys(w http.ResponseWriter, r *http.Request, s *store.Session, site store.Site,
	status int, problem, name string, checked apikey.Scope) error {
	keys, err := h.db.ListKeys(r.Context(), site.ID)
	if err != nil {
		return err
	}
	data := h.base(s)
	data["Title"] = "API keys · " + site.Name
	data["Site"] = site
	data["Keys"] = keys
	data["Scopes"] = scopeChoices(checked)
	data["Problem"] = problem
	data["Name"] = name
	data["Notice"] = notice(r)
	return h.render(w, status, "keys.html", data)
}

func (h *Handler) createKey(w http.ResponseWriter, r *http.Request, s *store.Session) error {
	site, err := h.site(r, s)
	if err != nil {
		return err
	}
	name := r.PostForm.Get("name")
	var scopes apikey.Scope
	for _, n := range r.PostForm["scope"] {
		sc, ok := apikey.ScopeByName(n)
		if !ok {
			return h.renderKeys(w, r, s, site, http.StatusUnprocessableEntity, "Unknown scope.", name, scopes)
		}
		scopes |= sc
	}
	if scopes == 0 {
		return h.renderKeys(w, r, s, site, http.StatusUnprocessableEntity, "Choose at least one scope.", name, scopes)
	}
	k, secret, err := h.db.CreateKey(r.Context(), store.NewKey{SiteID: site.ID, Name: name, Scopes: scopes,
		Source: store.SourceDashboard})
	if err != nil {
		if !isInvalid(err) {
			return err
		}
		return h.renderKeys(w, r, s, site, http.StatusUnprocessableEntity, "Give the key a name of 1 to 200 characters.", name, scopes)
	}
	h.log.InfoContext(r.Context(), "dashboard created a key", "key_id", k.ID, "site_id", site.ID, "user_id", s.User.ID)
	data := h.base(s)
	data["Title"] = "New API key · " + site.Name
	data["Site"] = site
	data["Key"] = k
	data["Secret"] = secret
	return h.render(w, http.StatusOK, "key_created.html", data)
}

func (h *Handler) revokeKey(w http.ResponseWriter, r *http.Request, s *store.Session) error {
	site, err := h.site(r, s)
	if err != nil {
		return err
	}
	keys, err := h.db.ListKeys(r.Context(), site.ID)
	if err != nil {
		return err
	}
	id := r.PathValue("key")
	if !slices.ContainsFunc(keys, func(k store.Key) bool { return k.ID == id }) {
		return errNotFound()
	}
	if _, err := h.db.RevokeKey(r.Context(), id); err != nil {
		return err
	}
	h.log.InfoContext(r.Context(), "dashboard revoked a key", "key_id", id, "site_id", site.ID, "user_id", s.User.ID)
	redirect(w, r, Prefix+"/sites/"+site.ID+"/keys", "revoked")
	return nil
}

// isInvalid reports whether err is a validation error of the store.
func isInvalid(err error) bool { return apierror.CodeOf(err) == apierror.CodeValidationError }
