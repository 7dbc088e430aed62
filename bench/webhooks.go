package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

func init() {
	scenarios["webhooks"] = benchWebhooks
	plans["webhooks"] = func(q bool) time.Duration {
		if q {
			return systemSetup + time.Second + 10*time.Second + 3*time.Second
		}
		return systemSetup + 5*time.Second + 20*time.Second + 3*time.Second
	}
}

// benchWebhooks measures lead delivery (DESIGN.md §9, issue #16): leads
// at a fixed rate through the edge, each answered 201 with its lead id,
// and a webhook receiver in this process registered for the demo site's
// lead.created events. It reports the delay from each lead's 201 to its
// webhook's arrival, and fails when an acknowledged lead never arrives,
// arrives under two webhook-ids, a webhook fails verification, a lead is
// not acknowledged or not stored once, or (not under -quick, which checks
// only counts) the lag's p99 reaches -bound.
func benchWebhooks(args []string) error {
	fs := flag.NewFlagSet("webhooks", flag.ContinueOnError)
	rate := fs.Float64("rate", 200, "leads per second, sent on schedule (open model)")
	dur := fs.Duration("duration", def(20*time.Second, 10*time.Second), "how long leads are sent")
	warmup := fs.Duration("warmup", def(5*time.Second, time.Second), "leads at the rate before the measured ones, then ANALYZE (as in leads)")
	wait := fs.Duration("wait", def(30*time.Second, 15*time.Second), "how long to wait, after the last 201, for every webhook")
	bound := fs.Duration("bound", time.Second, "the lag's p99 must stay under this (not checked under -quick)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *rate <= 0 || *dur <= 0 {
		return fmt.Errorf("-rate and -duration must be positive")
	}
	ctx := context.Background()
	rig, err := startWebhookRig(ctx, systemOptions{Webhooks: true}, "bench webhooks leads")
	if err != nil {
		return err
	}
	defer rig.close()
	r, err := runWebhooks(ctx, rig, *rate, *dur, *warmup, *wait)
	if err != nil {
		return err
	}
	dc := r.deliveries
	summarize("webhooks", "%.0f leads/s for %v (sent over %.1f s, %d late by over %v): %d sent, %d acknowledged, %d delivered, %d never delivered, %d under two webhook-ids, %d duplicates with the same id",
		*rate, *dur, r.sentOver.Seconds(), r.late, pacedLateAfter, len(r.results), dc.Acked, dc.Delivered, dc.Lost, dc.MultiID, dc.SameID)
	if dc.Lag != nil {
		summarize("webhooks", "delivery lag, a lead's 201 to its webhook's arrival: p50 %s, p90 %s, p99 %s, max %s (min %s: a webhook can arrive before its 201); bound p99 < %v",
			fmtMs(dc.Lag["p50"]), fmtMs(dc.Lag["p90"]), fmtMs(dc.Lag["p99"]), fmtMs(dc.Lag["max"]), fmtMs(dc.Lag["min"]), *bound)
	}
	summarize("webhooks", "attempts per delivery: %s; the origin's own lag (delivery created to 2xx, listgate_origin_delivery_lag_seconds) mean %s",
		r.attempts, fmtMs(r.originLag))
	addTable("webhooks", webhooksTable(*rate, *dur, len(r.results), dc))
	data := map[string]any{"rate": *rate, "duration_s": dur.Seconds(), "warmup_s": warmup.Seconds(), "warmup_leads": len(r.warm),
		"sent_over_s": r.sentOver.Seconds(), "late": r.late, "leads": r.leads, "deliveries": dc, "attempts": r.attempts,
		"origin_lag_mean_ms": r.originLag, "origin_deliveries": r.counters, "missing_after_wait": r.missing,
		"rejected_examples": r.examples, "bound_ms": ms(*bound)}
	if err := writeResults("webhooks", data); err != nil {
		return err
	}
	if err := r.leads.err(); err != nil {
		return err
	}
	if err := dc.err(); err != nil {
		return err
	}
	if !quick && dc.Lag["p99"] >= ms(*bound) {
		return fmt.Errorf("delivery lag p99 %s, not under %v", fmtMs(dc.Lag["p99"]), *bound)
	}
	return nil
}

// webhookRun is what one run of the webhooks scenario measured.
type webhookRun struct {
	warm       map[int64]time.Time // the warm-up's acknowledged leads
	results    []leadResult        // the measured leads
	late       int64
	sentOver   time.Duration
	missing    int // acknowledged leads not arrived after the wait
	deliveries deliveryCheck
	leads      leadCheck
	attempts   attemptStats
	originLag  float64            // ms, mean
	counters   map[string]float64 // listgate_origin_deliveries_total by result
	examples   []string           // webhooks the receiver refused
}

// runWebhooks sends the warm-up's leads and waits for their webhooks, then
// ANALYZE, then the measured leads, waits for their webhooks, and checks.
func runWebhooks(ctx context.Context, rig *webhookRig, rate float64, dur, warmup, wait time.Duration) (r webhookRun, err error) {
	// The warm-up stands for a database that has taken leads and sent
	// webhooks before (see leads): its leads are delivered, then the
	// planner's statistics are brought up to date.
	if warmup > 0 {
		fmt.Printf("webhooks: warm-up, %.0f leads/s for %v\n", rate, warmup)
		r.warm = ackedLeads(startPacedLeads(rig.d, rate, warmup, rig.key).wait())
		if n := rig.rv.awaitLeads(r.warm, wait); n > 0 {
			return r, fmt.Errorf("warm-up: %d of %d acknowledged leads not delivered within %v", n, len(r.warm), wait)
		}
		if err := analyze(ctx, rig.sys.dbURL); err != nil {
			return r, err
		}
	}
	m0, err := scrapeMetrics(ctx, rig.sys.origin.URL())
	if err != nil {
		return r, err
	}
	fmt.Printf("webhooks: %.0f leads/s for %v to a receiver at %s\n", rate, dur, rig.rv.URL())
	pl := startPacedLeads(rig.d, rate, dur, rig.key)
	r.results = pl.wait()
	r.late, r.sentOver = pl.late.Load(), pl.end.Sub(pl.start)
	acked := ackedLeads(r.results)
	r.missing = rig.rv.awaitLeads(acked, wait)
	if _, err := awaitSettled(ctx, rig.sys.dbURL, rig.endpoint, wait); err != nil {
		return r, err
	}
	all, rejected, examples, _ := rig.rv.snapshot()
	var arrivals []webhookArrival
	for _, a := range all {
		if _, ok := r.warm[a.LeadID]; !ok {
			arrivals = append(arrivals, a)
		}
	}
	r.deliveries, r.examples = checkDeliveries(acked, arrivals, rejected), examples
	if r.leads, err = checkLeads(ctx, rig.sys.dbURL, rig.sys.siteID, r.results); err != nil {
		return r, err
	}
	var lastWarm int64
	for id := range r.warm {
		lastWarm = max(lastWarm, id)
	}
	if r.attempts, err = deliveryAttempts(ctx, rig.sys.dbURL, rig.endpoint, lastWarm); err != nil {
		return r, err
	}
	m, err := scrapeMetrics(ctx, rig.sys.origin.URL())
	if err != nil {
		return r, err
	}
	r.originLag, r.counters = originDeliveries(m0, m)
	fmt.Printf("webhooks: leads: %s\n", r.leads)
	fmt.Printf("webhooks: deliveries: %s\n", r.deliveries)
	return r, nil
}

// webhooksTable is the run's row for the report.
func webhooksTable(rate float64, dur time.Duration, sent int, dc deliveryCheck) reportTable {
	t := reportTable{Title: fmt.Sprintf("%.0f leads/s through the edge for %v, one webhook endpoint (a receiver in the bench process); lag from each lead's 201 to its webhook's arrival:", rate, dur),
		Header: []string{"sent", "acknowledged", "delivered", "never delivered", "under two ids", "same-id duplicates", "lag p50", "p90", "p99", "max"}}
	row := []string{fmt.Sprint(sent), fmt.Sprint(dc.Acked), fmt.Sprint(dc.Delivered), fmt.Sprint(dc.Lost),
		fmt.Sprint(dc.MultiID), fmt.Sprint(dc.SameID), "", "", "", ""}
	if dc.Lag != nil {
		row[6], row[7], row[8], row[9] = fmtMs(dc.Lag["p50"]), fmtMs(dc.Lag["p90"]), fmtMs(dc.Lag["p99"]), fmtMs(dc.Lag["max"])
	}
	t.Rows = append(t.Rows, row)
	return t
}

// webhookRig is a system with webhooks on, a receiver registered for its
// demo site's lead.created events, a leads:write key and a driver through
// its edges.
type webhookRig struct {
	sys      *benchSystem
	rv       *webhookReceiver
	endpoint string // the webhook endpoint's id
	key      string
	d        *driver
}

// startWebhookRig starts the system o describes (o.Webhooks must be set),
// the receiver, and registers it.
func startWebhookRig(ctx context.Context, o systemOptions, keyName string) (r *webhookRig, err error) {
	r = &webhookRig{}
	defer func() {
		if err != nil {
			r.close()
		}
	}()
	if r.sys, err = startSystemWith(ctx, o); err != nil {
		return nil, err
	}
	if r.rv, err = startWebhookReceiver(); err != nil {
		return nil, err
	}
	id, secret, err := r.sys.createWebhook(ctx, r.rv.URL())
	if err != nil {
		return nil, err
	}
	r.endpoint = id
	r.rv.setSecret(secret)
	if _, r.key, err = createKey(ctx, r.sys, keyName, "leads:write"); err != nil {
		return nil, err
	}
	r.d = newDriver(r.sys.edgeURLs())
	return r, nil
}

func (r *webhookRig) close() {
	if r.d != nil {
		r.d.close()
	}
	if r.rv != nil {
		r.rv.close()
	}
	if r.sys != nil {
		r.sys.close()
	}
}

// attemptStats is what the deliveries table says of an endpoint's
// deliveries: their states and how many attempts each took (the attempts
// column counts every claim, an attempt an origin died in included).
type attemptStats struct {
	States   map[string]int `json:"states"`
	Attempts map[int]int    `json:"attempts"` // attempts → deliveries
	Mean     float64        `json:"mean"`
	Max      int            `json:"max"`
}

func (a attemptStats) String() string {
	return fmt.Sprintf("mean %.2f, max %d (attempts → deliveries %v; states %v)", a.Mean, a.Max, a.Attempts, a.States)
}

// deliveryAttempts reads the endpoint's deliveries of the leads after lead
// id after (0: all).
func deliveryAttempts(ctx context.Context, dbURL, endpoint string, after int64) (attemptStats, error) {
	a := attemptStats{States: map[string]int{}, Attempts: map[int]int{}}
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return a, err
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT state, attempts, count(*) FROM deliveries WHERE endpoint_id = $1 AND lead_id > $2 GROUP BY 1, 2`,
		endpoint, after)
	if err != nil {
		return a, fmt.Errorf("deliveries of endpoint %s: %w", endpoint, err)
	}
	defer rows.Close()
	total, n := 0, 0
	for rows.Next() {
		var state string
		var attempts, count int
		if err := rows.Scan(&state, &attempts, &count); err != nil {
			return a, err
		}
		a.States[state] += count
		a.Attempts[attempts] += count
		total += attempts * count
		n += count
		a.Max = max(a.Max, attempts)
	}
	if err := rows.Err(); err != nil {
		return a, err
	}
	if n > 0 {
		a.Mean = float64(total) / float64(n)
	}
	return a, nil
}

// awaitSettled waits until none of the endpoint's deliveries is pending
// (each delivered, or given up), or d has passed, and returns how many are
// still pending: a delivery whose webhook arrived but whose answer the
// origin never read (it died) stays pending until its lease ends and it is
// sent again.
func awaitSettled(ctx context.Context, dbURL, endpoint string, d time.Duration) (int, error) {
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return 0, err
	}
	defer conn.Close(ctx)
	deadline := time.Now().Add(d)
	for {
		var n int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM deliveries WHERE endpoint_id = $1 AND state = 'pending'`,
			endpoint).Scan(&n); err != nil {
			return 0, fmt.Errorf("pending deliveries of endpoint %s: %w", endpoint, err)
		}
		if n == 0 || time.Now().After(deadline) {
			return n, nil
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// deliveryCounters is an origin's listgate_origin_deliveries_total by result.
func deliveryCounters(m metricsSnapshot) map[string]float64 {
	out := map[string]float64{}
	for _, r := range []string{"delivered", "retry", "failed", "held", "skipped"} {
		out[r] = m.sum("listgate_origin_deliveries_total", fmt.Sprintf("result=%q", r))
	}
	return out
}

// originDeliveries is what an origin's metrics say of the deliveries
// between two scrapes: the mean of listgate_origin_delivery_lag_seconds (from a
// delivery's creation to its 2xx) in milliseconds, and
// listgate_origin_deliveries_total by result.
func originDeliveries(before, after metricsSnapshot) (lagMeanMS float64, counters map[string]float64) {
	if n := after.sum("listgate_origin_delivery_lag_seconds_count") - before.sum("listgate_origin_delivery_lag_seconds_count"); n > 0 {
		lagMeanMS = 1000 * (after.sum("listgate_origin_delivery_lag_seconds_sum") - before.sum("listgate_origin_delivery_lag_seconds_sum")) / n
	}
	counters, c0 := deliveryCounters(after), deliveryCounters(before)
	for k := range counters {
		counters[k] -= c0[k]
	}
	return lagMeanMS, counters
}
