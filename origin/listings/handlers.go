package listings

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/listgate/listgate/origin/api"
	"github.com/listgate/listgate/pkg/apierror"
	"github.com/listgate/listgate/pkg/model"
)

func (s *Service) list(w http.ResponseWriter, r *http.Request, st site) error {
	f, err := parseListingFilter(r.URL, listingParams, false)
	if err != nil {
		return err
	}
	return s.listings(w, r, st, f)
}

func (s *Service) search(w http.ResponseWriter, r *http.Request, st site) error {
	f, err := parseListingFilter(r.URL, searchParams, true)
	if err != nil {
		return err
	}
	return s.listings(w, r, st, f)
}

func (s *Service) featured(w http.ResponseWriter, r *http.Request, st site) error {
	q := newQuery(r.URL, featuredParams)
	f := listingFilter{page: q.page(), sort: "-modified"}
	f.statuses = q.enumList("status", servedStatuses)
	if f.statuses == nil {
		f.statuses = []string{"current"}
	}
	if err := q.err(); err != nil {
		return err
	}
	f.featuredOnly = true
	return s.listings(w, r, st, f)
}

// listings runs a listing query and writes the page. Listings whose status
// is withdrawn, offmarket or deleted come as tombstones when the request
// asked for changes (modified_since).
func (s *Service) listings(w http.ResponseWriter, r *http.Request, st site, f listingFilter) error {
	q := listingSQL(st.id, f)
	ctx := r.Context()
	var found []*row
	total := 0
	// A ranked search's page carries its total (pageCounts): it reads the
	// matches once. A page past the last has no row to carry it, and is
	// counted apart.
	scanPage := func(rows pgx.Rows) error {
		for rows.Next() {
			rw := &row{}
			dest := rw.dest()
			if q.pageCounts {
				dest = append(dest, &total)
			}
			if err := rows.Scan(dest...); err != nil {
				return err
			}
			found = append(found, rw)
		}
		return rows.Err()
	}
	countTotal := func(r pgx.Row) error { return r.Scan(&total) }
	exact := true
	if q.custom {
		// Planned with this request's words each time (see customPlan):
		// one round trip each, the count only when the page cannot carry it.
		rows, _ := s.db.Pool.Query(ctx, q.page, append([]any{customPlan}, q.args...)...)
		err := scanPage(rows)
		rows.Close()
		if err != nil {
			return dbErr(err)
		}
		if !q.pageCounts || (len(found) == 0 && f.offset() > 0) {
			if err := countTotal(s.db.Pool.QueryRow(ctx, q.count, append([]any{customPlan}, q.countArgs...)...)); err != nil {
				return dbErr(err)
			}
		}
	} else {
		send := func(queue func(*pgx.Batch)) error {
			batch := &pgx.Batch{}
			if q.generic {
				genericPlans(batch)
			}
			queue(batch)
			return s.db.Pool.SendBatch(ctx, batch).Close()
		}
		err := send(func(b *pgx.Batch) {
			b.Queue(q.page, q.args...).Query(scanPage)
			if !q.pageCounts {
				b.Queue(q.count, q.countArgs...).QueryRow(countTotal)
			}
		})
		if err == nil && q.pageCounts && len(found) == 0 {
			// A deep page counts from its own first row (deepPageCount); a
			// page past the last has none, and is counted apart.
			err = send(func(b *pgx.Batch) { b.Queue(q.count, q.countArgs...).QueryRow(countTotal) })
		}
		if err != nil {
			return dbErr(err)
		}
	}
	// The count reads one past its bound to tell a total at the bound from
	// one beyond.
	bound := countBound(f)
	if q.pageCounts && q.custom {
		bound = searchWindow
	}
	if total > bound {
		total, exact = bound, false
	}
	data := make([]any, 0, len(found))
	var full []*row
	for _, rw := range found {
		if f.modifiedSince != nil && tombstone(rw.status) {
			data = append(data, model.Tombstone{ListingRef: rw.ref, ListingID: rw.uniqueID, AgencyID: rw.agencyID,
				Status: rw.status, ModifiedAt: rw.modifiedAt.In(st.loc)})
			continue
		}
		full = append(full, rw)
		data = append(data, nil)
	}
	rendered, err := s.renderRows(ctx, st, full)
	if err != nil {
		return err
	}
	i := 0
	for j := range data {
		if data[j] == nil {
			data[j] = rendered[i]
			i++
		}
	}
	m := meta(f.page, total)
	m.TotalExact = exact
	return respond(w, r, s.cc.Listings, model.Collection[any]{Data: data, Meta: m})
}

// customPlan runs a search's statements as unnamed statements, which
// Postgres plans with the request's values every time. The pool's default
// (a prepared statement per connection) lets Postgres switch to a generic
// plan after five executions, and a generic plan cannot know how many
// listings a word matches: it takes every search for a rare word and finds
// all matches in the full-text index, then sorts them — on a site of
// 100,000 listings a common word or prefix matches tens of thousands, and
// a search planned for a rare word ran some 30 times longer than the plan
// for its own words. Planning each search costs well under a millisecond.
const customPlan = pgx.QueryExecModeCacheDescribe

// genericPlans queues, first in a batch, the setting that runs the batch's
// statements on their generic plans: a prepared statement's plan made once
// for any values, kept by the connection. Postgres otherwise plans a listing
// page again on every run, with the request's site: the plan for one site
// is estimated cheaper than the plan for any, so the generic plan is never
// chosen. Planning was most of a small site's page (0.15–0.35 ms against
// 0.06–0.13 ms to run it) and 0.8 ms of a deep page's 2.8 ms on a site of
// 100,000 (TestQueriesUseIndexes, "plain pages run generic plans"). Only the statements whose plan
// does not depend on the values take it (listingQuery.generic): one index,
// in the order asked for, whatever the site. The setting is local to the
// batch's transaction (Postgres runs a batch as one, to its Sync), so it
// ends with the batch, committed or not.
func genericPlans(b *pgx.Batch) {
	b.Queue(`SELECT set_config('plan_cache_mode', 'force_generic_plan', true)`)
}

// listingQuery is what a listing request runs.
type listingQuery struct {
	// page is the page query; its last two parameters are the limit and
	// offset.
	page string
	args []any
	// count is the query of the total, bounded by countBound (searchWindow
	// for a ranked search), with its arguments.
	count     string
	countArgs []any
	// pageCounts: the page's rows carry the total as their last column.
	pageCounts bool
	// custom: the statements must be planned with the request's values
	// (a search; see customPlan).
	custom bool
	// generic: the statements run on their generic plans (genericPlans):
	// no filter but the site and one status (and the featured flag), so
	// the order's index serves every site alike.
	generic bool
}

// listingSQL returns the query of a listing page and the query of its
// total. Kept apart, each can use an index: a window count would make the
// page query read every matching row — except for a search ranked by
// relevance, which reads every match it ranks: its page query returns the
// total too, as its last column (pageCounts).
func listingSQL(siteID string, f listingFilter) listingQuery {
	b, tsq, rankq := listingWhere(siteID, f)
	// The site and one status: every other filter adds a condition.
	plain := tsq == "" && len(f.statuses) == 1 && len(b.conds) == 2
	if f.featuredOnly {
		b.conds = append(b.conds, "l.featured")
	}
	q := listingQuery{custom: tsq != "", generic: plain}
	limit, offset := b.param(f.perPage), b.param(f.offset())
	q.args = b.args
	// The count's bound is the last parameter: the count query takes every
	// parameter but the page's limit and offset, then this one.
	q.count = `SELECT count(*) FROM (SELECT FROM listings l WHERE ` + b.where() + ` LIMIT $` +
		fmt.Sprint(len(b.args)-1) + `) c`
	q.countArgs = append(b.args[:len(b.args)-2:len(b.args)-2], countBound(f)+1)
	if tsq != "" && f.sort == "relevance" {
		// Ranking reads each match it ranks, and a broad search (a word in
		// most listings) matches most of a site: it ranks the searchWindow
		// most recently modified matches only, found from the newest down
		// (or, for a narrow search, all its matches, from the full-text
		// index: the planner chooses with the word's statistics). One more
		// is read to tell a narrow search from a broad one; the page
		// carries the count (pageCounts).
		q.pageCounts = true
		q.countArgs = append(b.args[:len(b.args)-2:len(b.args)-2], searchWindow+1)
		// Counted as the window is found (a page past the last has no row
		// to carry the count), so that it takes the same path.
		q.count = `SELECT count(*) FROM (SELECT FROM listings l WHERE ` + b.where() +
			` ORDER BY l.modified_at DESC, l.ref DESC LIMIT $` + fmt.Sprint(len(b.args)-1) + `) c`
		// The window is chosen first and ranked after, so that however the
		// planner finds the matches, only the window's are ranked. Choosing
		// it carries each match's row address (ctid), not its text-search
		// vector: a narrow search finds its matches in the full-text index
		// and sorts them all by modification time to keep the newest, and
		// with the vectors (about 1.3 kB each) that sort, and the tuple
		// stores the window passed through, copied every match's vector.
		// The window's vectors are then read by address (a Tid Scan: the
		// block that found the match, no index), in the same statement, so
		// under the same snapshot: the row version the window chose. The
		// total is the window's size, counted apart.
		q.page = `WITH c AS MATERIALIZED (
				SELECT l.ctid AS tid, l.ref, l.modified_at FROM listings l
				WHERE ` + b.where() + ` ORDER BY l.modified_at DESC, l.ref DESC LIMIT ` + fmt.Sprint(searchWindow+1) + `),
			w AS MATERIALIZED (SELECT c.ref, c.modified_at, ts_rank_cd(v.search, ` + rankq + `) AS rank
				FROM (SELECT * FROM c ORDER BY c.modified_at DESC, c.ref DESC LIMIT ` + fmt.Sprint(searchWindow) + `) c
				JOIN listings v ON v.ctid = c.tid),
			p AS (SELECT ref, rank, modified_at FROM w
				ORDER BY rank DESC, modified_at DESC, ref DESC LIMIT ` + limit + ` OFFSET ` + offset + `)
			SELECT ` + rowColumns + `, (SELECT count(*) FROM c) FROM p JOIN listings l ON l.site_id = $1 AND l.ref = p.ref
			ORDER BY p.rank DESC, p.modified_at DESC, p.ref DESC`
		return q
	}
	order := orderBy(f.sort, rankq)
	if f.offset() == 0 {
		q.page = `SELECT ` + rowColumns + ` FROM listings l WHERE ` + b.where() +
			` ORDER BY ` + order + ` LIMIT ` + limit + ` OFFSET ` + offset
		return q
	}
	// A deeper page skips its offset in the index alone (an index-only scan
	// of the refs), then reads the rows of the page only: skipping rows
	// would read each skipped listing.
	if key, op, dir, ok := deepPageCount(f.sort); ok {
		// Its total, counted from its own first row: the offset, and the
		// matches from that row on (up to countWindow past the page), in
		// the same statement. Counted from the first match, the count
		// walked the offset a second time: page 200 walked 3,980 refs for
		// the page and 5,021 for its total, at about 0.24 µs a ref
		// (TestDeepPageCountsFromItsFirstRow).
		q.pageCounts = true
		q.page = `WITH p AS MATERIALIZED (SELECT l.ref, l.` + key + ` AS k FROM listings l WHERE ` + b.where() +
			` ORDER BY ` + order + ` LIMIT ` + limit + ` OFFSET ` + offset + `),
			first AS MATERIALIZED (SELECT k, ref FROM p ORDER BY k ` + dir + `, ref ` + dir + ` LIMIT 1)
			SELECT ` + rowColumns + `, ` + offset + `::bigint + (SELECT count(*) FROM (SELECT FROM listings l WHERE ` + b.where() +
			` AND (l.` + key + `, l.ref) ` + op + ` ((SELECT k FROM first), (SELECT ref FROM first))
				LIMIT ` + limit + ` + ` + fmt.Sprint(countWindow+1) + `) c)
			FROM p JOIN listings l ON l.site_id = $1 AND l.ref = p.ref ORDER BY ` + order
		return q
	}
	q.page = `SELECT ` + rowColumns + ` FROM (SELECT l.ref FROM listings l WHERE ` + b.where() +
		` ORDER BY ` + order + ` LIMIT ` + limit + ` OFFSET ` + offset + `) p
		JOIN listings l ON l.site_id = $1 AND l.ref = p.ref ORDER BY ` + order
	return q
}

// deepPageCount tells how a deep page of a listing order counts its
// total from its first row: the order's key, never null, and the rows at
// or after a row in it ((key, ref) op the row's; dir is the direction that
// puts the first row first). The orders by price or suburb, whose keys may
// be null, count from the first match.
func deepPageCount(sort string) (key, op, dir string, ok bool) {
	switch sort {
	case "relevance", "-modified", "":
		return "modified_at", "<=", "DESC", true
	case "modified":
		return "modified_at", ">=", "ASC", true
	case "-created":
		return "created_at", "<=", "DESC", true
	case "created":
		return "created_at", ">=", "ASC", true
	}
	return "", "", "", false
}

// countBound is how many matches a listing query counts at most: up to
// countWindow past the end of the page.
func countBound(f listingFilter) int { return f.offset() + f.perPage + countWindow }

func tombstone(status string) bool {
	return status == "withdrawn" || status == "offmarket" || status == "deleted"
}

func meta(p page, total int) model.Meta {
	return model.Meta{Page: p.page, PerPage: p.perPage, Total: total, TotalExact: true,
		TotalPages: (total + p.perPage - 1) / p.perPage}
}

// countWindow is how far past the end of the page asked for a listing
// query counts its matches: a site of 100,000 listings would otherwise
// count them all for every page. Beyond it the total is a lower bound
// (meta.total_exact false).
const countWindow = 1000

// searchWindow is how many matches a search sorted by relevance ranks at
// most: the most recently modified. A narrower search ranks every match.
// Ranking is most of a broad search's cost (ts_rank_cd, about 13 µs a
// listing of realistic text): 300 keeps a broad search on a site of
// 100,000 listings within a few times the cost of one on 250.
const searchWindow = 300

// one serves a single listing by listing_ref, listing_id or
// AGENCYID:UNIQUEID. Deleted listings are not served.
func (s *Service) one(w http.ResponseWriter, r *http.Request, st site) error {
	if err := newQuery(r.URL, nil).err(); err != nil {
		return err
	}
	key := r.PathValue("listing")
	ref, err := s.resolve(r.Context(), st.id, key)
	if err != nil {
		return err
	}
	rw := &row{}
	err = s.db.Pool.QueryRow(r.Context(), `SELECT `+rowColumns+` FROM listings l
		WHERE l.site_id = $1 AND l.ref = $2 AND l.status <> 'deleted'`, st.id, ref).Scan(rw.dest()...)
	if errors.Is(err, pgx.ErrNoRows) {
		return apierror.NotFound("listing not found")
	}
	if err != nil {
		return dbErr(err)
	}
	out, err := s.renderRows(r.Context(), st, []*row{rw})
	if err != nil {
		return err
	}
	return respond(w, r, s.cc.Listings, out[0])
}

// resolve finds a listing's ref from the path segment.
func (s *Service) resolve(ctx context.Context, siteID, key string) (int64, error) {
	notFound := apierror.NotFound("listing not found")
	// No listing's id can hold what a text column refuses (a NUL, bytes
	// that are not UTF-8): such a key is not found, not sent to fail a
	// query.
	if key == "" || len(key) > 200 || !api.Storable(key) {
		return 0, notFound
	}
	if ref, err := strconv.ParseInt(key, 10, 64); err == nil && ref > 0 {
		var found int64
		err := s.db.Pool.QueryRow(ctx, `SELECT ref FROM listings WHERE site_id = $1 AND ref = $2`, siteID, ref).Scan(&found)
		if err == nil {
			return found, nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return 0, dbErr(err)
		}
		// A numeric uniqueID is also possible: fall through.
	}
	var refs []int64
	var err error
	if agency, unique, ok := strings.Cut(key, ":"); ok {
		rows, _ := s.db.Pool.Query(ctx, `SELECT ref FROM listings WHERE site_id = $1 AND agency_id = $2 AND unique_id = $3`,
			siteID, agency, unique)
		refs, err = pgx.CollectRows(rows, pgx.RowTo[int64])
	} else {
		rows, _ := s.db.Pool.Query(ctx, `SELECT ref FROM listings WHERE site_id = $1 AND unique_id = $2 LIMIT 2`, siteID, key)
		refs, err = pgx.CollectRows(rows, pgx.RowTo[int64])
	}
	if err != nil {
		return 0, dbErr(err)
	}
	switch len(refs) {
	case 0:
		return 0, notFound
	case 1:
		return refs[0], nil
	default:
		return 0, apierror.InvalidField("listing", "two agencies of this site use that listing_id: use AGENCYID:UNIQUEID")
	}
}
