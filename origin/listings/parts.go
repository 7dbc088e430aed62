package listings

import (
	"context"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/listgate/listgate/pkg/model"
)

// renderRows renders a page of listings, reading their agents, media and
// inspections in one round trip.
func (s *Service) renderRows(ctx context.Context, st site, rows []*row) ([]model.Listing, error) {
	if len(rows) == 0 {
		return []model.Listing{}, nil
	}
	refs := make([]int64, len(rows))
	for i, r := range rows {
		refs[i] = r.ref
	}
	agents := map[int64][]model.ListingAgent{}
	media := map[int64][]model.Media{}
	insp := map[int64][]model.Inspection{}

	// Their plans are one index each, whatever the site and refs: planned
	// once by the connection (the media's was planned again on every run).
	b := &pgx.Batch{}
	genericPlans(b)
	b.Queue(`SELECT la.listing_ref, a.id, a.name, a.email, a.phone_mobile, a.phone_office
		FROM listing_agents la JOIN agents a ON a.site_id = la.site_id AND a.id = la.agent_id
		WHERE la.site_id = $1 AND la.listing_ref = ANY($2) ORDER BY la.listing_ref, la.position`, st.id, refs).
		Query(func(rs pgx.Rows) error {
			var ref, id int64
			var a model.ListingAgent
			_, err := pgx.ForEachRow(rs, []any{&ref, &id, &a.Name, &a.Email, &a.Phones.Mobile, &a.Phones.Office}, func() error {
				a.AgentID = strconv.FormatInt(id, 10)
				agents[ref] = append(agents[ref], a)
				return nil
			})
			return err
		})
	b.Queue(`SELECT listing_ref, id, kind, url, position, modified_at FROM media
		WHERE site_id = $1 AND listing_ref = ANY($2) ORDER BY listing_ref, kind <> 'image', position, id`, st.id, refs).
		Query(func(rs pgx.Rows) error {
			var ref, id int64
			var m model.Media
			_, err := pgx.ForEachRow(rs, []any{&ref, &id, &m.Kind, &m.URL, &m.Position, &m.ModifiedAt}, func() error {
				m.MediaID = strconv.FormatInt(id, 10)
				m.ModifiedAt = m.ModifiedAt.In(st.loc)
				media[ref] = append(media[ref], m)
				return nil
			})
			return err
		})
	b.Queue(`SELECT listing_ref, starts_at, ends_at FROM inspections
		WHERE site_id = $1 AND listing_ref = ANY($2) ORDER BY listing_ref, starts_at`, st.id, refs).
		Query(func(rs pgx.Rows) error {
			var ref int64
			var start time.Time
			var end *time.Time
			_, err := pgx.ForEachRow(rs, []any{&ref, &start, &end}, func() error {
				in := model.Inspection{StartsAt: start.In(st.loc)}
				if end != nil {
					e := end.In(st.loc)
					in.EndsAt = &e
				}
				insp[ref] = append(insp[ref], in)
				return nil
			})
			return err
		})
	if err := s.db.Pool.SendBatch(ctx, b).Close(); err != nil {
		return nil, dbErr(err)
	}
	out := make([]model.Listing, len(rows))
	for i, r := range rows {
		l, err := render(r, st.loc, agents[r.ref], media[r.ref], insp[r.ref])
		if err != nil {
			return nil, err
		}
		out[i] = l
	}
	return out, nil
}
