package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

func init() {
	scenarios["views"] = benchViews
	plans["views"] = func(q bool) time.Duration {
		d, r, counted := 5*time.Second, 2, 8*time.Second
		if q {
			d, r, counted = 2*time.Second, 1, 2*time.Second
		}
		// Two wrk targets a round, the counted phase, the final flush.
		return systemSetup + time.Duration(2*r)*d + counted
	}
}

// viewsScript sends view beacons as a page's sendBeacon does (text/plain
// JSON, the beacon id in the query), cycling over the site's listings and
// over 1,000 browsers (User-Agents), so unique visitors are told apart too.
const viewsScript = `
local refs = {%s}
local counter = 0
request = function()
  counter = counter + 1
  local ref = refs[(counter %% #refs) + 1]
  return wrk.format("POST", "/v1/sites/%s/views?k=%s",
    {["Content-Type"] = "text/plain;charset=UTF-8",
     ["User-Agent"] = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 Chrome/131.0 Safari/537.36 bench/" .. (counter %% 1000)},
    '{"listing": ' .. ref .. ', "path": "/property/' .. ref .. '"}')
end
`

// benchViews measures listing view beacons through the edge (answered from
// memory, counted, reported in batches) against the edge's cached listing
// page (edge-hit) in the same run, with the same wrk settings, alternating.
// Then it checks the counts: a phase of beacons each answered (a closed
// loop of a fixed number, none cut off) must add exactly that many views in
// Postgres after the edge's final flush (SIGTERM), and every beacon the
// edge counted in the whole run (its listgate_edge_view_beacons_total) must
// be in Postgres. The scenario fails otherwise.
func benchViews(args []string) error {
	fs := flag.NewFlagSet("views", flag.ContinueOnError)
	dur := fs.Duration("duration", def(5*time.Second, 2*time.Second), "duration of each wrk run")
	conns := fs.Int("connections", 64, "wrk connections")
	rounds := fs.Int("rounds", def(2, 1), "alternating rounds")
	counted := fs.Int("counted", def(50_000, 5_000), "beacons of the exactly counted phase")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ctx := context.Background()
	// wrk sends every beacon from 127.0.0.1: the per-address cap (60 a
	// minute by default) is lifted, as if the beacons came from many
	// visitors. Reports every second.
	sys, err := startSystemWith(ctx, systemOptions{EdgeConfig: "views_interval: 1s\nviews_client_limit: 1000000000\n"})
	if err != nil {
		return err
	}
	defer sys.close()
	edge := sys.edge
	var b struct {
		BeaconID string `json:"beacon_id"`
	}
	if err := sys.cli(ctx, &b, "sites", "beacon-id", sys.siteID, "--json"); err != nil {
		return err
	}
	page, err := fetch(edge.URL()+"/v1/sites/"+sys.siteID+"/listings?per_page=20", "Bearer "+sys.readKey)
	if err != nil {
		return err
	}
	var listings struct {
		Data []struct {
			ListingRef int64 `json:"listing_ref"`
		}
	}
	if err := json.Unmarshal([]byte(page), &listings); err != nil || len(listings.Data) == 0 {
		return fmt.Errorf("views: no listings to view (%v)", err)
	}
	var refs []string
	for _, l := range listings.Data {
		refs = append(refs, fmt.Sprint(l.ListingRef))
	}
	script := filepath.Join(sys.dir, "views.lua")
	if err := os.WriteFile(script, []byte(fmt.Sprintf(viewsScript, strings.Join(refs, ","), sys.siteID, b.BeaconID)), 0o644); err != nil {
		return err
	}
	hitPath := "/v1/sites/" + sys.siteID + "/listings?per_page=4"
	if _, err := fetch(edge.URL()+hitPath, "Bearer "+sys.readKey); err != nil { // cached from here on
		return err
	}

	fmt.Printf("views: beacons vs the cached listing page, wrk -t2 -c%d -d%v, %d alternating rounds\n", *conns, *dur, *rounds)
	best := map[string]wrkResult{}
	var wrkAcked int
	for round := 1; round <= *rounds; round++ {
		for _, t := range []struct{ name, script string }{{"edge-hit", ""}, {"views", script}} {
			url, headers := edge.URL()+hitPath, []string{"Authorization: Bearer " + sys.readKey}
			if t.script != "" {
				url, headers = edge.URL(), nil
			}
			r, err := runWrkScript(ctx, t.name, url, *dur, *conns, headers, t.script)
			if err != nil {
				return err
			}
			fmt.Printf("views: round %d  %s\n", round, r)
			if r.Non2xx > 0 {
				return fmt.Errorf("%s: %d of %d answers were not 2xx", t.name, r.Non2xx, r.Requests)
			}
			if t.name == "views" {
				wrkAcked += r.Requests
			}
			if r.RPS > best[t.name].RPS {
				best[t.name] = r
			}
		}
	}

	// The counted phase: a fixed number of beacons, each answered. It
	// starts once the edge has counted the last of wrk's beacons (those in
	// flight when wrk stopped): two reads of its counter alike, 200 ms apart.
	admin := edge.AdminURL()
	var before metricsSnapshot
	for last := -1.0; ; time.Sleep(200 * time.Millisecond) {
		if before, err = scrapeMetrics(ctx, admin); err != nil {
			return err
		}
		n := before.sum("listgate_edge_view_beacons_total")
		if n == last {
			break
		}
		last = n
	}
	res := closedLoop(ctx, *conns, 5*time.Minute, *counted, func(n int) *http.Request {
		body := fmt.Sprintf(`{"listing": %s}`, refs[n%len(refs)])
		req, _ := http.NewRequest("POST", edge.URL()+"/v1/sites/"+sys.siteID+"/views?k="+b.BeaconID, strings.NewReader(body))
		req.Header.Set("Content-Type", "text/plain")
		req.Header.Set("User-Agent", fmt.Sprintf("Mozilla/5.0 Chrome/131.0 counted/%d", n%500))
		return req
	}, nil)
	fmt.Printf("views: counted phase %s\n", res)
	if res.Requests != *counted || res.Statuses[204] != *counted {
		return fmt.Errorf("views: counted phase: %d of %d beacons answered 204 (%v)", res.Statuses[204], *counted, res.Statuses)
	}
	after, err := scrapeMetrics(ctx, admin)
	if err != nil {
		return err
	}
	edgeCounted := after.sum("listgate_edge_view_beacons_total", `outcome="counted"`)
	phaseCounted := edgeCounted - before.sum("listgate_edge_view_beacons_total", `outcome="counted"`)
	notCounted := after.sum("listgate_edge_view_beacons_total") - edgeCounted
	// The final flush: a SIGTERM'd edge reports what it counted.
	flushStart := time.Now()
	edge.Stop()
	flushTook := time.Since(flushStart)
	conn, err := pgx.Connect(ctx, sys.dbURL)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	var stored, visitors int64
	if err := conn.QueryRow(ctx, `SELECT coalesce(sum(views), 0), coalesce(sum(visitors), 0) FROM listing_views WHERE site_id = $1`,
		sys.siteID).Scan(&stored, &visitors); err != nil {
		return err
	}
	acked := int64(wrkAcked + res.Statuses[204])
	fmt.Printf("views: acknowledged %d (wrk %d, counted phase %d); the edge counted %.0f (%.0f in the counted phase), did not count %.0f; Postgres has %d views, %d unique visitors; stop and final flush %v\n",
		acked, wrkAcked, res.Statuses[204], edgeCounted, phaseCounted, notCounted, stored, visitors, flushTook.Round(time.Millisecond))
	switch {
	case phaseCounted != float64(*counted):
		return fmt.Errorf("views: the counted phase acknowledged %d beacons, the edge counted %.0f", *counted, phaseCounted)
	case float64(stored) != edgeCounted:
		return fmt.Errorf("views: the edge counted %.0f beacons, Postgres has %d views", edgeCounted, stored)
	case notCounted != 0:
		return fmt.Errorf("views: the edge left %.0f beacons uncounted", notCounted)
	// wrk reads the answers of the beacons it counts; those still in
	// flight when it stops (at most one a connection) were counted by the
	// edge and not by wrk.
	case stored < acked || stored > acked+int64(*conns**rounds):
		return fmt.Errorf("views: %d beacons acknowledged, Postgres has %d views", acked, stored)
	}

	e, v := best["edge-hit"], best["views"]
	summarize("views", "best of %d wrk rounds (-c%d -d%v): beacons %s/s, edge hit %s req/s; views/edge-hit = %s (goal ≥ 0.8); "+
		"%d beacons acknowledged, %d views in Postgres after the final flush (the edge counted %.0f; the %d of the counted phase exactly), %d unique visitors",
		*rounds, *conns, *dur, fmtRate(v.RPS), fmtRate(e.RPS), fmtRatio(v.RPS/e.RPS), acked, stored, edgeCounted, *counted, visitors)
	addTable("views", wrkTable(fmt.Sprintf("View beacons (text/plain JSON, %d listings, 1,000 browsers) against the cached listing page, `wrk -t2 -c%d -d%v`, best of %d alternating rounds:",
		len(refs), *conns, *dur, *rounds), []wrkResult{e, v}, 0))
	return writeResults("views", map[string]any{
		"connections": *conns, "duration_s": dur.Seconds(), "rounds": *rounds, "best": best,
		"views_over_edge_hit": v.RPS / e.RPS, "acknowledged": acked, "edge_counted": edgeCounted,
		"postgres_views": stored, "postgres_visitors": visitors, "counted_phase": *counted,
		"counted_phase_rps": res.rps(), "final_flush_ms": flushTook.Milliseconds(),
	})
}
