package listings

import (
	"errors"
	"fmt"
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
	// The page walks the media index in the page's order and stops at its
	// end; the total is counted apart, up to countWindow past the page, as
	// a listing query's is. A count of every match on every page (a window
	// count) read all of a site's media and sorted them: 1.5 s a page for
	// the 650,000 media objects of a site of 100,000 listings.
	where, n := b.where(), len(b.args)
	bound := p.offset() + p.perPage + countWindow
	limit, offset := b.param(p.perPage), b.param(p.offset())
	// One past the bound tells a total at the bound from one beyond.
	countArgs := append(b.args[:n:n], bound+1)
	data := []model.Media{}
	total := 0
	page := `SELECT ` + mediaColumns + ` FROM media m JOIN listings l ON l.site_id = m.site_id AND l.ref = m.listing_ref
		WHERE ` + where + ` ORDER BY m.listing_ref, m.kind, m.position, m.id LIMIT ` + limit + ` OFFSET ` + offset
	scanPage := func(rows pgx.Rows) error {
		for rows.Next() {
			m, err := scanMedia(rows, st.loc, nil)
			if err != nil {
				return err
			}
			data = append(data, m)
		}
		return rows.Err()
	}
	count := `SELECT count(*) FROM (SELECT FROM media m JOIN listings l ON l.site_id = m.site_id AND l.ref = m.listing_ref
		WHERE ` + where + ` LIMIT $` + fmt.Sprint(n+1) + `) c`
	scanCount := func(r pgx.Row) error { return r.Scan(&total) }
	if since == nil {
		batch := &pgx.Batch{}
		batch.Queue(page, b.args...).Query(scanPage)
		batch.Queue(count, countArgs...).QueryRow(scanCount)
		if err := s.db.Pool.SendBatch(r.Context(), batch).Close(); err != nil {
			return dbErr(err)
		}
	} else {
		// How many objects changed since a time decides the plan (the few
		// changed found by the modification index, then ordered; or the
		// list walked in its order): planned with the request's time each
		// time, as a search is with its words (customPlan). A prepared
		// statement's generic plan walked every object of the site for a
		// time after them all (90 ms on a site of 650,000).
		rows, _ := s.db.Pool.Query(r.Context(), page, append([]any{customPlan}, b.args...)...)
		err := scanPage(rows)
		rows.Close()
		if err == nil {
			err = scanCount(s.db.Pool.QueryRow(r.Context(), count, append([]any{customPlan}, countArgs...)...))
		}
		if err != nil {
			return dbErr(err)
		}
	}
	mt := meta(p, min(total, bound))
	mt.TotalExact = total <= bound
	return respond(w, r, s.cc.Listings, model.Collection[model.Media]{Data: data, Meta: mt})
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
