package ingest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

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

// applyBatch applies listings in one transaction, each in a savepoint. A
// listing the database rejects is rolled back to its savepoint and counted
// as an error; anything else (connection lost, ctx ended) rolls back the
// batch and is returned. Counts are added to res only once the batch has
// committed.
// agents caches the ids of the agents an import has upserted, so each is
// written once per import: upserting one agent per listing would pile up
// dead row versions that every later lookup of the agent walks.
func (im *Importer) applyBatch(ctx context.Context, siteID string, batch []*reaxml.Listing, agents map[string]int64, res *Result) error {
	var counts Counts
	var errs, withoutMedia []ListingError
	err := im.db.InTx(ctx, func(tx pgx.Tx) error {
		counts, errs, withoutMedia = Counts{}, nil, nil
		// Imports into one site take turns, so two feeds racing cannot both
		// create the same listing.
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 7))`, siteID); err != nil {
			return err
		}
		for _, l := range batch {
			id := listingID(l.AgentID, l.UniqueID)
			sp, err := tx.Begin(ctx)
			if err != nil {
				return err
			}
			out, sk, err := applyListing(ctx, sp, siteID, l, agents)
			if err != nil {
				_ = sp.Rollback(ctx)
				var pgErr *pgconn.PgError
				if !errors.As(err, &pgErr) && !errors.As(err, new(*recordError)) {
					return fmt.Errorf("ingest: listing %s: %w", id, err)
				}
				// The savepoint undid the agents this listing created.
				clear(agents)
				errs = append(errs, ListingError{ListingID: id, Line: l.Line, Message: err.Error()})
				continue
			}
			if err := sp.Commit(ctx); err != nil {
				return err
			}
			if msg := sk.message(); msg != "" {
				withoutMedia = append(withoutMedia, ListingError{ListingID: id, Line: l.Line, Message: msg})
			}
			switch out {
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
	if err != nil {
		clear(agents) // the batch's new agents were rolled back
		return fmt.Errorf("ingest: %w", err)
	}
	res.Counts.Created += counts.Created
	res.Counts.Updated += counts.Updated
	res.Counts.Unchanged += counts.Unchanged
	res.Counts.Deleted += counts.Deleted
	res.Counts.Skipped += counts.Skipped
	for _, e := range errs {
		res.addError(e.ListingID, e.Line, e.Message)
	}
	for _, e := range withoutMedia {
		res.addSkipped(e)
	}
	return nil
}

// recordError is a record the ingest itself refuses.
type recordError struct{ msg string }

func (e *recordError) Error() string { return e.msg }

// stored is the part of a listing row an update compares against.
type stored struct {
	ref    int64
	status string
	doc    map[string]json.RawMessage
	hash   []byte
	mod    *pgtype.Timestamptz
}

// applyListing applies one record inside a savepoint. It reports the
// parts it left out (media whose URL clients may not be given): the
// listing is applied without them.
func applyListing(ctx context.Context, tx pgx.Tx, siteID string, l *reaxml.Listing, agents map[string]int64) (outcome, skips, error) {
	rec, err := newRecord(l)
	if err != nil {
		return 0, nil, &recordError{err.Error()}
	}
	var s stored
	var modTime pgtype.Timestamptz
	err = tx.QueryRow(ctx, `SELECT ref, status, doc, feed_hash, feed_mod_time FROM listings
		WHERE site_id = $1 AND agency_id = $2 AND unique_id = $3 FOR UPDATE`,
		siteID, l.AgentID, l.UniqueID).Scan(&s.ref, &s.status, &s.doc, &s.hash, &modTime)
	exists := err == nil
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return 0, nil, err
	}
	if exists && modTime.Valid {
		s.mod = &modTime
	}

	if !exists && l.Status == reaxml.StatusDeleted {
		return skipped, nil, nil // nothing to delete
	}
	if exists {
		if s.mod != nil && !l.ModTime.IsZero() && l.ModTime.Before(s.mod.Time) {
			return skipped, nil, nil
		}
		if bytes.Equal(s.hash, rec.hash) || (l.Status == reaxml.StatusDeleted && s.status == string(reaxml.StatusDeleted)) {
			return unchanged, nil, nil
		}
	}

	doc := rec.doc
	if exists {
		if doc, err = merge(s.doc, rec.doc); err != nil {
			return 0, nil, &recordError{err.Error()}
		}
	}
	merged, docJSON, err := decodeDoc(doc)
	if err != nil {
		return 0, nil, &recordError{"merge: " + err.Error()}
	}
	c := columnsOf(merged)
	var feedMod any
	if !l.ModTime.IsZero() {
		feedMod = l.ModTime
	}
	if exists {
		_, err = tx.Exec(ctx, `UPDATE listings SET type = $3, status = $4, under_offer = $5, category = $6,
			headline = $7, description = $8, suburb = $9, state = $10, postcode = $11, price = $12,
			bedrooms = $13, bathrooms = $14, car_spaces = $15, doc = $16,
			feed_mod_time = coalesce($17, feed_mod_time), feed_hash = $18, modified_at = now(),
			search_address = $19, price_shown = $20
			WHERE site_id = $1 AND ref = $2`,
			siteID, s.ref, c.typ, l.Status, c.underOffer, c.category, c.headline, c.description,
			c.suburb, c.state, c.postcode, c.price, c.bedrooms, c.bathrooms, c.carSpaces, docJSON,
			feedMod, rec.hash, c.searchAddress, c.priceShown)
	} else {
		err = tx.QueryRow(ctx, `INSERT INTO listings (site_id, agency_id, unique_id, type, status,
			under_offer, category, headline, description, suburb, state, postcode, price, bedrooms,
			bathrooms, car_spaces, doc, feed_mod_time, feed_hash, search_address, price_shown)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21)
			RETURNING ref`,
			siteID, l.AgentID, l.UniqueID, c.typ, l.Status, c.underOffer, c.category, c.headline,
			c.description, c.suburb, c.state, c.postcode, c.price, c.bedrooms, c.bathrooms, c.carSpaces,
			docJSON, feedMod, rec.hash, c.searchAddress, c.priceShown).Scan(&s.ref)
	}
	if err != nil {
		return 0, nil, err
	}
	sk, err := applyParts(ctx, tx, siteID, s.ref, l, agents)
	if err != nil {
		return 0, nil, err
	}
	switch {
	case !exists:
		return created, sk, nil
	case l.Status == reaxml.StatusDeleted:
		return deleted, sk, nil
	default:
		return updated, sk, nil
	}
}

// applyParts brings the listing's agents, media and inspections in line with
// the record, for each part the record mentions. It reports the media it
// left out.
func applyParts(ctx context.Context, tx pgx.Tx, siteID string, ref int64, l *reaxml.Listing, agents map[string]int64) (skips, error) {
	b := &pgx.Batch{}
	var sk skips
	if l.Agents != nil {
		ids, err := upsertAgents(ctx, tx, siteID, l.Agents, agents, &sk)
		if err != nil {
			return nil, err
		}
		b.Queue(`DELETE FROM listing_agents WHERE site_id = $1 AND listing_ref = $2`, siteID, ref)
		for i, id := range ids {
			b.Queue(`INSERT INTO listing_agents (site_id, listing_ref, position, agent_id) VALUES ($1, $2, $3, $4)`,
				siteID, ref, i+1, id)
		}
	}
	if l.Media != nil {
		queueMedia(b, siteID, ref, l, &sk)
	}
	if l.VideoLinks != nil {
		queueLinks(b, siteID, ref, "video", "videoLink", l.VideoLinks, l, &sk)
	}
	if l.ExternalLinks != nil {
		queueLinks(b, siteID, ref, "link", "externalLink", l.ExternalLinks, l, &sk)
	}
	if l.Inspections != nil {
		b.Queue(`DELETE FROM inspections WHERE site_id = $1 AND listing_ref = $2`, siteID, ref)
		seen := map[int64]bool{}
		for _, in := range l.Inspections {
			if seen[in.StartsAt.UnixNano()] {
				continue
			}
			seen[in.StartsAt.UnixNano()] = true
			var ends any
			if !in.EndsAt.IsZero() && !in.EndsAt.Before(in.StartsAt) {
				ends = in.EndsAt
			}
			b.Queue(`INSERT INTO inspections (site_id, listing_ref, starts_at, ends_at) VALUES ($1, $2, $3, $4)`,
				siteID, ref, in.StartsAt, ends)
		}
	}
	if b.Len() == 0 {
		return sk, nil
	}
	return sk, tx.SendBatch(ctx, b).Close()
}

// upsertAgents stores the listing's agents (known by e-mail within the site,
// or by name when there is no e-mail) and returns their ids in order, at
// most four, without repeats. cache holds the ids this batch already
// upserted. A photo or social link that is not a URL clients may be given
// (checkURL) is left out, noted in sk; the agent keeps the one it had.
func upsertAgents(ctx context.Context, tx pgx.Tx, siteID string, list []reaxml.Agent, cache map[string]int64, sk *skips) ([]int64, error) {
	var ids []int64
	seen := map[int64]bool{}
	for _, a := range list {
		email := strings.TrimSpace(a.Email)
		name := strings.TrimSpace(a.Name)
		if email == "" && name == "" {
			continue
		}
		key := "e:" + strings.ToLower(email)
		conflict := `(site_id, lower(email)) WHERE email IS NOT NULL`
		if email == "" {
			key, conflict = "n:"+name, `(site_id, name) WHERE email IS NULL`
		}
		id, ok := cache[key]
		if !ok {
			mobile, office, ah := phones(a.Phones)
			links := map[string]string{}
			for _, l := range []struct{ name, url string }{
				{"twitter", a.TwitterURL}, {"facebook", a.FacebookURL}, {"linkedin", a.LinkedInURL},
			} {
				if v := strings.TrimSpace(l.url); v != "" && sk.url("agent "+cut(name, 40)+" "+l.name+" link", v) {
					links[l.name] = v
				}
			}
			photo := strings.TrimSpace(a.PhotoURL)
			if photo != "" && !sk.url("agent "+cut(name, 40)+" photo", photo) {
				photo = ""
			}
			err := tx.QueryRow(ctx, `INSERT INTO agents AS a (site_id, name, email, phone_mobile, phone_office, phone_ah, photo_url, links)
				VALUES ($1, $2, nullif($3, ''), nullif($4, ''), nullif($5, ''), nullif($6, ''), nullif($7, ''), $8)
				ON CONFLICT `+conflict+` DO UPDATE SET
					name = coalesce(nullif(excluded.name, ''), a.name),
					phone_mobile = coalesce(excluded.phone_mobile, a.phone_mobile),
					phone_office = coalesce(excluded.phone_office, a.phone_office),
					phone_ah = coalesce(excluded.phone_ah, a.phone_ah),
					photo_url = coalesce(excluded.photo_url, a.photo_url),
					links = a.links || excluded.links,
					updated_at = now()
				RETURNING id`,
				siteID, name, email, mobile, office, ah, photo, links).Scan(&id)
			if err != nil {
				return nil, err
			}
			cache[key] = id
		}
		if !seen[id] && len(ids) < 4 {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	return ids, nil
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
