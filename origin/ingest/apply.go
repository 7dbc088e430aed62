package ingest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/listgate/listgate/origin/store"
	"github.com/listgate/listgate/pkg/reaxml"
)

// outcome is what applying one record did.
type outcome int

const (
	created outcome = iota
	updated
	unchanged
	deleted
	skipped
)

// item is one record of a batch and what applying it did.
type item struct {
	l   *reaxml.Listing
	rec *record
	id  string // AGENTID:UNIQUEID
	err error  // the record could not be prepared or was refused

	// Set by each attempt to apply the item.
	out     outcome
	exists  bool
	ref     int64
	write   bool    // the listing row is inserted or updated
	docJSON []byte  // the merged document, when written
	c       columns // its columns, when written
	agents  []int64 // listing_agents, when the record names agents
	stored  *storedDoc
	sk      skips
	dbErr   error // the database refused this listing alone
}

// prepare makes the items of a batch of parsed listings. Records that
// cannot be encoded carry their error.
func prepare(batch []*reaxml.Listing) []*item {
	items := make([]*item, len(batch))
	for i, l := range batch {
		it := &item{l: l, id: listingID(l.AgentID, l.UniqueID)}
		it.rec, it.err = newRecord(l)
		items[i] = it
	}
	return items
}

// applyBatch applies a batch in one transaction on conn: the whole batch
// in a few statements (applyItems). When the database refuses one of its
// listings, the batch is split in halves, each applied in a savepoint,
// down to the one listing refused, which is rolled back and counted as an
// error while the others stay; anything else (connection lost, ctx ended)
// rolls back the batch and is returned. A deadlock with the batch another
// writer is applying (both upserting the same new agents) rolls the batch
// back and applies it again. Its outcome is set in res only once it has
// committed, and its new agents join the cache then.
func (im *Importer) applyBatch(ctx context.Context, conn *pgxpool.Conn, siteID string, items []*item, cache *agentCache, res *Result) error {
	var counts Counts
	var agents map[string]int64
	var err error
	for attempt := 1; ; attempt++ {
		agents = cache.snapshot()
		err = pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			for _, it := range items {
				it.dbErr = nil
			}
			if err := applySplitting(ctx, tx, siteID, items, agents); err != nil {
				return err
			}
			counts = Counts{}
			for _, it := range items {
				if it.err != nil || it.dbErr != nil {
					continue
				}
				switch it.out {
				case created:
					counts.Created++
				case updated:
					counts.Updated++
				case unchanged:
					counts.Unchanged++
				case deleted:
					counts.Deleted++
				case skipped:
					counts.Skipped++
				}
			}
			if counts.Created+counts.Updated+counts.Deleted > 0 {
				return store.InsertEvent(ctx, tx, siteID, store.EventContentChanged, map[string]any{
					"site_id": siteID, "reason": "feed",
					"created": counts.Created, "updated": counts.Updated, "deleted": counts.Deleted,
				})
			}
			return nil
		})
		if !retryable(err) || attempt == maxAttempts {
			break
		}
		im.log.WarnContext(ctx, "ingest batch retried", "site_id", siteID, "attempt", attempt, "err", err)
	}
	if err != nil {
		return fmt.Errorf("ingest: %w", err)
	}
	cache.publish(agents)
	res.Counts.Created += counts.Created
	res.Counts.Updated += counts.Updated
	res.Counts.Unchanged += counts.Unchanged
	res.Counts.Deleted += counts.Deleted
	res.Counts.Skipped += counts.Skipped
	for _, it := range items {
		switch {
		case it.err != nil:
			res.addError(it.id, it.l.Line, it.err.Error())
		case it.dbErr != nil:
			res.addError(it.id, it.l.Line, it.dbErr.Error())
		default:
			if msg := it.sk.message(); msg != "" {
				res.addSkipped(ListingError{ListingID: it.id, Line: it.l.Line, Message: msg})
			}
		}
	}
	return nil
}

// maxAttempts bounds how often a batch is applied again after a deadlock.
const maxAttempts = 5

// retryable reports whether err is Postgres ending the transaction because
// of another one (a deadlock, a serialization failure): the batch is then
// applied again whole, not split.
func retryable(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "40P01" || pgErr.Code == "40001")
}

// applySplitting applies items in a savepoint; when the database refuses
// them it rolls the savepoint back and applies each half the same way, so
// that a refused listing is found in log2(len(items)) attempts and the
// others are applied.
func applySplitting(ctx context.Context, tx pgx.Tx, siteID string, items []*item, agents map[string]int64) error {
	sp, err := tx.Begin(ctx)
	if err != nil {
		return err
	}
	err = applyItems(ctx, sp, siteID, items, agents)
	if err == nil {
		return sp.Commit(ctx)
	}
	_ = sp.Rollback(ctx)
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || retryable(err) {
		return err
	}
	// The savepoint undid the agents these listings created.
	clear(agents)
	if len(items) == 1 {
		items[0].dbErr = err
		return nil
	}
	h := len(items) / 2
	if err := applySplitting(ctx, tx, siteID, items[:h], agents); err != nil {
		return err
	}
	return applySplitting(ctx, tx, siteID, items[h:], agents)
}

// applyItems applies records whose keys are distinct, in four round
// trips: read what is stored, upsert the agents not met before, insert the
// new listings, then update the others and replace their parts.
func applyItems(ctx context.Context, tx pgx.Tx, siteID string, items []*item, agents map[string]int64) error {
	live := make([]*item, 0, len(items))
	for _, it := range items {
		if it.err == nil {
			*it = item{l: it.l, rec: it.rec, id: it.id}
			live = append(live, it)
		}
	}
	if len(live) == 0 {
		return nil
	}
	if err := readStored(ctx, tx, siteID, live); err != nil {
		return err
	}

	var writes []*item
	for _, it := range live {
		if err := it.decide(); err != nil {
			it.err = err
			continue
		}
		if it.write {
			writes = append(writes, it)
		}
	}
	if len(writes) == 0 {
		return nil
	}
	if err := upsertAgents(ctx, tx, siteID, writes, agents); err != nil {
		return err
	}
	if err := insertListings(ctx, tx, siteID, writes); err != nil {
		return err
	}
	return writeRest(ctx, tx, siteID, writes)
}

// storedDoc is what decide compares a record with.
type storedDoc struct {
	status string
	hash   []byte
	mod    *time.Time
	doc    []byte // only when the hashes differ
}

// readStored reads, and locks, the stored rows of the items' listings.
func readStored(ctx context.Context, tx pgx.Tx, siteID string, live []*item) error {
	agencies := make([]string, len(live))
	uniques := make([]string, len(live))
	hashes := make([][]byte, len(live))
	for i, it := range live {
		agencies[i], uniques[i], hashes[i] = it.l.AgentID, it.l.UniqueID, it.rec.hash
	}
	rows, err := tx.Query(ctx, `SELECT u.i, l.ref, l.status, l.feed_hash, l.feed_mod_time,
			CASE WHEN l.feed_hash IS DISTINCT FROM u.hash THEN l.doc::text END
		FROM unnest($2::text[], $3::text[], $4::bytea[]) WITH ORDINALITY AS u(agency, uid, hash, i)
		JOIN listings l ON l.site_id = $1 AND l.agency_id = u.agency AND l.unique_id = u.uid
		FOR UPDATE OF l`, siteID, agencies, uniques, hashes)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var i int64
		var s storedDoc
		var ref int64
		var mod pgtype.Timestamptz
		var doc *string
		if err := rows.Scan(&i, &ref, &s.status, &s.hash, &mod, &doc); err != nil {
			return err
		}
		if mod.Valid {
			s.mod = &mod.Time
		}
		if doc != nil {
			s.doc = []byte(*doc)
		}
		it := live[i-1]
		it.exists, it.ref = true, ref
		it.stored = &s
	}
	return rows.Err()
}

// decide works out what the record does to its listing and, when it writes
// it, the merged document and its columns. An error is the record's own.
func (it *item) decide() error {
	l, rec, s := it.l, it.rec, it.stored
	if !it.exists {
		if l.Status == reaxml.StatusDeleted {
			it.out = skipped // nothing to delete
			return nil
		}
	} else {
		if s.mod != nil && !l.ModTime.IsZero() && l.ModTime.Before(*s.mod) {
			it.out = skipped
			return nil
		}
		if bytes.Equal(s.hash, rec.hash) || (l.Status == reaxml.StatusDeleted && s.status == string(reaxml.StatusDeleted)) {
			it.out = unchanged
			return nil
		}
	}
	if !it.exists {
		docJSON, c, ok, err := rec.newDoc()
		if err != nil {
			return &recordError{err.Error()}
		}
		if ok {
			it.write, it.docJSON, it.c, it.out = true, docJSON, c, created
			return nil
		}
	}
	doc, err := rec.doc()
	if err != nil {
		return &recordError{err.Error()}
	}
	if it.exists {
		storedDoc, err := decodeStored(s.doc)
		if err != nil {
			return &recordError{"stored listing: " + err.Error()}
		}
		if doc, err = merge(storedDoc, doc); err != nil {
			return &recordError{err.Error()}
		}
	}
	merged, docJSON, err := decodeDoc(doc)
	if err != nil {
		return &recordError{"merge: " + err.Error()}
	}
	it.write, it.docJSON, it.c = true, docJSON, columnsOf(merged)
	switch {
	case !it.exists:
		it.out = created
	case l.Status == reaxml.StatusDeleted:
		it.out = deleted
	default:
		it.out = updated
	}
	return nil
}

// recordError is a record the ingest itself refuses.
type recordError struct{ msg string }

func (e *recordError) Error() string { return e.msg }

// agentRow is an agent of a feed, as upserted.
type agentRow struct {
	key, name, email, mobile, office, ah, photo string
	links                                       map[string]string
}

// agentKey is how a feed's agent is known within the site: by e-mail, or
// by name when there is no e-mail; ok is false for an agent with neither.
func agentKey(a reaxml.Agent) (key, name, email string, ok bool) {
	email = strings.TrimSpace(a.Email)
	name = strings.TrimSpace(a.Name)
	switch {
	case email != "":
		return "e:" + strings.ToLower(email), name, email, true
	case name != "":
		return "n:" + name, name, email, true
	}
	return "", "", "", false
}

// upsertAgents stores the agents the written records name that this import
// has not upserted yet (the first record naming an agent gives its
// details), then sets each record's agent ids in order, at most four,
// without repeats. A photo or social link that is not a URL clients may
// be given (checkURL) is left out, noted in the record's skips; the agent
// keeps the one it had.
func upsertAgents(ctx context.Context, tx pgx.Tx, siteID string, writes []*item, cache map[string]int64) error {
	var byEmail, byName []agentRow
	pending := map[string]bool{}
	for _, it := range writes {
		for _, a := range it.l.Agents {
			key, name, email, ok := agentKey(a)
			if !ok || cache[key] != 0 || pending[key] {
				continue
			}
			pending[key] = true
			r := agentRow{key: key, name: name, email: email, links: map[string]string{}}
			r.mobile, r.office, r.ah = phones(a.Phones)
			for _, l := range []struct{ name, url string }{
				{"twitter", a.TwitterURL}, {"facebook", a.FacebookURL}, {"linkedin", a.LinkedInURL},
			} {
				if v := strings.TrimSpace(l.url); v != "" && it.sk.url("agent "+cut(name, 40)+" "+l.name+" link", v) {
					r.links[l.name] = v
				}
			}
			if p := strings.TrimSpace(a.PhotoURL); p != "" && it.sk.url("agent "+cut(name, 40)+" photo", p) {
				r.photo = p
			}
			if email != "" {
				byEmail = append(byEmail, r)
			} else {
				byName = append(byName, r)
			}
		}
	}
	for _, g := range []struct {
		rows     []agentRow
		conflict string
	}{
		{byEmail, `(site_id, lower(email)) WHERE email IS NOT NULL`},
		{byName, `(site_id, name) WHERE email IS NULL`},
	} {
		if len(g.rows) == 0 {
			continue
		}
		// In one order for every batch, so that two writers upserting the
		// same new agents lock them in the same order.
		slices.SortFunc(g.rows, func(a, b agentRow) int { return strings.Compare(a.key, b.key) })
		n := len(g.rows)
		names, emails := make([]string, n), make([]string, n)
		mobiles, offices, ahs, photos := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		links := make([]map[string]string, n)
		for i, r := range g.rows {
			names[i], emails[i], mobiles[i], offices[i], ahs[i], photos[i], links[i] =
				r.name, r.email, r.mobile, r.office, r.ah, r.photo, r.links
		}
		// The ids come back in the order of the rows given (WITH
		// ORDINALITY, matched by the row's own number).
		rows, err := tx.Query(ctx, `WITH u AS (
				SELECT * FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::jsonb[])
					WITH ORDINALITY AS u(name, email, mobile, office, ah, photo, links, i)
			), up AS (
				INSERT INTO agents AS a (site_id, name, email, phone_mobile, phone_office, phone_ah, photo_url, links)
				SELECT $1, name, nullif(email, ''), nullif(mobile, ''), nullif(office, ''), nullif(ah, ''), nullif(photo, ''), links
				FROM u ORDER BY i
				ON CONFLICT `+g.conflict+` DO UPDATE SET
					name = coalesce(nullif(excluded.name, ''), a.name),
					phone_mobile = coalesce(excluded.phone_mobile, a.phone_mobile),
					phone_office = coalesce(excluded.phone_office, a.phone_office),
					phone_ah = coalesce(excluded.phone_ah, a.phone_ah),
					photo_url = coalesce(excluded.photo_url, a.photo_url),
					links = a.links || excluded.links,
					updated_at = now()
				RETURNING id, email, name
			)
			SELECT u.i, up.id FROM u JOIN up ON CASE WHEN u.email = '' THEN up.email IS NULL AND up.name = u.name
				ELSE lower(up.email) = lower(u.email) END`,
			siteID, names, emails, mobiles, offices, ahs, photos, links)
		if err != nil {
			return err
		}
		got := 0
		for rows.Next() {
			var i, id int64
			if err := rows.Scan(&i, &id); err != nil {
				rows.Close()
				return err
			}
			cache[g.rows[i-1].key] = id
			got++
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if got != n {
			// Two of the feed's e-mails differ to Go but not to Postgres's
			// lower(): the upsert met one row twice. Have the batch split.
			return &pgconn.PgError{Code: "21000", Message: "agents: " + strconv.Itoa(n) + " upserted, " + strconv.Itoa(got) + " matched"}
		}
	}
	for _, it := range writes {
		if it.l.Agents == nil {
			continue
		}
		it.agents = []int64{}
		seen := map[int64]bool{}
		for _, a := range it.l.Agents {
			key, _, _, ok := agentKey(a)
			if !ok {
				continue
			}
			if id := cache[key]; !seen[id] && len(it.agents) < 4 {
				seen[id] = true
				it.agents = append(it.agents, id)
			}
		}
	}
	return nil
}

// phones picks an agent's mobile, office (business hours) and after-hours
// numbers.
func phones(list []reaxml.Phone) (mobile, office, ah string) {
	for _, p := range list {
		switch p.Type {
		case reaxml.PhoneMobile:
			if mobile == "" {
				mobile = p.Number
			}
		case reaxml.PhoneAfterHours:
			if ah == "" {
				ah = p.Number
			}
		default:
			if office == "" {
				office = p.Number
			}
		}
	}
	return mobile, office, ah
}

// listingCols are the column values of written listings, as arrays.
type listingCols struct {
	refs                                        []int64
	agencies, uniques, types, statuses          []string
	underOffers, priceShowns                    []bool
	categories, headlines, descriptions         []*string
	suburbs, states, postcodes, searchAddresses []*string
	prices                                      []*float64
	bedrooms, bathrooms, carSpaces              []*int
	docs                                        []string
	mods                                        []*time.Time
	hashes                                      [][]byte
}

func (lc *listingCols) add(it *item) {
	c, l := &it.c, it.l
	var mod *time.Time
	if !l.ModTime.IsZero() {
		mod = &l.ModTime
	}
	lc.refs = append(lc.refs, it.ref)
	lc.agencies = append(lc.agencies, l.AgentID)
	lc.uniques = append(lc.uniques, l.UniqueID)
	lc.types = append(lc.types, *c.typ)
	lc.statuses = append(lc.statuses, string(l.Status))
	lc.underOffers = append(lc.underOffers, c.underOffer)
	lc.priceShowns = append(lc.priceShowns, c.priceShown)
	lc.categories = append(lc.categories, c.category)
	lc.headlines = append(lc.headlines, c.headline)
	lc.descriptions = append(lc.descriptions, c.description)
	lc.suburbs = append(lc.suburbs, c.suburb)
	lc.states = append(lc.states, c.state)
	lc.postcodes = append(lc.postcodes, c.postcode)
	lc.searchAddresses = append(lc.searchAddresses, c.searchAddress)
	lc.prices = append(lc.prices, c.price)
	lc.bedrooms = append(lc.bedrooms, c.bedrooms)
	lc.bathrooms = append(lc.bathrooms, c.bathrooms)
	lc.carSpaces = append(lc.carSpaces, c.carSpaces)
	lc.docs = append(lc.docs, string(it.docJSON))
	lc.mods = append(lc.mods, mod)
	lc.hashes = append(lc.hashes, it.rec.hash)
}

// args are the arrays in the order of listingUnnest's columns.
func (lc *listingCols) args() []any {
	return []any{lc.refs, lc.agencies, lc.uniques, lc.types, lc.statuses, lc.underOffers, lc.categories,
		lc.headlines, lc.descriptions, lc.suburbs, lc.states, lc.postcodes, lc.prices, lc.bedrooms,
		lc.bathrooms, lc.carSpaces, lc.docs, lc.mods, lc.hashes, lc.searchAddresses, lc.priceShowns}
}

// listingUnnest reads listingCols.args as rows, from $2 on.
const listingUnnest = `unnest($2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[], $7::boolean[], $8::text[],
		$9::text[], $10::text[], $11::text[], $12::text[], $13::text[], $14::float8[], $15::int[],
		$16::int[], $17::int[], $18::text[], $19::timestamptz[], $20::bytea[], $21::text[], $22::boolean[])
	AS u(ref, agency_id, unique_id, type, status, under_offer, category, headline, description, suburb,
		state, postcode, price, bedrooms, bathrooms, car_spaces, doc, feed_mod_time, feed_hash,
		search_address, price_shown)`

// insertListings inserts the written records that are new, and sets their
// refs.
func insertListings(ctx context.Context, tx pgx.Tx, siteID string, writes []*item) error {
	var lc listingCols
	var fresh []*item
	for _, it := range writes {
		if !it.exists {
			lc.add(it)
			fresh = append(fresh, it)
		}
	}
	if len(fresh) == 0 {
		return nil
	}
	rows, err := tx.Query(ctx, `WITH ins AS (
			INSERT INTO listings (site_id, agency_id, unique_id, type, status, under_offer, category, headline,
				description, suburb, state, postcode, price, bedrooms, bathrooms, car_spaces, doc, feed_mod_time,
				feed_hash, search_address, price_shown)
			SELECT $1, agency_id, unique_id, type, status, under_offer, category, headline, description, suburb,
				state, postcode, price, bedrooms, bathrooms, car_spaces, doc::jsonb, feed_mod_time, feed_hash,
				search_address, price_shown
			FROM `+listingUnnest+`
			RETURNING ref, agency_id, unique_id
		) SELECT ref, agency_id, unique_id FROM ins`, append([]any{siteID}, lc.args()...)...)
	if err != nil {
		return err
	}
	defer rows.Close()
	refs := make(map[[2]string]int64, len(fresh))
	for rows.Next() {
		var ref int64
		var agency, unique string
		if err := rows.Scan(&ref, &agency, &unique); err != nil {
			return err
		}
		refs[[2]string{agency, unique}] = ref
	}
	if err := rows.Err(); err != nil {
		return err
	}
	for _, it := range fresh {
		it.ref = refs[[2]string{it.l.AgentID, it.l.UniqueID}]
	}
	return nil
}

// writeRest updates the written records that were stored and brings every
// written listing's agents, media and inspections in line with its record,
// for each part the record mentions, in one round trip. New listings have
// no parts to delete.
func writeRest(ctx context.Context, tx pgx.Tx, siteID string, writes []*item) error {
	b := &pgx.Batch{}
	var lc listingCols
	for _, it := range writes {
		if it.exists {
			lc.add(it)
		}
	}
	if len(lc.refs) > 0 {
		b.Queue(`UPDATE listings l SET type = u.type, status = u.status, under_offer = u.under_offer,
			category = u.category, headline = u.headline, description = u.description, suburb = u.suburb,
			state = u.state, postcode = u.postcode, price = u.price, bedrooms = u.bedrooms,
			bathrooms = u.bathrooms, car_spaces = u.car_spaces, doc = u.doc::jsonb,
			feed_mod_time = coalesce(u.feed_mod_time, l.feed_mod_time), feed_hash = u.feed_hash,
			modified_at = now(), search_address = u.search_address, price_shown = u.price_shown
			FROM `+listingUnnest+`
			WHERE l.site_id = $1 AND l.ref = u.ref`, append([]any{siteID}, lc.args()...)...)
	}

	var p parts
	for _, it := range writes {
		p.add(it)
	}
	p.queue(b, siteID)
	return tx.SendBatch(ctx, b).Close()
}

// parts are the rows of listing_agents, media and inspections a batch
// writes and deletes.
type parts struct {
	// Stored listings whose agents or inspections the batch replaces.
	agentsOf, inspectionsOf []int64
	// listing_agents rows.
	laRefs   []int64
	laPos    []int16
	laAgents []int64
	// Media slots deleted.
	delRefs         []int64
	delKinds, delSl []string
	// Link and video kinds replaced whole: every other slot of the kind goes.
	replRefs  []int64
	replKinds []string
	// Media upserted; the slots kept of replaced kinds are among them.
	media map[mediaKey]mediaRow
	order []mediaKey
	// Inspections inserted.
	inRefs         []int64
	inStart        []time.Time
	inEnd          []*time.Time
	seenInspection map[inspectionKey]bool
}

type mediaKey struct {
	ref        int64
	kind, slot string
}

type mediaRow struct {
	url, format       string
	pos               int
	own               *time.Time // the slot's own modTime
	fallback          time.Time  // the listing's, or now
	deleted, replaced bool
}

// mediaRows are media upserts as arrays; formats hold NULL for none.
type mediaRows struct {
	refs               []int64
	kinds, slots, urls []string
	formats            []*string
	pos                []int32
	mods               []time.Time
}

func (g *mediaRows) add(k mediaKey, r mediaRow) {
	var format *string
	if r.format != "" {
		format = &r.format
	}
	mod := r.fallback
	if r.own != nil {
		mod = *r.own
	}
	g.refs, g.kinds, g.slots = append(g.refs, k.ref), append(g.kinds, k.kind), append(g.slots, k.slot)
	g.urls, g.formats, g.pos, g.mods = append(g.urls, r.url), append(g.formats, format), append(g.pos, int32(r.pos)), append(g.mods, mod)
}

type inspectionKey struct {
	ref   int64
	start int64
}

// add collects one written record's parts.
func (p *parts) add(it *item) {
	l, ref := it.l, it.ref
	if it.agents != nil {
		if it.exists {
			p.agentsOf = append(p.agentsOf, ref)
		}
		for i, id := range it.agents {
			p.laRefs, p.laPos, p.laAgents = append(p.laRefs, ref), append(p.laPos, int16(i+1)), append(p.laAgents, id)
		}
	}
	fallback := time.Now()
	if !l.ModTime.IsZero() {
		fallback = l.ModTime
	}
	if l.Media != nil {
		for i, m := range l.Media {
			kind, slot := mediaKind(m)
			if m.Slot == "" {
				slot = kind + "-" + strconv.Itoa(i+1)
			}
			url := strings.TrimSpace(m.URL)
			if url == "" {
				url = strings.TrimSpace(m.File)
			}
			k := mediaKey{ref, kind, slot}
			if m.Delete || url == "" {
				p.setMedia(k, mediaRow{deleted: true})
				continue
			}
			what := string(m.Kind) + " " + m.Slot
			if strings.TrimSpace(m.URL) == "" {
				what += " file" // a file shipped beside the feed, not hosted here
			}
			if !it.sk.url(what, url) {
				continue
			}
			r := mediaRow{url: url, format: m.Format, pos: i + 1, fallback: fallback}
			if !m.ModTime.IsZero() {
				own := m.ModTime
				r.own = &own
			}
			p.setMedia(k, r)
		}
	}
	p.addLinks(it, "video", "videoLink", l.VideoLinks, fallback)
	p.addLinks(it, "link", "externalLink", l.ExternalLinks, fallback)
	if l.Inspections != nil {
		if it.exists {
			p.inspectionsOf = append(p.inspectionsOf, ref)
		}
		for _, in := range l.Inspections {
			k := inspectionKey{ref, in.StartsAt.UnixNano()}
			if p.seenInspection[k] {
				continue
			}
			if p.seenInspection == nil {
				p.seenInspection = map[inspectionKey]bool{}
			}
			p.seenInspection[k] = true
			var ends *time.Time
			if !in.EndsAt.IsZero() && !in.EndsAt.Before(in.StartsAt) {
				e := in.EndsAt
				ends = &e
			}
			p.inRefs, p.inStart, p.inEnd = append(p.inRefs, ref), append(p.inStart, in.StartsAt), append(p.inEnd, ends)
		}
	}
}

// addLinks replaces a listing's video or link slots ("1", "2", …) with the
// record's list. A link that is not a URL clients may be given (checkURL)
// is left out like an empty one, and noted in the record's skips as what
// (videoLink or externalLink) and its place.
func (p *parts) addLinks(it *item, kind, what string, urls []string, fallback time.Time) {
	if urls == nil {
		return
	}
	if it.exists {
		p.replRefs, p.replKinds = append(p.replRefs, it.ref), append(p.replKinds, kind)
	}
	for i, u := range urls {
		u = strings.TrimSpace(u)
		if u == "" || !it.sk.url(what+" "+strconv.Itoa(i+1), u) {
			continue
		}
		p.setMedia(mediaKey{it.ref, kind, strconv.Itoa(i + 1)}, mediaRow{url: u, pos: i + 1, fallback: fallback})
	}
}

// setMedia records the last word of a record on one slot.
func (p *parts) setMedia(k mediaKey, r mediaRow) {
	if p.media == nil {
		p.media = map[mediaKey]mediaRow{}
	}
	if _, ok := p.media[k]; !ok {
		p.order = append(p.order, k)
	}
	p.media[k] = r
}

// queue adds the statements writing the parts to b.
func (p *parts) queue(b *pgx.Batch, siteID string) {
	if len(p.agentsOf) > 0 {
		b.Queue(`DELETE FROM listing_agents WHERE site_id = $1 AND listing_ref = ANY($2)`, siteID, p.agentsOf)
	}
	if len(p.laRefs) > 0 {
		b.Queue(`INSERT INTO listing_agents (site_id, listing_ref, position, agent_id)
			SELECT $1, * FROM unnest($2::bigint[], $3::smallint[], $4::bigint[])`, siteID, p.laRefs, p.laPos, p.laAgents)
	}
	var up [2]mediaRows // without and with a modTime of their own
	for _, k := range p.order {
		r := p.media[k]
		if r.deleted {
			p.delRefs, p.delKinds, p.delSl = append(p.delRefs, k.ref), append(p.delKinds, k.kind), append(p.delSl, k.slot)
			continue
		}
		g := &up[0]
		if r.own != nil {
			g = &up[1]
		}
		g.add(k, r)
	}
	if len(p.delRefs) > 0 {
		b.Queue(`DELETE FROM media m USING unnest($2::bigint[], $3::text[], $4::text[]) AS d(ref, kind, slot)
			WHERE m.site_id = $1 AND m.listing_ref = d.ref AND m.kind = d.kind AND m.slot = d.slot`,
			siteID, p.delRefs, p.delKinds, p.delSl)
	}
	if len(p.replRefs) > 0 {
		// Every slot of a replaced kind that the record does not keep (the
		// links kept are upserted, and have no modTime of their own).
		b.Queue(`DELETE FROM media m USING unnest($2::bigint[], $3::text[]) AS r(ref, kind)
			WHERE m.site_id = $1 AND m.listing_ref = r.ref AND m.kind = r.kind
			AND NOT EXISTS (SELECT 1 FROM unnest($4::bigint[], $5::text[], $6::text[]) AS k(ref, kind, slot)
				WHERE k.ref = m.listing_ref AND k.kind = m.kind AND k.slot = m.slot)`,
			siteID, p.replRefs, p.replKinds, up[0].refs, up[0].kinds, up[0].slots)
	}
	// A slot's modified_at is its own modTime when the feed gives one;
	// otherwise it changes only when the URL does, so clients can skip
	// downloads of unchanged images.
	for i, whenChanged := range []string{
		`CASE WHEN excluded.url IS DISTINCT FROM m.url THEN excluded.modified_at ELSE m.modified_at END`,
		`excluded.modified_at`,
	} {
		g := &up[i]
		if len(g.refs) == 0 {
			continue
		}
		b.Queue(`INSERT INTO media AS m (site_id, listing_ref, kind, slot, url, format, position, modified_at)
			SELECT $1, * FROM unnest($2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[], $7::int[], $8::timestamptz[])
			ON CONFLICT (site_id, listing_ref, kind, slot) DO UPDATE SET
				url = excluded.url, format = excluded.format, position = excluded.position,
				modified_at = `+whenChanged,
			siteID, g.refs, g.kinds, g.slots, g.urls, g.formats, g.pos, g.mods)
	}
	if len(p.inspectionsOf) > 0 {
		b.Queue(`DELETE FROM inspections WHERE site_id = $1 AND listing_ref = ANY($2)`, siteID, p.inspectionsOf)
	}
	if len(p.inRefs) > 0 {
		b.Queue(`INSERT INTO inspections (site_id, listing_ref, starts_at, ends_at)
			SELECT $1, * FROM unnest($2::bigint[], $3::timestamptz[], $4::timestamptz[])`,
			siteID, p.inRefs, p.inStart, p.inEnd)
	}
}
