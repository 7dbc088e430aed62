// Package views is the origin's listing view report endpoint, POST
// /internal/v1/views: edges count the view beacons of sites' pages per
// listing and day and send the counts in batches; the origin adds them to
// listing_views once per batch id (store.ApplyViewBatch), so a report an
// edge sends again after losing the answer is not counted twice. Only the
// edge may call it (internal token, see api.RequireEdge).
//
// The body is one JSON object, nothing else (internalapi.ViewReport):
//
//	{"batch_id": "<uuid>", "edge_id": "…", "counts": [{"site_id": "<uuid>",
//	  "listing_ref": N, "day": "YYYY-MM-DD", "views": N, "visitors": N}, …]}
//
// at most MaxCounts entries and MaxBody bytes (413 over either). The answer
// is 204, for a batch applied now and for one applied before; 401 without
// the internal token; 422 for a malformed body (nothing is added: the edge
// drops such a report rather than sending it again). Counts of listings the
// site does not have are skipped.
package views

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/listgate/listgate/origin/api"
	"github.com/listgate/listgate/origin/store"
	"github.com/listgate/listgate/pkg/apierror"
	"github.com/listgate/listgate/pkg/internalapi"
)

// Path is the route the service mounts.
const Path = internalapi.PathViews

const (
	// MaxBody bounds the request body: 4 MiB.
	MaxBody = 4 << 20
	// MaxCounts bounds the entries of one report.
	MaxCounts = 20_000
	// MaxViews bounds one entry's views, so that no sum can overflow a
	// bigint.
	MaxViews = 1_000_000_000_000
	// MaxDayOffset bounds how far a count's day may lie from the origin's
	// UTC date (time zones and clock skew): 2 days.
	MaxDayOffset = 2
)

// Config holds what New needs.
type Config struct {
	DB *store.DB
	// Log receives a line per batch applied twice. Nil: slog.Default().
	Log *slog.Logger
	// Now is the clock. Nil: time.Now.
	Now func() time.Time
}

// Service receives view reports. Safe for concurrent use.
type Service struct {
	db  *store.DB
	log *slog.Logger
	now func() time.Time
}

var _ api.Mounter = (*Service)(nil)

// New returns the views service.
func New(cfg Config) *Service {
	s := &Service{db: cfg.DB, log: cfg.Log, now: cfg.Now}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.now == nil {
		s.now = time.Now
	}
	return s
}

// Mount registers POST /internal/v1/views.
func (s *Service) Mount(handle func(pattern string, h api.HandlerFunc)) {
	handle("POST "+Path, s.report)
}

func (s *Service) report(w http.ResponseWriter, r *http.Request) error {
	if err := api.RequireEdge(r); err != nil {
		return err
	}
	b, err := Decode(http.MaxBytesReader(w, r.Body, MaxBody), s.now())
	if err != nil {
		return err
	}
	applied, err := s.db.ApplyViewBatch(r.Context(), b)
	if err != nil {
		return err
	}
	if !applied {
		s.log.Info("view report applied before; not counted again", "batch_id", b.ID, "edge_id", b.EdgeID)
	}
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusNoContent)
	return nil
}

type entry struct {
	SiteID     *string `json:"site_id"`
	ListingRef *int64  `json:"listing_ref"`
	Day        *string `json:"day"`
	Views      *int64  `json:"views"`
	Visitors   *int64  `json:"visitors"`
}

// Decode reads a report strictly: one JSON object with batch_id, edge_id
// and counts and no other field, each count with exactly its five fields,
// nothing after; days within MaxDayOffset of now's UTC date.
func Decode(body io.Reader, now time.Time) (store.ViewBatch, error) {
	var req struct {
		BatchID *string  `json:"batch_id"`
		EdgeID  *string  `json:"edge_id"`
		Counts  *[]entry `json:"counts"`
	}
	if err := api.DecodeStrict(body, &req); err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return store.ViewBatch{}, err
		}
		if errors.Is(err, api.ErrTrailingData) {
			return store.ViewBatch{}, apierror.InvalidField("body", "unexpected data after the JSON object")
		}
		return store.ViewBatch{}, apierror.InvalidField("body", "malformed JSON, a value of the wrong type, or an unknown field")
	}
	if req.BatchID == nil || !api.IsUUID(*req.BatchID) {
		return store.ViewBatch{}, apierror.InvalidField("batch_id", "required, a UUID")
	}
	if req.EdgeID == nil || len(*req.EdgeID) < 1 || len(*req.EdgeID) > 64 {
		return store.ViewBatch{}, apierror.InvalidField("edge_id", "required, 1 to 64 bytes")
	}
	if req.Counts == nil {
		return store.ViewBatch{}, apierror.InvalidField("counts", "required")
	}
	entries := *req.Counts
	if len(entries) > MaxCounts {
		return store.ViewBatch{}, apierror.Newf(apierror.CodePayloadTooLarge, "at most %d counts per report", MaxCounts)
	}
	today := now.UTC().Truncate(24 * time.Hour)
	lo, hi := today.AddDate(0, 0, -MaxDayOffset), today.AddDate(0, 0, MaxDayOffset)
	out := store.ViewBatch{ID: *req.BatchID, EdgeID: *req.EdgeID, Counts: make([]store.ViewCount, len(entries))}
	for i, e := range entries {
		field := func(name string) string { return fmt.Sprintf("counts[%d].%s", i, name) }
		if e.SiteID == nil || !api.IsUUID(*e.SiteID) {
			return store.ViewBatch{}, apierror.InvalidField(field("site_id"), "required, a UUID")
		}
		if e.ListingRef == nil || *e.ListingRef <= 0 {
			return store.ViewBatch{}, apierror.InvalidField(field("listing_ref"), "required, a positive integer")
		}
		if e.Day == nil {
			return store.ViewBatch{}, apierror.InvalidField(field("day"), "required, a date")
		}
		d, err := time.Parse(time.DateOnly, *e.Day)
		if err != nil || d.Before(lo) || d.After(hi) {
			return store.ViewBatch{}, apierror.InvalidField(field("day"), fmt.Sprintf("must be a date (YYYY-MM-DD) within %d days of today", MaxDayOffset))
		}
		if e.Views == nil || *e.Views < 0 || *e.Views > MaxViews {
			return store.ViewBatch{}, apierror.InvalidField(field("views"), fmt.Sprintf("required, an integer from 0 to %d", int64(MaxViews)))
		}
		if e.Visitors == nil || *e.Visitors < 0 || *e.Visitors > *e.Views {
			return store.ViewBatch{}, apierror.InvalidField(field("visitors"), "required, an integer from 0 to views")
		}
		out.Counts[i] = store.ViewCount{SiteID: *e.SiteID, ListingRef: *e.ListingRef, Day: d, Views: *e.Views, Visitors: *e.Visitors}
	}
	return out, nil
}
