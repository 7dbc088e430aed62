package main

import (
	"context"
	"fmt"
	"time"
)

// drillOriginRestart kills the origin (SIGKILL) under a steady load of
// cached reads and lead submissions through the edge, keeps it down for
// p.down, and starts it again on the same address. It checks that every
// cached read succeeded throughout, that writes during the outage got 503
// (never a 500) and were retried until acknowledged, and that every
// acknowledged lead is in Postgres exactly once.
func drillOriginRestart(ctx context.Context, p drillParams) (map[string]any, string, error) {
	sys, err := startSystemWith(ctx, systemOptions{})
	if err != nil {
		return nil, "", err
	}
	defer sys.close()
	d := newDriver(sys.edgeURLs())
	defer d.close()
	paths := cachedPaths(sys.siteID)
	if err := d.warm(paths, sys.readKey); err != nil {
		return nil, "", err
	}
	total := p.pre + p.down + p.post + 30*time.Second // bounds; halted sooner
	reads := startLoad(p.readWorkers, total, 10_000_000, func(i int64) {
		d.get("read", paths[i%int64(len(paths))], sys.readKey)
	})
	leads := startLeads(d, p.leadWorkers, total, sys.leadKey)

	time.Sleep(p.pre) // the load phase before the fault
	killAt := time.Now()
	sys.killOrigin()
	// A probe sends a write every 20 ms from the kill until one is
	// acknowledged: when writes work again, free of the lead workers'
	// Retry-After back-off.
	probec := make(chan []leadResult, 1)
	go func() { probec <- d.probeWrites(sys.leadKey, p.down+30*time.Second) }()
	time.Sleep(p.down) // the outage
	restartAt := time.Now()
	restartErr := sys.restartOrigin()
	upAt := time.Now()
	probes := <-probec
	ack := probes[len(probes)-1]
	if ack.acked {
		time.Sleep(p.post) // the load phase after recovery
	}
	reads.halt()
	results := leads.halt()
	if restartErr != nil {
		return nil, "", restartErr
	}

	ss := d.rec.all()
	// What was answered while the origin was away.
	outage := func(s sample) bool { return between(s.end, killAt, upAt) }
	write := func(s sample) bool { return s.kind == "lead" || s.kind == "probe" }
	readsDown := statusCounts(ss, func(s sample) bool { return s.kind == "read" && outage(s) })
	readsAll := statusCounts(ss, func(s sample) bool { return s.kind == "read" })
	cacheDown := map[string]int{}
	for _, s := range ss {
		if s.kind == "read" && outage(s) {
			cacheDown[s.cache]++
		}
	}
	writesDown := statusCounts(ss, func(s sample) bool { return write(s) && outage(s) })
	lc, err := checkLeads(ctx, sys.dbURL, sys.siteID, append(results, acknowledged(probes)...))
	if err != nil {
		return nil, "", err
	}
	okDown, nDown := readsDown[200], sumCounts(readsDown)
	bad := count5xx(ss, true)
	data := map[string]any{
		"down_ms":                 msSince(killAt, restartAt),
		"origin_start_ms":         msSince(restartAt, upAt),
		"reads_during_outage":     readsDown,
		"reads_success_ratio":     ratio(okDown, nDown),
		"reads_x_cache_outage":    cacheDown,
		"reads":                   readsAll,
		"writes_during_outage":    writesDown,
		"writes_503_outage":       writesDown[503],
		"writes":                  statusCounts(ss, write),
		"write_probes":            len(probes),
		"leads":                   lc,
		"five_xx_other_than_503":  bad,
		"transport_errors":        errorsByKind(ss, func(sample) bool { return true }),
		"recovered":               ack.acked,
		"recovered_after_kill_ms": msSince(killAt, ack.at),
		"recovered_after_up_ms":   msSince(upAt, ack.at),
	}
	line := fmt.Sprintf("origin down %.1f s: cached reads %d/%d ok during the outage (%.1f%%, X-Cache %v), %d writes answered 503 during it; writes work again %.0f ms after the origin listens (%.1f s after the kill); %s",
		msSince(killAt, upAt)/1000, okDown, nDown, 100*ratio(okDown, nDown), cacheDown, writesDown[503],
		msSince(upAt, ack.at), msSince(killAt, ack.at)/1000, lc)
	switch {
	case !ack.acked:
		return data, line, fmt.Errorf("no write acknowledged within 30 s of the origin's restart")
	case nDown == 0:
		return data, line, fmt.Errorf("no cached read ran during the outage")
	case okDown != nDown || readsAll[200] != sumCounts(readsAll):
		return data, line, fmt.Errorf("cached reads failed: %v during the outage, %v in all", readsDown, readsAll)
	case writesDown[503] == 0:
		return data, line, fmt.Errorf("no write saw the outage (writes answered during it: %v)", writesDown)
	case len(bad) > 0:
		return data, line, fmt.Errorf("5xx other than 503: %v", bad)
	}
	return data, line, lc.err()
}

// drillPostgresRestart restarts Postgres (fast shutdown, then the same data
// directory on the same port) under a load of uncached reads and lead
// submissions through the edge. The origin is not restarted: it must
// answer 503 (never 500) while the database is away and recover by itself.
// It measures the time from Postgres answering again to the first 2xx the
// origin produces, and checks the leads as the origin drill does. Then it
// revokes a key to check that the origin's event stream (LISTEN/NOTIFY)
// came back too.
func drillPostgresRestart(ctx context.Context, p drillParams) (map[string]any, string, error) {
	sys, err := startSystemWith(ctx, systemOptions{})
	if err != nil {
		return nil, "", err
	}
	defer sys.close()
	d := newDriver(sys.edgeURLs())
	defer d.close()
	// A key to revoke after recovery, known to the edge.
	revKeyID, revKey, err := sys.newKey(ctx, sys.siteID, "listings:read")
	if err != nil {
		return nil, "", err
	}
	probe := "/v1/sites/" + sys.siteID + "/listings"
	if err := d.warm([]string{probe}, revKey); err != nil {
		return nil, "", err
	}

	total := p.pre + p.down + p.post + 60*time.Second
	reads := startLoad(p.readWorkers, total, 10_000_000, func(i int64) {
		d.get("read", uncachedPath(sys.siteID, i), sys.readKey)
	})
	leads := startLeads(d, p.leadWorkers, total, sys.leadKey)

	time.Sleep(p.pre)
	stopAt := time.Now()
	sys.stopPostgres()
	stoppedAt := time.Now()
	// Writes every 20 ms until one is acknowledged (see drillOriginRestart).
	probec := make(chan []leadResult, 1)
	go func() { probec <- d.probeWrites(sys.leadKey, p.down+30*time.Second) }()
	time.Sleep(p.down)
	restartAt := time.Now()
	// The first read answered 200 of those sent after the restart began
	// (none can succeed before Postgres answers).
	w := d.rec.watch(func(s sample) bool {
		return s.kind == "read" && s.status == 200 && !s.start.Before(restartAt)
	})
	restartErr := sys.restartPostgres(ctx)
	backAt := time.Now()
	first, recovered := d.rec.wait(w, 30*time.Second)
	probes := <-probec
	ack := probes[len(probes)-1]
	if recovered && ack.acked {
		time.Sleep(p.post)
	}
	reads.halt()
	results := leads.halt()
	if restartErr != nil {
		return nil, "", restartErr
	}
	select {
	case <-sys.origin.Done():
		return nil, "", fmt.Errorf("the origin exited during the drill:\n%s", sys.origin.Logs())
	default:
	}

	// The event stream after the restart: it reconnects by itself, and then
	// a revocation reaches the edge. The revocation bound is for a connected
	// stream; how long the reconnection took is reported beside it.
	streamAt := time.Now()
	if err := awaitStreamConnected(ctx, sys.edgeAdminURLs()[0], 15*time.Second); err != nil {
		return nil, "", err
	}
	streamWait := msSince(streamAt, time.Now())
	revoked, err := revokeAndAwait(ctx, sys, d, 0, revKeyID, revKey, probe, 5*time.Second)
	if err != nil {
		return nil, "", err
	}

	ss := d.rec.all()
	down := func(s sample) bool { return between(s.end, stopAt, backAt) } // answered while it was away
	write := func(s sample) bool { return s.kind == "lead" || s.kind == "probe" }
	readsDown := statusCounts(ss, func(s sample) bool { return s.kind == "read" && down(s) })
	writesDown := statusCounts(ss, func(s sample) bool { return write(s) && down(s) })
	lc, err := checkLeads(ctx, sys.dbURL, sys.siteID, append(results, acknowledged(probes)...))
	if err != nil {
		return nil, "", err
	}
	bad := count5xx(ss, true)
	data := map[string]any{
		"stop_ms":                      msSince(stopAt, stoppedAt),
		"down_ms":                      msSince(stopAt, backAt),
		"postgres_start_ms":            msSince(restartAt, backAt),
		"reads_while_down":             readsDown,
		"writes_while_down":            writesDown,
		"reads":                        statusCounts(ss, func(s sample) bool { return s.kind == "read" }),
		"writes":                       statusCounts(ss, write),
		"write_probes":                 len(probes),
		"five_xx_other_than_503":       bad,
		"transport_errors":             errorsByKind(ss, func(sample) bool { return true }),
		"leads":                        lc,
		"recovered":                    recovered,
		"stream_wait_before_revoke_ms": streamWait,
		"revocation_after_restart_ms": func() any {
			if revoked < 0 {
				return nil
			}
			return revoked
		}(),
	}
	if recovered {
		data["first_read_after_postgres_ms"] = msSince(backAt, first.end)
	}
	if ack.acked {
		data["first_write_after_postgres_ms"] = msSince(backAt, ack.at)
	}
	line := fmt.Sprintf("Postgres down %.1f s: %d reads and %d writes answered 503 meanwhile, 5xx other than 503: %v; first uncached read 200 %.0f ms and first write 201 %.0f ms after Postgres answered, origin not restarted; %s; a revocation then reached the edge in %.0f ms",
		msSince(stopAt, backAt)/1000, readsDown[503], writesDown[503], bad,
		msSince(backAt, first.end), msSince(backAt, ack.at), lc, revoked)
	switch {
	case !recovered || !ack.acked:
		return data, line, fmt.Errorf("the origin did not answer 2xx within 30 s of Postgres coming back")
	case len(bad) > 0:
		return data, line, fmt.Errorf("5xx other than 503 (a 500 means an unavailable database was taken for a bug): %v", bad)
	case readsDown[503]+writesDown[503] == 0:
		return data, line, fmt.Errorf("no request saw Postgres down (reads %v, writes %v)", readsDown, writesDown)
	case revoked < 0 || revoked > 1000:
		return data, line, fmt.Errorf("after the restart a revoked key was still accepted %.0f ms after `origin keys revoke` returned", revoked)
	}
	return data, line, lc.err()
}

func sumCounts(m map[int]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// awaitStreamConnected waits until the edge's event stream is connected
// (its listgate_edge_eventstream_connected gauge, on its admin listener at
// adminURL), polling every 20 ms.
func awaitStreamConnected(ctx context.Context, adminURL string, d time.Duration) error {
	deadline := time.Now().Add(d)
	for {
		m, err := scrapeMetrics(ctx, adminURL)
		if err == nil && m.sum("listgate_edge_eventstream_connected") >= 1 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the edge's event stream did not reconnect within %v (last scrape error: %v)", d, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}
