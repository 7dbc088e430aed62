package introspect

import (
	"net/http"

	json "github.com/goccy/go-json"

	"github.com/listgate/listgate/origin/api"
	"github.com/listgate/listgate/pkg/apierror"
	"github.com/listgate/listgate/pkg/internalapi"
)

// SiteCORSPattern is the route of a site's allowed browser origins;
// SiteCORSPath gives its path for one site.
const SiteCORSPattern = internalapi.PathSiteCORS

// SiteCORSPath is the path of siteID's allowed browser origins.
func SiteCORSPath(siteID string) string { return internalapi.SiteCORSPath(siteID) }

// siteCORS is GET /internal/v1/sites/{site_id}/cors: 200 with
// internalapi.SiteCORS (the site id as stored, origins [] for none), which the
// edge answers CORS preflights from; 401 without the internal token; 404
// for an unknown site or an id that is not a UUID.
func (s *Service) siteCORS(w http.ResponseWriter, r *http.Request) error {
	if err := api.RequireEdge(r); err != nil {
		return err
	}
	id := r.PathValue("site_id")
	if !isUUID(id) {
		return apierror.NotFound("site not found")
	}
	site, err := s.db.GetSite(r.Context(), id)
	if err != nil {
		return err
	}
	b, err := json.Marshal(internalapi.SiteCORS{SiteID: site.ID, Origins: site.CORSOrigins})
	if err != nil {
		return err
	}
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	_, err = w.Write(append(b, '\n'))
	return err
}

// isUUID reports whether s is a UUID in its canonical text form (either
// case), the only form of a site id the route looks up.
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
				return false
			}
		}
	}
	return true
}
