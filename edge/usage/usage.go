// Package usage counts the edge's authenticated requests per site and UTC
// minute and reports the counts to the origin (POST /internal/v1/usage),
// where the dashboard charts them.
package usage

import (
	"context"
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

// Reporter is safe for concurrent use.
type Reporter struct {
	mu     sync.Mutex
	counts map[key]int64

	origins *upstream.Origins
	every   time.Duration
	log     *slog.Logger
}

// maxPending bounds what is kept while the origin cannot take reports.
const maxPending = 100_000

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

// Flush sends what was counted since the last flush. Counts the origin
// did not take are kept for the next one (up to maxPending minutes).
func (r *Reporter) Flush(ctx context.Context) error {
	r.mu.Lock()
	pending := r.counts
	r.counts = map[key]int64{}
	r.mu.Unlock()
	if len(pending) == 0 {
		return nil
	}
	body := internalapi.UsageReport{Counts: make([]internalapi.UsageCount, 0, len(pending))}
	for k, n := range pending {
		body.Counts = append(body.Counts, internalapi.UsageCount{SiteID: k.site, Minute: time.Unix(k.minute, 0).UTC(), Requests: n})
	}
	b, _ := json.Marshal(body)
	req := fasthttp.AcquireRequest()
	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.SetRequestURI(internalapi.PathUsage)
	req.Header.SetMethod("POST")
	req.Header.SetContentType("application/json")
	req.SetBody(b)
	err := r.origins.Do(req, resp, 5*time.Second)
	if err == nil && resp.StatusCode() != fasthttp.StatusNoContent {
		err = fmt.Errorf("origin answered %d", resp.StatusCode())
	}
	if err != nil {
		r.mu.Lock()
		for k, n := range pending {
			if len(r.counts) < maxPending {
				r.counts[k] += n
			}
		}
		r.mu.Unlock()
		r.log.Warn("usage report failed; kept for the next one", "err", err, "minutes", len(pending))
	}
	return err
}
