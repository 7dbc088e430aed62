// Package usage is the origin's usage report endpoint, POST
// /internal/v1/usage: edges send how many requests each site served per
// minute, and the origin adds the counts up in usage_minutes (see
// store.AddUsageReport) and in usage_hours. The dashboard charts the last
// hour, 30 days and 12 months. Only the edge may call it (internal token,
// see api.RequireEdge).
//
// The body is one JSON object, nothing else:
//
//	{"report_id": "<uuid>", "counts": [{"site_id": "<uuid>", "minute": "<RFC 3339, on a minute>", "requests": N}, …]}
//
// at most MaxCounts entries and MaxBody bytes (413 over either). Counts of
// the same site and minute add up, in one report and across reports; counts
// of unknown sites are skipped. report_id is optional: a report sent again
// with the same id (an edge that did not get the answer) is applied once,
// for a day (store.UsageReportRetention). The answer is 204, whether the
// report was applied now or before; 401 without the internal token; 422
// for a malformed body, in which case nothing is added.
package usage

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/listgate/listgate/origin/api"
	"github.com/listgate/listgate/origin/store"
	"github.com/listgate/listgate/pkg/apierror"
	"github.com/listgate/listgate/pkg/internalapi"
)

// Path is the route the service mounts.
const Path = internalapi.PathUsage

const (
	// MaxBody bounds the request body: 1 MiB.
	MaxBody = 1 << 20
	// MaxCounts bounds the entries of one report.
	MaxCounts = 10_000
	// MaxRequests bounds one entry's requests, so that no sum can overflow
	// a bigint.
	MaxRequests = 1_000_000_000_000
)

// Config holds what New needs.
type Config struct {
	DB *store.DB
}

// Service receives usage reports. Safe for concurrent use.
type Service struct {
	db *store.DB
}

var _ api.Mounter = (*Service)(nil)

// New returns the usage service.
func New(cfg Config) *Service { return &Service{db: cfg.DB} }

// Mount registers POST /internal/v1/usage.
func (s *Service) Mount(handle func(pattern string, h api.HandlerFunc)) {
	handle("POST "+Path, s.report)
}

func (s *Service) report(w http.ResponseWriter, r *http.Request) error {
	if err := api.RequireEdge(r); err != nil {
		return err
	}
	reportID, counts, err := decodeReport(http.MaxBytesReader(w, r.Body, MaxBody))
	if err != nil {
		return err
	}
	if _, err := s.db.AddUsageReport(r.Context(), reportID, counts); err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusNoContent)
	return nil
}

type entry struct {
	SiteID   *string `json:"site_id"`
	Minute   *string `json:"minute"`
	Requests *int64  `json:"requests"`
}

// decodeReport reads the body strictly: one JSON object with "counts" and
// perhaps "report_id" and no other field, each entry with exactly its three
// fields, nothing after. The report id is "" when absent.
func decodeReport(body io.Reader) (string, []store.UsageCount, error) {
	var req struct {
		ReportID *string  `json:"report_id"`
		Counts   *[]entry `json:"counts"`
	}
	if err := api.DecodeStrict(body, &req); err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return "", nil, err
		}
		if errors.Is(err, api.ErrTrailingData) {
			return "", nil, apierror.InvalidField("body", "unexpected data after the JSON object")
		}
		return "", nil, apierror.InvalidField("body", "malformed JSON, a value of the wrong type, or an unknown field")
	}
	var reportID string
	if req.ReportID != nil {
		if !api.IsUUID(*req.ReportID) {
			return "", nil, apierror.InvalidField("report_id", "must be a UUID")
		}
		reportID = *req.ReportID
	}
	if req.Counts == nil {
		return "", nil, apierror.InvalidField("counts", "required")
	}
	entries := *req.Counts
	if len(entries) > MaxCounts {
		return "", nil, apierror.Newf(apierror.CodePayloadTooLarge, "at most %d counts per report", MaxCounts)
	}
	out := make([]store.UsageCount, len(entries))
	for i, e := range entries {
		field := func(name string) string { return fmt.Sprintf("counts[%d].%s", i, name) }
		if e.SiteID == nil || !api.IsUUID(*e.SiteID) {
			return "", nil, apierror.InvalidField(field("site_id"), "required, a UUID")
		}
		if e.Minute == nil {
			return "", nil, apierror.InvalidField(field("minute"), "required, an RFC 3339 time on a minute")
		}
		m, err := time.Parse(time.RFC3339, *e.Minute)
		if err != nil || !m.Truncate(time.Minute).Equal(m) {
			return "", nil, apierror.InvalidField(field("minute"), "must be an RFC 3339 time on a minute (no seconds)")
		}
		if e.Requests == nil || *e.Requests < 0 || *e.Requests > MaxRequests {
			return "", nil, apierror.InvalidField(field("requests"), fmt.Sprintf("required, an integer from 0 to %d", int64(MaxRequests)))
		}
		out[i] = store.UsageCount{SiteID: *e.SiteID, Minute: m, Requests: *e.Requests}
	}
	return reportID, out, nil
}
