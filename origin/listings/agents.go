package listings

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/jackc/pgx/v5"

	"github.com/listgate/listgate/pkg/apierror"
	"github.com/listgate/listgate/pkg/model"
)

const agentColumns = `a.id, a.name, a.email, a.phone_mobile, a.phone_office, a.photo_url,
	(SELECT count(*) FROM listing_agents la JOIN listings l ON l.site_id = la.site_id AND l.ref = la.listing_ref
	 WHERE la.site_id = a.site_id AND la.agent_id = a.id AND l.status = 'current')`

func scanAgent(r pgx.Row, extra ...any) (model.Agent, error) {
	var a model.Agent
	var id int64
	err := r.Scan(append([]any{&id, &a.Name, &a.Email, &a.Phones.Mobile, &a.Phones.Office, &a.PhotoURL, &a.ListingCount}, extra...)...)
	a.AgentID = strconv.FormatInt(id, 10)
	return a, err
}

// agentList serves the site's agents by name.
func (s *Service) agentList(w http.ResponseWriter, r *http.Request, st site) error {
	q := newQuery(r.URL, pageParams)
	p := q.page()
	if err := q.err(); err != nil {
		return err
	}
	rows, err := s.db.Pool.Query(r.Context(), `SELECT `+agentColumns+`, count(*) OVER () FROM agents a
		WHERE a.site_id = $1 ORDER BY lower(a.name), a.id LIMIT $2 OFFSET $3`, st.id, p.perPage, p.offset())
	if err != nil {
		return dbErr(err)
	}
	data := []model.Agent{}
	total := 0
	for rows.Next() {
		a, err := scanAgent(rows, &total)
		if err != nil {
			rows.Close()
			return dbErr(err)
		}
		data = append(data, a)
	}
	if err := rows.Err(); err != nil {
		return dbErr(err)
	}
	return respond(w, r, s.cc.Listings, model.Collection[model.Agent]{Data: data, Meta: meta(p, total)})
}

func (s *Service) agentOne(w http.ResponseWriter, r *http.Request, st site) error {
	if err := newQuery(r.URL, nil).err(); err != nil {
		return err
	}
	id, err := strconv.ParseInt(r.PathValue("agent_id"), 10, 64)
	if err != nil || id <= 0 {
		return apierror.NotFound("agent not found")
	}
	a, err := scanAgent(s.db.Pool.QueryRow(r.Context(), `SELECT `+agentColumns+` FROM agents a
		WHERE a.site_id = $1 AND a.id = $2`, st.id, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return apierror.NotFound("agent not found")
	}
	if err != nil {
		return dbErr(err)
	}
	return respond(w, r, s.cc.Listings, a)
}
