package dashboard

import (
	"errors"
	"net/http"
	"strings"

	"github.com/listgate/listgate/origin/store"
	"github.com/listgate/listgate/pkg/apierror"
)

// corsLines returns the non-blank lines of the origins form's text, trimmed.
func corsLines(text string) []string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			out = append(out, line)
		}
	}
	return out
}

// setCORS saves the site's allowed browser origins (the site page's form,
// one origin per line; none clears them) and tells the edges. A list the
// store refuses is shown again with the reason, and nothing changes.
func (h *Handler) setCORS(w http.ResponseWriter, r *http.Request, s *store.Session) error {
	site, err := h.site(r, s)
	if err != nil {
		return err
	}
	text := r.PostForm.Get("origins")
	origins, err := h.db.SetCORS(r.Context(), site.ID, corsLines(text))
	if err != nil {
		if !isInvalid(err) {
			return err
		}
		return h.renderSite(w, r, s, site, http.StatusUnprocessableEntity, corsProblem(err), text)
	}
	h.log.InfoContext(r.Context(), "dashboard set a site's browser origins", "origins", len(origins),
		"site_id", site.ID, "user_id", s.User.ID)
	redirect(w, r, Prefix+"/sites/"+site.ID, "cors")
	return nil
}

// corsProblem is the store's reason for refusing a list of origins, as a
// sentence.
func corsProblem(err error) string {
	msg := "these are not origins"
	if ae, ok := errors.AsType[*apierror.Error](err); ok && ae.Details["origins"] != "" {
		msg = ae.Details["origins"]
	}
	return "Not saved: " + msg + "."
}
