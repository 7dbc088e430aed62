// Package usage counts the edge's authenticated requests per site and UTC
// minute and reports the counts to the origin (POST /internal/v1/usage),
// where the dashboard charts them. Each report has an id; one the origin
// did not answer is sent again as it was, with the same id, so that the
// origin, which applies an id once, counts nothing twice.
package usage

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	json "github.com/goccy/go-json"
	"github.com/valyala/fasthttp"

	"github.com/listgate/listgate/edge/upstream"
	"github.com/listgate/listgate/pkg/internalapi"
)

type key struct {
	site   string
	minute int64 // unix seconds of the minute's start
}

// report is a report sent and not yet answered: sent again as it is.
type report struct {
	id     string
	counts []internalapi.UsageCount
}

// Reporter is safe for concurrent use.
type Reporter struct {
	mu     sync.Mutex
	counts map[key]int64
	// unsent are the reports the origin has not taken, oldest first.
	unsent []report

	origins *upstream.Origins
	every   time.Duration
	log     *slog.Logger
}

// maxPending bounds the counts (site minutes) kept while the origin
// cannot take reports: past it the oldest reports are dropped.
const maxPending = 100_000

// maxReportCounts bounds the counts of one report, well under the
// origin's limits (10,000 counts, 1 MiB).
const maxReportCounts = 5_000

// New returns a reporter sending to the origins every interval (default
// 10 s).
func New(origins *upstream.Origins, every time.Duration, log *slog.Logger) *Reporter {
	if every <= 0 {
		every = 10 * time.Second
	}
	if log == nil {
		log = slog.Default()
	}
	return &Reporter{counts: map[key]int64{}, every: every, log: log, origins: origins}
}

// Count counts one request of site at now. It allocates only for a site's
// first request of a minute.
func (r *Reporter) Count(site string, now time.Time) {
	k := key{site: site, minute: now.Unix() - now.Unix()%60}
	r.mu.Lock()
	r.counts[k]++
	r.mu.Unlock()
}

// Run reports every interval until ctx ends, then once more.
func (r *Reporter) Run(ctx context.Context) {
	t := time.NewTicker(r.every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			r.Flush(context.WithoutCancel(ctx))
			return
		case <-t.C:
			r.Flush(ctx)
		}
	}
}

// Flush sends the reports the origin has not taken yet, then what was
// counted since the last flush (in reports of at most maxReportCounts
// counts). It stops at the first report the origin does not take: that
// one and those after it are kept, as they are, for the next flush (up to
// maxPending counts, the oldest dropped past it).
func (r *Reporter) Flush(ctx context.Context) error {
	r.mu.Lock()
	pending := r.counts
	r.counts = map[key]int64{}
	reports := r.unsent
	r.unsent = nil
	r.mu.Unlock()
	var fresh []internalapi.UsageCount
	for k, n := range pending {
		fresh = append(fresh, internalapi.UsageCount{SiteID: k.site, Minute: time.Unix(k.minute, 0).UTC(), Requests: n})
		if len(fresh) == maxReportCounts {
			reports = append(reports, report{id: newUUID(), counts: fresh})
			fresh = nil
		}
	}
	if len(fresh) > 0 {
		reports = append(reports, report{id: newUUID(), counts: fresh})
	}
	for i, rep := range reports {
		err := r.send(rep)
		var refused *refusedError
		switch {
		case err == nil:
		case errors.As(err, &refused):
			// Sending it again would be refused again, and hold back
			// every report after it.
			r.log.Error("usage report refused by the origin; dropped", "err", err, "counts", len(rep.counts))
		default:
			r.keep(reports[i:])
			r.log.Warn("usage report failed; kept for the next one", "err", err, "reports", len(reports)-i)
			return err
		}
	}
	return nil
}

// refusedError is an answer that will not change if the report is sent
// again: a 4xx other than 401 (a token the origin may yet be given), 408
// and 429.
type refusedError struct{ status int }

func (e *refusedError) Error() string { return fmt.Sprintf("origin refused the report: %d", e.status) }

// keep puts reports back before the ones queued since, dropping the oldest
// past maxPending counts.
func (r *Reporter) keep(reports []report) {
	r.mu.Lock()
	defer r.mu.Unlock()
	all := append(reports, r.unsent...)
	n := 0
	for _, rep := range all {
		n += len(rep.counts)
	}
	dropped := 0
	for n > maxPending && len(all) > 0 {
		n -= len(all[0].counts)
		dropped += len(all[0].counts)
		all = all[1:]
	}
	if dropped > 0 {
		r.log.Warn("usage counts dropped: the origin has not taken reports for too long", "counts", dropped)
	}
	r.unsent = all
}

// send posts one report.
func (r *Reporter) send(rep report) error {
	b, _ := json.Marshal(internalapi.UsageReport{ReportID: rep.id, Counts: rep.counts})
	req := fasthttp.AcquireRequest()
	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.SetRequestURI(internalapi.PathUsage)
	req.Header.SetMethod("POST")
	req.Header.SetContentType("application/json")
	req.SetBody(b)
	if err := r.origins.Do(req, resp, 5*time.Second); err != nil {
		return err
	}
	switch code := resp.StatusCode(); {
	case code == fasthttp.StatusNoContent:
		return nil
	case code >= 400 && code < 500 && code != fasthttp.StatusUnauthorized && code != fasthttp.StatusRequestTimeout &&
		code != fasthttp.StatusTooManyRequests:
		return &refusedError{status: code}
	default:
		return fmt.Errorf("origin answered %d", code)
	}
}

// newUUID returns a random (version 4) UUID.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	const hex = "0123456789abcdef"
	out := make([]byte, 0, 36)
	for i, c := range b {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			out = append(out, '-')
		}
		out = append(out, hex[c>>4], hex[c&0x0f])
	}
	return string(out)
}
