package dashboard

import (
	"net/http"
	"time"

	"github.com/listgate/listgate/origin/store"
)

// recentLeadsWindow is how far back the agents page counts leads.
const recentLeadsWindow = 30 * 24 * time.Hour

func (h *Handler) agents(w http.ResponseWriter, r *http.Request, s *store.Session) error {
	site, err := h.site(r, s)
	if err != nil {
		return err
	}
	page := pageNumber(r)
	since := h.cfg.Now().Add(-recentLeadsWindow)
	as, more, err := h.db.DashboardAgents(r.Context(), site.ID, since, pageSize, (page-1)*pageSize)
	if err != nil {
		return err
	}
	data := h.base(s)
	data["Title"] = "Agents · " + site.Name
	data["Site"] = site
	data["Agents"] = as
	data["Since"] = since
	data["Pager"] = newPager(Prefix+"/sites/"+site.ID+"/agents", r.URL.Query(), page, more)
	return h.render(w, http.StatusOK, "agents.html", data)
}
