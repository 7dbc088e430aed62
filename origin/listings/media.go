package listings

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/listgate/listgate/pkg/apierror"
	"github.com/listgate/listgate/pkg/model"
)

const mediaColumns = `m.id, m.listing_ref, l.unique_id, m.kind, m.url, m.position, m.modified_at`

func scanMedia(r pgx.Row, loc *time.Location, total *int) (model.Media, error) {
	var m model.Media
	var id int64
	dst := []any{&id, &m.ListingRef, &m.ListingID, &m.Kind, &m.URL, &m.Position, &m.ModifiedAt}
	if total != nil {
		dst = append(dst, total)
	}
	err := r.Scan(dst...)
	m.MediaID = strconv.FormatInt(id, 10)
	m.ModifiedAt = m.ModifiedAt.In(loc)
	return m, err
}

// mediaList serves the site's media objects, of listings that are not
// deleted, optionally of one listing or kind, or changed since a time.
func (s *Service) mediaList(w http.ResponseWriter, r *http.Request, st site) error {
	q := newQuery(r.URL, mediaParams)
	p := q.page()
	ref := q.optInt("listing_ref", 1<<62)
	kind := q.enum("kind", mediaKinds, "")
	since := q.timestamp("modified_since")
	if err := q.err(); err != nil {
		return err
	}
	b := &sqlBuilder{}
	b.add("m.site_id = ?", st.id)
	b.conds = append(b.conds, "l.status <> 'deleted'")
	if ref != nil {
		b.add("m.listing_ref = ?", int64(*ref))
	}
	if kind != "" {
		b.add("m.kind = ?", kind)
	}
	if since != nil {
		b.add("m.modified_at > ?", *since)
	}
	limit, offset := b.param(p.perPage), b.param(p.offset())
	rows, err := s.db.Pool.Query(r.Context(), `SELECT `+mediaColumns+`, count(*) OVER ()
		FROM media m JOIN listings l ON l.site_id = m.site_id AND l.ref = m.listing_ref
		WHERE `+b.where()+` ORDER BY m.listing_ref, m.kind, m.position, m.id LIMIT `+limit+` OFFSET `+offset, b.args...)
	if err != nil {
		return dbErr(err)
	}
	data := []model.Media{}
	total := 0
	for rows.Next() {
		m, err := scanMedia(rows, st.loc, &total)
		if err != nil {
			rows.Close()
			return dbErr(err)
		}
		data = append(data, m)
	}
	if err := rows.Err(); err != nil {
		return dbErr(err)
	}
	return respond(w, r, s.cc.Listings, model.Collection[model.Media]{Data: data, Meta: meta(p, total)})
}

func (s *Service) mediaOne(w http.ResponseWriter, r *http.Request, st site) error {
	if err := newQuery(r.URL, nil).err(); err != nil {
		return err
	}
	id, err := strconv.ParseInt(r.PathValue("media_id"), 10, 64)
	if err != nil || id <= 0 {
		return apierror.NotFound("media object not found")
	}
	m, err := scanMedia(s.db.Pool.QueryRow(r.Context(), `SELECT `+mediaColumns+`
		FROM media m JOIN listings l ON l.site_id = m.site_id AND l.ref = m.listing_ref
		WHERE m.site_id = $1 AND m.id = $2 AND l.status <> 'deleted'`, st.id, id), st.loc, nil)
	if errors.Is(err, pgx.ErrNoRows) {
		return apierror.NotFound("media object not found")
	}
	if err != nil {
		return dbErr(err)
	}
	return respond(w, r, s.cc.Listings, m)
}
