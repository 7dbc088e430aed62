package dashboard

import (
	"encoding/csv"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/listgate/listgate/origin/store"
	"github.com/listgate/listgate/origin/upload"
)

// pageSize is how many rows a list page shows.
const pageSize = 50

// pageNumber returns the request's ?page= (1 when absent or malformed).
func pageNumber(r *http.Request) int {
	n, err := strconv.Atoi(r.URL.Query().Get("page"))
	if err != nil || n < 1 || n > 1_000_000 {
		return 1
	}
	return n
}

// pager holds the links of a paginated list.
type pager struct {
	Page             int
	PrevURL, NextURL string
}

func newPager(path string, q url.Values, page int, more bool) pager {
	p := pager{Page: page}
	link := func(n int) string {
		v := url.Values{}
		for k, vs := range q {
			if k != "page" && len(vs) > 0 && vs[0] != "" {
				v.Set(k, vs[0])
			}
		}
		if n > 1 {
			v.Set("page", strconv.Itoa(n))
		}
		if len(v) == 0 {
			return path
		}
		return path + "?" + v.Encode()
	}
	if page > 1 {
		p.PrevURL = link(page - 1)
	}
	if more {
		p.NextURL = link(page + 1)
	}
	return p
}

// leadFilter reads the leads filters of the query. problem names the first
// one that is not valid; the filter then leaves it out.
func leadFilter(q url.Values, loc *time.Location) (f store.LeadFilter, problem string) {
	f.Status = q.Get("status")
	if f.Status != "" && !store.ValidLeadStatus(f.Status) {
		f.Status, problem = "", "Unknown status."
	}
	f.Type = q.Get("type")
	if f.Type != "" && !contains(store.LeadTypes, f.Type) {
		f.Type, problem = "", "Unknown type."
	}
	f.AgentEmail = strings.TrimSpace(q.Get("agent"))
	if len(f.AgentEmail) > 254 {
		f.AgentEmail, problem = "", "The agent e-mail is too long."
	}
	if s := q.Get("from"); s != "" {
		t, err := time.ParseInLocation(time.DateOnly, s, loc)
		if err != nil {
			problem = "Give the dates as YYYY-MM-DD."
		}
		f.From = t
	}
	if s := q.Get("to"); s != "" {
		t, err := time.ParseInLocation(time.DateOnly, s, loc)
		if err != nil {
			problem = "Give the dates as YYYY-MM-DD."
		} else {
			f.To = t.AddDate(0, 0, 1) // the whole last day
		}
	}
	return f, problem
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func (h *Handler) leads(w http.ResponseWriter, r *http.Request, s *store.Session) error {
	site, err := h.site(r, s)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	f, problem := leadFilter(q, siteLocation(site))
	page := pageNumber(r)
	leads, more, err := h.db.DashboardLeads(r.Context(), site.ID, f, pageSize, (page-1)*pageSize)
	if err != nil {
		return err
	}
	path := Prefix + "/sites/" + site.ID + "/leads"
	export := url.Values{}
	for _, k := range []string{"status", "type", "agent", "from", "to"} {
		if v := q.Get(k); v != "" {
			export.Set(k, v)
		}
	}
	exportURL := path + "/export"
	if len(export) > 0 {
		exportURL += "?" + export.Encode()
	}
	data := h.base(s)
	data["Title"] = "Leads · " + site.Name
	data["Site"] = site
	data["Leads"] = leads
	data["Statuses"] = store.LeadStatuses
	data["Types"] = store.LeadTypes
	data["Q"] = map[string]string{"status": q.Get("status"), "type": q.Get("type"), "agent": q.Get("agent"),
		"from": q.Get("from"), "to": q.Get("to")}
	data["Pager"] = newPager(path, q, page, more)
	data["ExportURL"] = exportURL
	data["Problem"] = problem
	data["Notice"] = notice(r)
	status := http.StatusOK
	if problem != "" {
		status = http.StatusUnprocessableEntity
	}
	return h.render(w, status, "leads.html", data)
}

// csvCell defuses a cell a spreadsheet would read as a formula.
func csvCell(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

func (h *Handler) exportLeads(w http.ResponseWriter, r *http.Request, s *store.Session) error {
	site, err := h.site(r, s)
	if err != nil {
		return err
	}
	f, problem := leadFilter(r.URL.Query(), siteLocation(site))
	if problem != "" {
		return &pageError{http.StatusUnprocessableEntity, problem}
	}
	leads, _, err := h.db.DashboardLeads(r.Context(), site.ID, f, 0, 0)
	if err != nil {
		return err
	}
	setHeaders(w)
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="leads-`+site.ID+`.csv"`)
	w.Header().Set("Cache-Control", "no-store")
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"id", "created_at", "type", "priority", "status", "name", "email", "phone", "mobile",
		"message", "assigned_to"})
	for _, l := range leads {
		rec := []string{strconv.FormatInt(l.ID, 10), l.CreatedAt.UTC().Format(time.RFC3339), l.Type, l.Priority,
			l.Status, l.Name, l.Email, l.Phone, l.Mobile, l.Message, l.AssignedTo}
		for i := range rec {
			rec[i] = csvCell(rec[i])
		}
		if err := cw.Write(rec); err != nil {
			return nil // the client went away; headers are sent
		}
	}
	cw.Flush()
	return nil
}

// leadID returns the request's {lead}, or a 404.
func leadID(r *http.Request) (int64, error) {
	id, err := strconv.ParseInt(r.PathValue("lead"), 10, 64)
	if err != nil || id <= 0 {
		return 0, errNotFound()
	}
	return id, nil
}

func (h *Handler) leadDetail(w http.ResponseWriter, r *http.Request, s *store.Session) error {
	site, err := h.site(r, s)
	if err != nil {
		return err
	}
	id, err := leadID(r)
	if err != nil {
		return err
	}
	lead, subs, assigns, err := h.db.DashboardLead(r.Context(), site.ID, id)
	if err != nil {
		return err
	}
	data := h.base(s)
	data["Title"] = "Lead " + strconv.FormatInt(id, 10) + " · " + site.Name
	data["Site"] = site
	data["Lead"] = lead
	data["Submissions"] = subs
	data["Assignments"] = assigns
	data["Statuses"] = store.LeadStatuses
	data["Notice"] = notice(r)
	return h.render(w, http.StatusOK, "lead.html", data)
}

func (h *Handler) setLeadStatus(w http.ResponseWriter, r *http.Request, s *store.Session) error {
	site, err := h.site(r, s)
	if err != nil {
		return err
	}
	id, err := leadID(r)
	if err != nil {
		return err
	}
	status := r.PostForm.Get("status")
	if !store.ValidLeadStatus(status) {
		return &pageError{http.StatusUnprocessableEntity, "Choose one of the statuses: " +
			strings.Join(store.LeadStatuses, ", ") + "."}
	}
	if err := h.db.SetLeadStatus(r.Context(), site.ID, id, status); err != nil {
		return err
	}
	h.log.InfoContext(r.Context(), "dashboard changed a lead's status", "lead_id", id, "status", status,
		"site_id", site.ID, "user_id", s.User.ID)
	redirect(w, r, Prefix+"/sites/"+site.ID+"/leads/"+strconv.FormatInt(id, 10), "status")
	return nil
}

func (h *Handler) listings(w http.ResponseWriter, r *http.Request, s *store.Session) error {
	site, err := h.site(r, s)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	text := strings.TrimSpace(q.Get("q"))
	if len(text) > 200 {
		text = text[:200]
	}
	page := pageNumber(r)
	ls, more, err := h.db.DashboardListings(r.Context(), site.ID, text, pageSize, (page-1)*pageSize)
	if err != nil {
		return err
	}
	data := h.base(s)
	data["Title"] = "Listings · " + site.Name
	data["Site"] = site
	data["Listings"] = ls
	data["Query"] = text
	data["Pager"] = newPager(Prefix+"/sites/"+site.ID+"/listings", q, page, more)
	data["Notice"] = notice(r)
	return h.render(w, http.StatusOK, "listings.html", data)
}

func (h *Handler) toggleFeatured(w http.ResponseWriter, r *http.Request, s *store.Session) error {
	site, err := h.site(r, s)
	if err != nil {
		return err
	}
	ref, err := strconv.ParseInt(r.PathValue("ref"), 10, 64)
	if err != nil || ref <= 0 {
		return errNotFound()
	}
	var featured bool
	switch r.PostForm.Get("featured") {
	case "true":
		featured = true
	case "false":
	default:
		return &pageError{http.StatusUnprocessableEntity, "Say whether the listing is featured."}
	}
	if err := h.db.SetListingFeatured(r.Context(), site.ID, ref, featured); err != nil {
		return err
	}
	h.log.InfoContext(r.Context(), "dashboard set a listing's featured flag", "ref", ref, "featured", featured,
		"site_id", site.ID, "user_id", s.User.ID)
	path := Prefix + "/sites/" + site.ID + "/listings"
	if q := strings.TrimSpace(r.PostForm.Get("q")); q != "" && len(q) <= 200 {
		path += "?q=" + url.QueryEscape(q)
		setHeaders(w)
		http.Redirect(w, r, path+"&done=featured", http.StatusSeeOther)
		return nil
	}
	redirect(w, r, path, "featured")
	return nil
}

func (h *Handler) clients(w http.ResponseWriter, r *http.Request, s *store.Session) error {
	site, err := h.site(r, s)
	if err != nil {
		return err
	}
	return h.renderClients(w, r, s, site, http.StatusOK, "", "")
}

func (h *Handler) renderClients(w http.ResponseWriter, r *http.Request, s *store.Session, site store.Site,
	status int, problem, name string) error {
	cs, err := h.db.ListOAuthClients(r.Context(), site.ID)
	if err != nil {
		return err
	}
	data := h.base(s)
	data["Title"] = "Upload clients · " + site.Name
	data["Site"] = site
	data["Clients"] = cs
	data["Problem"] = problem
	data["Name"] = name
	data["Notice"] = notice(r)
	return h.render(w, status, "clients.html", data)
}

func (h *Handler) createClient(w http.ResponseWriter, r *http.Request, s *store.Session) error {
	site, err := h.site(r, s)
	if err != nil {
		return err
	}
	name := r.PostForm.Get("name")
	c, secret, err := upload.CreateClient(r.Context(), h.db, site.ID, name)
	if err != nil {
		if !isInvalid(err) {
			return err
		}
		return h.renderClients(w, r, s, site, http.StatusUnprocessableEntity,
			"Give the client a name of 1 to 200 characters.", name)
	}
	h.log.InfoContext(r.Context(), "dashboard created an upload client", "client_id", c.ClientID,
		"site_id", site.ID, "user_id", s.User.ID)
	data := h.base(s)
	data["Title"] = "New upload client · " + site.Name
	data["Site"] = site
	data["Client"] = c
	data["Secret"] = secret
	return h.render(w, http.StatusOK, "client_created.html", data)
}

func (h *Handler) revokeClient(w http.ResponseWriter, r *http.Request, s *store.Session) error {
	site, err := h.site(r, s)
	if err != nil {
		return err
	}
	c, _, err := h.db.OAuthClientByID(r.Context(), r.PathValue("client"))
	if err != nil {
		return err
	}
	if c.SiteID != site.ID {
		return errNotFound()
	}
	if _, err := h.db.RevokeOAuthClient(r.Context(), c.ClientID); err != nil {
		return err
	}
	h.log.InfoContext(r.Context(), "dashboard revoked an upload client", "client_id", c.ClientID,
		"site_id", site.ID, "user_id", s.User.ID)
	redirect(w, r, Prefix+"/sites/"+site.ID+"/clients", "client_revoked")
	return nil
}
