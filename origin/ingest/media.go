package ingest

import (
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/listgate/listgate/pkg/reaxml"
)

// mediaKind maps a feed's media element to the API's media kind; the slot
// keeps attachments apart from objects/document slots.
func mediaKind(m reaxml.Media) (kind, slot string) {
	switch m.Kind {
	case reaxml.MediaFloorplan:
		return "floorplan", m.Slot
	case reaxml.MediaDocument:
		return "document", m.Slot
	case reaxml.MediaAttachment:
		return "document", "attachment-" + m.Slot
	default:
		return "image", m.Slot
	}
}

// queueMedia upserts the record's media slots and deletes the slots it
// clears. Slots the record does not mention stay, and so does a slot whose
// URL is not one clients may be given (checkURL): it is skipped and noted
// in sk. A slot's modified_at is its own modTime when the feed gives one;
// otherwise it changes only when the URL does, so clients can skip
// downloads of unchanged images.
func queueMedia(b *pgx.Batch, siteID string, ref int64, l *reaxml.Listing, sk *skips) {
	for i, m := range l.Media {
		kind, slot := mediaKind(m)
		if m.Slot == "" {
			slot = kind + "-" + strconv.Itoa(i+1)
		}
		url := strings.TrimSpace(m.URL)
		if url == "" {
			url = strings.TrimSpace(m.File)
		}
		if m.Delete || url == "" {
			b.Queue(`DELETE FROM media WHERE site_id = $1 AND listing_ref = $2 AND kind = $3 AND slot = $4`,
				siteID, ref, kind, slot)
			continue
		}
		what := string(m.Kind) + " " + m.Slot
		if strings.TrimSpace(m.URL) == "" {
			what += " file" // a file shipped beside the feed, not hosted here
		}
		if !sk.url(what, url) {
			continue
		}
		queueSlot(b, siteID, ref, kind, slot, url, m.Format, i+1, m.ModTime, l.ModTime)
	}
}

// queueLinks replaces a listing's video or link slots ("1", "2", …) with the
// record's list. A link that is not a URL clients may be given (checkURL)
// is left out like an empty one, and noted in sk as what (videoLink or
// externalLink) and its place.
func queueLinks(b *pgx.Batch, siteID string, ref int64, kind, what string, urls []string, l *reaxml.Listing, sk *skips) {
	slots := make([]string, 0, len(urls))
	for i, u := range urls {
		u = strings.TrimSpace(u)
		if u == "" || !sk.url(what+" "+strconv.Itoa(i+1), u) {
			continue
		}
		slot := strconv.Itoa(i + 1)
		slots = append(slots, slot)
		queueSlot(b, siteID, ref, kind, slot, u, "", i+1, time.Time{}, l.ModTime)
	}
	b.Queue(`DELETE FROM media WHERE site_id = $1 AND listing_ref = $2 AND kind = $3 AND NOT (slot = ANY($4))`,
		siteID, ref, kind, slots)
}

func queueSlot(b *pgx.Batch, siteID string, ref int64, kind, slot, url, format string, pos int, slotMod, listingMod time.Time) {
	var own any
	if !slotMod.IsZero() {
		own = slotMod
	}
	var fallback any = time.Now()
	if !listingMod.IsZero() {
		fallback = listingMod
	}
	b.Queue(`INSERT INTO media AS m (site_id, listing_ref, kind, slot, url, format, position, modified_at)
		VALUES ($1, $2, $3, $4, $5, nullif($6, ''), $7, coalesce($8::timestamptz, $9::timestamptz))
		ON CONFLICT (site_id, listing_ref, kind, slot) DO UPDATE SET
			url = excluded.url, format = excluded.format, position = excluded.position,
			modified_at = CASE
				WHEN $8::timestamptz IS NOT NULL THEN $8::timestamptz
				WHEN m.url IS DISTINCT FROM excluded.url THEN $9::timestamptz
				ELSE m.modified_at END`,
		siteID, ref, kind, slot, url, format, pos, own, fallback)
}
