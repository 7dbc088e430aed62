// Package delivery delivers lead events: a signed webhook to each endpoint
// a site registers (Standard Webhooks), and an e-mail to the agent a new
// lead is assigned to.
//
// The lead's transaction writes its event to the outbox, and the outbox's
// trigger fans it out into deliveries in that same transaction (migration
// 0012): a lead is stored with its deliveries or not at all. Workers on
// every origin claim due deliveries (store.ClaimDeliveries: FOR UPDATE SKIP
// LOCKED with a lease), send them, and record each attempt. A failed attempt
// is retried with exponential backoff and jitter (webhook.Backoff), or after
// the receiver's Retry-After when it is longer, for webhook.RetryFor after
// the event; a worker that dies mid-attempt leaves its claim to be taken
// again when the lease ends. Every attempt of one event to one endpoint
// carries the same webhook-id ("msg_<event id>") and body: delivery is at
// least once, and receivers dedupe on the id.
package delivery

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/listgate/listgate/origin/store"
	"github.com/listgate/listgate/pkg/mail"
	"github.com/listgate/listgate/pkg/promtext"
	"github.com/listgate/listgate/pkg/webhook"
)

// Config configures a Worker.
type Config struct {
	DB  *store.DB
	Log *slog.Logger
	// SecretKey is the operator's key the endpoints' secrets derive from;
	// nil: webhooks are not sent (they wait, due, until an origin with a
	// key claims them).
	SecretKey []byte
	// Client sends webhooks (webhook.NewClient); nil: one with Timeout that
	// reaches public addresses only.
	Client *http.Client
	// Mailer sends lead e-mail; nil: e-mail is off.
	Mailer Mailer
	// PublicURL is the base of the dashboard links in e-mail and payloads.
	PublicURL string
	// Workers bounds the attempts in flight. Default 32.
	Workers int
	// Timeout bounds one attempt's request (a webhook's, an e-mail's); the
	// attempt, reading the lead included, ends attemptSlack after it at the
	// latest. Default 10 s.
	Timeout time.Duration
	// Lease is how long a claim keeps other workers off. It must outlast an
	// attempt and the recording of its result (Timeout + attemptSlack +
	// recordTimeout), or another claim would send the delivery again
	// meanwhile and the first result would not count: a shorter one is
	// raised to that plus Timeout. Default 3 × Timeout.
	Lease time.Duration
	// PollInterval is how often due deliveries are looked for without a
	// notification (retries come due this way). Default 1 s.
	PollInterval time.Duration
}

// Mailer sends one message (*mail.Sender).
type Mailer interface {
	Send(ctx context.Context, m mail.Message) error
}

// Worker claims and sends deliveries until its Run's context ends.
type Worker struct {
	cfg  Config
	log  *slog.Logger
	wake chan struct{}
	// slots holds a token per attempt in flight.
	slots chan struct{}
	wg    sync.WaitGroup

	mu sync.Mutex
	// inflight counts the webhook attempts in flight per endpoint.
	inflight map[string]int
}

func init() {
	promtext.Describe("listgate_origin_deliveries_total",
		"Lead delivery attempts (webhooks and e-mail) by result: delivered (2xx or sent), retry (failed, retried later), failed (given up after 72 h), held (the endpoint is disabled), skipped (nothing to send).")
	promtext.Describe("listgate_origin_webhook_endpoints_disabled_total", "Webhook endpoints disabled after failing every attempt for more than 24 h.")
	promtext.Describe("listgate_origin_delivery_lag_seconds", "Time from a lead event to its successful delivery.")
	promtext.Describe("listgate_origin_deliveries_due",
		"Deliveries due now and not yet claimed by any origin's worker, by kind (webhook, email); read from Postgres every 5 s, counted up to 100,000.")
	promtext.Describe("listgate_origin_delivery_oldest_due_seconds",
		"How long the oldest due delivery of a kind has waited for a worker past its due time (0 when none); read from Postgres every 5 s.")
}

var (
	metricDelivered = metrics.NewCounter(`listgate_origin_deliveries_total{result="delivered"}`)
	metricRetried   = metrics.NewCounter(`listgate_origin_deliveries_total{result="retry"}`)
	metricFailed    = metrics.NewCounter(`listgate_origin_deliveries_total{result="failed"}`)
	metricHeld      = metrics.NewCounter(`listgate_origin_deliveries_total{result="held"}`)
	metricSkipped   = metrics.NewCounter(`listgate_origin_deliveries_total{result="skipped"}`)
	metricDisabled  = metrics.NewCounter(`listgate_origin_webhook_endpoints_disabled_total`)
	metricLag       = metrics.NewPrometheusHistogramExt(`listgate_origin_delivery_lag_seconds`, lagBuckets)

	metricWebhooksDue  = metrics.NewGauge(`listgate_origin_deliveries_due{kind="webhook"}`, nil)
	metricEmailsDue    = metrics.NewGauge(`listgate_origin_deliveries_due{kind="email"}`, nil)
	metricWebhooksWait = metrics.NewGauge(`listgate_origin_delivery_oldest_due_seconds{kind="webhook"}`, nil)
	metricEmailsWait   = metrics.NewGauge(`listgate_origin_delivery_oldest_due_seconds{kind="email"}`, nil)
)

// backlogInterval is how often a worker reads the delivery backlog.
const backlogInterval = 5 * time.Second

// lagBuckets are the bounds of the delivery lag histogram: from a receiver
// that answers at once to one retried for a day.
var lagBuckets = []float64{.01, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 3600, 21600, 86400}

// New checks cfg and returns a Worker.
func New(cfg Config) (*Worker, error) {
	if cfg.DB == nil {
		return nil, errors.New("delivery: DB is required")
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 32
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Second
	}
	if minLease := cfg.Timeout + attemptSlack + recordTimeout; cfg.Lease <= minLease {
		cfg.Lease = max(3*cfg.Timeout, minLease+cfg.Timeout)
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = time.Second
	}
	if cfg.Client == nil {
		cfg.Client = webhook.NewClient(webhook.ClientOptions{Timeout: cfg.Timeout})
	}
	return &Worker{cfg: cfg, log: cfg.Log, wake: make(chan struct{}, 1), slots: make(chan struct{}, cfg.Workers),
		inflight: map[string]int{}}, nil
}

// Run claims and sends deliveries until ctx ends, then waits for the
// attempts in flight (each bounded by Timeout) so that none is left to its
// lease.
func (w *Worker) Run(ctx context.Context) {
	defer w.wg.Wait()
	go w.listen(ctx)
	w.wg.Add(1)
	go w.watchBacklog(ctx)
	t := time.NewTicker(w.cfg.PollInterval)
	defer t.Stop()
	for ctx.Err() == nil {
		full, err := w.claimAndSend(ctx)
		if err != nil && ctx.Err() == nil {
			w.log.Warn("delivery: claim failed", "err", err)
		}
		if full && err == nil {
			continue // more may be due
		}
		select {
		case <-ctx.Done():
		case <-w.wake:
		case <-t.C:
		}
	}
}

// watchBacklog reads the delivery backlog into its gauges every
// backlogInterval until ctx ends: what a stuck worker or a flood of
// failing endpoints leaves behind, seen from any origin.
func (w *Worker) watchBacklog(ctx context.Context) {
	defer w.wg.Done()
	t := time.NewTicker(backlogInterval)
	defer t.Stop()
	for {
		rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		b, err := w.cfg.DB.DeliveryBacklogNow(rctx)
		cancel()
		if err == nil {
			metricWebhooksDue.Set(float64(b.WebhooksDue))
			metricEmailsDue.Set(float64(b.EmailsDue))
			metricWebhooksWait.Set(b.OldestWebhookWait.Seconds())
			metricEmailsWait.Set(b.OldestEmailWait.Seconds())
		} else if ctx.Err() == nil {
			w.log.Debug("delivery: backlog not read", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Wake makes Run look for due deliveries now.
func (w *Worker) Wake() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// claimAndSend claims as many due deliveries as there are free slots and
// starts sending them. full reports that it claimed as many as it asked
// for.
func (w *Worker) claimAndSend(ctx context.Context) (full bool, err error) {
	free := cap(w.slots) - len(w.slots)
	if free == 0 {
		// Wait for a slot: an attempt ending wakes Run.
		return false, nil
	}
	var ds []store.Delivery
	claimed := 0
	if w.cfg.SecretKey != nil {
		ds, err = w.cfg.DB.ClaimDeliveries(ctx, true, free, w.cfg.Lease, w.busyEndpoints())
		if err != nil {
			return false, err
		}
		claimed = len(ds)
		ds = w.share(ctx, ds)
	}
	if w.cfg.Mailer != nil && len(ds) < free {
		es, err := w.cfg.DB.ClaimDeliveries(ctx, false, free-len(ds), w.cfg.Lease, nil)
		if err != nil {
			w.start(ds)
			return false, err
		}
		ds = append(ds, es...)
		claimed += len(es)
	}
	w.start(ds)
	return claimed == free, nil
}

// perEndpoint is the share of a worker's slots one endpoint may hold.
func (w *Worker) perEndpoint() int { return max(1, cap(w.slots)/4) }

// busyEndpoints lists the endpoints holding their share of the slots.
func (w *Worker) busyEndpoints() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var busy []string
	for ep, n := range w.inflight {
		if n >= w.perEndpoint() {
			busy = append(busy, ep)
		}
	}
	return busy
}

// share keeps the claimed webhooks that fit their endpoint's share of the
// slots, counting them in flight, and releases the others.
func (w *Worker) share(ctx context.Context, ds []store.Delivery) []store.Delivery {
	var keep, release []store.Delivery
	w.mu.Lock()
	for _, d := range ds {
		if w.inflight[d.Endpoint.ID] >= w.perEndpoint() {
			release = append(release, d)
			continue
		}
		w.inflight[d.Endpoint.ID]++
		keep = append(keep, d)
	}
	w.mu.Unlock()
	if len(release) > 0 {
		if err := w.cfg.DB.ReleaseDeliveries(ctx, release); err != nil {
			// Their lease ends and they are claimed again.
			w.log.Warn("delivery: could not release claims", "deliveries", len(release), "err", err)
		}
	}
	return keep
}

// done counts an endpoint's attempt out of flight.
func (w *Worker) done(d store.Delivery) {
	if d.Endpoint == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.inflight[d.Endpoint.ID]--; w.inflight[d.Endpoint.ID] <= 0 {
		delete(w.inflight, d.Endpoint.ID)
	}
}

// attemptSlack is how long an attempt may last beyond Timeout: reading the
// lead, composing the message. recordTimeout bounds recording its result,
// which does not share the attempt's deadline: a message sent at the last
// moment is still recorded as sent, not sent again.
const (
	attemptSlack  = 5 * time.Second
	recordTimeout = 5 * time.Second
)

// start sends each delivery in its own goroutine, holding a slot.
func (w *Worker) start(ds []store.Delivery) {
	for _, d := range ds {
		w.slots <- struct{}{}
		w.wg.Go(func() {
			defer func() {
				w.done(d)
				<-w.slots
				w.Wake()
			}()
			// An attempt outlives a stopping Run: it is bounded by Timeout,
			// and its result saves a retry of its delivery.
			ctx, cancel := context.WithTimeout(context.Background(), w.cfg.Timeout+attemptSlack)
			defer cancel()
			w.deliver(ctx, d)
		})
	}
}

// deliver makes one attempt of d and records it.
func (w *Worker) deliver(ctx context.Context, d store.Delivery) {
	var r store.DeliveryResult
	if d.Endpoint != nil {
		r = w.sendWebhook(ctx, d)
	} else {
		r = w.sendEmail(ctx, d)
	}
	r.SiteID, r.ID, r.Attempt = d.SiteID, d.ID, d.Attempt
	if d.Endpoint != nil {
		r.EndpointID = d.Endpoint.ID
	}
	// No attempt starts later than RetryFor after the event (as
	// webhook.NextAttempt says): a retry due after that is given up now.
	if r.State == store.DeliveryPending && r.RetryAt.After(d.CreatedAt.Add(webhook.RetryFor)) {
		r.State = store.DeliveryFailed
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	disabled, err := w.cfg.DB.FinishDelivery(rctx, r)
	if err != nil {
		// The claim's lease ends and another attempt is made.
		w.log.Warn("delivery: could not record an attempt", "delivery", d.ID, "err", err)
		return
	}
	kind := "email"
	if d.Endpoint != nil {
		kind = "webhook"
	}
	switch r.State {
	case store.DeliveryDelivered:
		metricDelivered.Inc()
		metricLag.Update(time.Since(d.CreatedAt).Seconds())
	case store.DeliveryPending:
		metricRetried.Inc()
		w.log.Warn("delivery: attempt failed, will retry", "kind", kind, "delivery", d.ID, "event", d.EventType,
			"attempt", d.Attempt, "status", r.Status, "err", r.Error, "retry_in", time.Until(r.RetryAt).Round(time.Second).String())
	case store.DeliveryFailed:
		metricFailed.Inc()
		w.log.Warn("delivery: given up", "kind", kind, "delivery", d.ID, "event", d.EventType,
			"attempt", d.Attempt, "status", r.Status, "err", r.Error)
	case store.DeliveryHeld:
		metricHeld.Inc()
	case store.DeliverySkipped:
		metricSkipped.Inc()
		w.log.Info("delivery: nothing to send", "kind", kind, "delivery", d.ID, "reason", r.Error)
	}
	if disabled {
		metricDisabled.Inc()
		w.log.Warn("delivery: webhook endpoint disabled: it kept failing", "endpoint", r.EndpointID,
			"after", store.DisableAfter.String())
	}
}

// retry returns the result of a failed attempt that may be retried: after
// the backoff for its attempt, or after the receiver's Retry-After when
// that is longer.
func retry(attempt int, retryAfter time.Duration) time.Time {
	d := webhook.Backoff(attempt)
	if retryAfter > d {
		d = retryAfter
	}
	return time.Now().Add(d)
}

// responseHead is how much of an answer the log keeps.
const responseHead = 512

// sendWebhook posts d to its endpoint.
func (w *Worker) sendWebhook(ctx context.Context, d store.Delivery) store.DeliveryResult {
	ep := d.Endpoint
	if !ep.Enabled {
		return store.DeliveryResult{State: store.DeliveryHeld}
	}
	body := d.Body
	var r store.DeliveryResult
	if body == nil {
		b, err := w.webhookBody(ctx, d)
		if store.IsNotFound(err) {
			return store.DeliveryResult{State: store.DeliverySkipped, Error: "the lead no longer exists"}
		}
		if err != nil {
			return store.DeliveryResult{State: store.DeliveryPending, RetryAt: retry(d.Attempt, 0), Error: err.Error()}
		}
		body, r.Body = b, b
	}
	now := time.Now()
	secrets := []string{webhook.DeriveSecret(w.cfg.SecretKey, ep.ID, ep.SecretGen)}
	if ep.PrevSecretUntil != nil && now.Before(*ep.PrevSecretUntil) && ep.SecretGen > 1 {
		secrets = append(secrets, webhook.DeriveSecret(w.cfg.SecretKey, ep.ID, ep.SecretGen-1))
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ep.URL, bytesReader(body))
	if err != nil {
		r.State, r.Error = store.DeliveryFailed, "bad endpoint URL: "+err.Error()
		return r
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "Listgate-Webhooks/1")
	if err := webhook.SetHeaders(req.Header, secrets, MessageID(d.EventID), now, body); err != nil {
		r.State, r.Error = store.DeliveryFailed, err.Error()
		return r
	}
	r.Attempted = true
	resp, err := w.cfg.Client.Do(req)
	r.Latency = time.Since(now)
	if err != nil {
		r.State, r.RetryAt, r.Error = store.DeliveryPending, retry(d.Attempt, 0), describe(err)
		return r
	}
	head, _ := io.ReadAll(io.LimitReader(resp.Body, responseHead))
	// Drain a little more so the connection may be reused, no more.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	r.Status, r.Response = resp.StatusCode, string(head)
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		r.State = store.DeliveryDelivered
		return r
	}
	ra, _ := webhook.ParseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
	r.State, r.RetryAt = store.DeliveryPending, retry(d.Attempt, ra)
	r.Error = "HTTP " + strconv.Itoa(resp.StatusCode)
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		r.Error += ": redirects are not followed"
	}
	return r
}

// MessageID is the webhook-id of every delivery of the outbox event id.
func MessageID(eventID int64) string { return "msg_" + strconv.FormatInt(eventID, 10) }

// describe is an attempt's error for the log, without the URL (whose query
// may hold a receiver's token).
func describe(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "timed out"
	}
	return err.Error()
}

// listen wakes Run on each notification of new deliveries, from a
// connection of its own, reconnecting with a backoff.
func (w *Worker) listen(ctx context.Context) {
	for failures := 0; ctx.Err() == nil; failures++ {
		if failures > 0 {
			select {
			case <-ctx.Done():
				return
			case <-time.After(min(time.Duration(failures)*500*time.Millisecond, 5*time.Second)):
			}
		}
		err := w.listenOnce(ctx)
		if ctx.Err() == nil {
			w.log.Debug("delivery: notification connection lost; polling meanwhile", "err", err)
		}
	}
}

func (w *Worker) listenOnce(ctx context.Context) error {
	conn, err := w.cfg.DB.ListenDeliveries(ctx)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	// Anything queued before the LISTEN is found by the next claim.
	w.Wake()
	for {
		if _, err := conn.WaitForNotification(ctx); err != nil {
			if pgconn.Timeout(err) {
				continue
			}
			return fmt.Errorf("wait for notification: %w", err)
		}
		w.Wake()
	}
}

// ClientOptions are the webhook client's options for the operator's
// webhook_allow_targets: "public" (or ""), "loopback" or "private".
func ClientOptions(allow string, timeout time.Duration) webhook.ClientOptions {
	return webhook.ClientOptions{Timeout: timeout,
		AllowLoopback: allow == "loopback" || allow == "private", AllowPrivate: allow == "private"}
}
