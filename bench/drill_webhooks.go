package main

import (
	"context"
	"fmt"
	"time"
)

// drillWebhookOutage is a webhook receiver going away under a steady
// stream of leads, and an origin crashing while it comes back: leads at
// p.hookRate per second through the edge throughout; the receiver answers
// normally for p.pre, then refuses connections (listener and connections
// closed) for p.hookOutage, then answers each webhook only after
// p.hookDelay (under the origin's webhook timeout) for p.hookSlow, then
// normally again for p.post. Once webhooks are being held by the slow
// receiver, the origin is killed with SIGKILL (its claims wait for their
// lease to end), kept down for p.down and started again. When the leads
// stop, it waits (at most p.hookWait) for every acknowledged lead to have
// arrived, then for every delivery to be settled. It fails when an
// acknowledged lead never arrives, a lead arrives under two webhook-ids, a
// webhook fails verification, no webhook was in flight at the kill, or a
// lead is lost or stored twice.
func drillWebhookOutage(ctx context.Context, p drillParams) (map[string]any, string, error) {
	rig, err := startWebhookRig(ctx, systemOptions{Webhooks: true, OriginConfig: p.hookOriginConfig}, "drill webhook-outage leads")
	if err != nil {
		return nil, "", err
	}
	defer rig.close()
	pl := startPacedLeads(rig.d, p.hookRate, p.pre+p.hookOutage+p.hookSlow+p.post, rig.key)
	defer pl.halt()
	tl, err := webhookOutage(rig, p)
	if err != nil {
		return nil, "", err
	}

	results := pl.wait()
	tl.leadsDone = time.Now()
	acked := ackedLeads(results)
	missing := rig.rv.awaitLeads(acked, p.hookWait)
	tl.allArrived = time.Now()
	// Then for the deliveries still pending (their webhook arrived, but the
	// killed origin never read the answer) to be sent again: the
	// duplicates they make are counted.
	pending, err := awaitSettled(ctx, rig.sys.dbURL, rig.endpoint, max(p.hookWait-time.Since(tl.leadsDone), 0))
	if err != nil {
		return nil, "", err
	}
	tl.settled = time.Now()
	arrivals, rejected, examples, cut := rig.rv.snapshot()
	dc := checkDeliveries(acked, arrivals, rejected)
	lc, err := checkLeads(ctx, rig.sys.dbURL, rig.sys.siteID, results)
	if err != nil {
		return nil, "", err
	}
	att, err := deliveryAttempts(ctx, rig.sys.dbURL, rig.endpoint, 0)
	if err != nil {
		return nil, "", err
	}
	m, err := scrapeMetrics(ctx, rig.sys.origin.URL())
	if err != nil {
		return nil, "", err
	}
	fromReopen, fromNormal := dc.Last.Sub(tl.reopened).Seconds(), dc.Last.Sub(tl.normal).Seconds()
	data := tl.data()
	for k, v := range map[string]any{"rate": p.hookRate, "outage_s": p.hookOutage.Seconds(), "slow_s": p.hookSlow.Seconds(),
		"answer_delay_s": p.hookDelay.Seconds(), "origin_config": p.hookOriginConfig, "answers_cut": cut,
		"missing_after_wait": missing, "pending_after_wait": pending,
		"last_delivery_after_reopen_s": fromReopen, "last_delivery_after_normal_s": fromNormal,
		"leads": lc, "deliveries": dc, "attempts": att, "late": pl.late.Load(),
		"restarted_origin_deliveries": deliveryCounters(m), "rejected_examples": examples} {
		data[k] = v
	}
	line := fmt.Sprintf("%.0f leads/s; receiver refusing %v, then answering after %v for %v; origin killed with %d webhooks in flight, back %.1f s later: ",
		p.hookRate, p.hookOutage, p.hookDelay, p.hookSlow, tl.inFlight, tl.restarted.Sub(tl.killed).Seconds())
	line += fmt.Sprintf("%d acknowledged leads, %d delivered, %d never delivered, %d under two webhook-ids, %d duplicates with the same id (%d answers cut by the kill); ",
		dc.Acked, dc.Delivered, dc.Lost, dc.MultiID, dc.SameID, cut)
	line += fmt.Sprintf("every lead delivered %.1f s after the receiver accepted again (%.1f s after it answered promptly), every delivery settled %.1f s after it accepted again (%d still pending); attempts per delivery %s; leads: %s",
		fromReopen, fromNormal, tl.settled.Sub(tl.reopened).Seconds(), pending, att, lc)
	if err := dc.err(); err != nil {
		return data, line, err
	}
	if tl.inFlight == 0 {
		return data, line, fmt.Errorf("no webhook was in flight when the origin was killed")
	}
	return data, line, lc.err()
}

// outageTimeline is when each step of the webhook-outage drill happened.
type outageTimeline struct {
	start, refused, reopened, killed, restarted, normal time.Time
	leadsDone, allArrived, settled                      time.Time
	// inFlight is how many webhooks the slow receiver held at the kill.
	inFlight int64
}

// data is the timeline in seconds from the start, for the results.
func (tl outageTimeline) data() map[string]any {
	at := func(t time.Time) float64 { return t.Sub(tl.start).Seconds() }
	return map[string]any{"refused_at_s": at(tl.refused), "reopened_at_s": at(tl.reopened), "killed_at_s": at(tl.killed),
		"restarted_at_s": at(tl.restarted), "normal_at_s": at(tl.normal), "leads_done_at_s": at(tl.leadsDone),
		"all_arrived_at_s": at(tl.allArrived), "settled_at_s": at(tl.settled), "in_flight_at_kill": tl.inFlight}
}

// webhookOutage runs the drill's faults while the leads flow: the receiver
// normal, refusing, slow (the origin killed and restarted meanwhile), and
// normal again.
func webhookOutage(rig *webhookRig, p drillParams) (outageTimeline, error) {
	tl := outageTimeline{start: time.Now()}
	step := func(t *time.Time, format string, args ...any) {
		*t = time.Now()
		fmt.Printf("drills: webhook-outage: %.1f s: %s\n", t.Sub(tl.start).Seconds(), fmt.Sprintf(format, args...))
	}
	time.Sleep(p.pre)
	rig.rv.refuse()
	step(&tl.refused, "the receiver refuses connections")
	time.Sleep(p.hookOutage)

	rig.rv.setDelay(p.hookDelay)
	if err := rig.rv.open(); err != nil {
		return tl, err
	}
	step(&tl.reopened, "the receiver accepts connections again, answering after %v", p.hookDelay)
	// The origin dies once webhooks are held by the slow receiver.
	tl.inFlight = rig.rv.awaitInFlight(8, min(p.hookSlow/2, p.hookDelay))
	rig.sys.killOrigin()
	step(&tl.killed, "origin killed with %d webhooks in flight", tl.inFlight)
	time.Sleep(p.down)
	if err := rig.sys.restartOrigin(); err != nil {
		return tl, err
	}
	step(&tl.restarted, "origin started again")
	if rest := p.hookSlow - time.Since(tl.reopened); rest > 0 {
		time.Sleep(rest)
	}
	rig.rv.setDelay(0)
	step(&tl.normal, "the receiver answers at once")
	return tl, nil
}
