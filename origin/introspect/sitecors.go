package introspect

import (
	"net/http"

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
	if !api.IsUUID(id) {
		return apierror.NotFound("site not found")
	}
	site, err := s.db.GetSite(r.Context(), id)
	if err != nil {
		return err
	}
	return writeAnswer(w, internalapi.SiteCORS{SiteID: site.ID, Origins: site.CORSOrigins})
}
