package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

func init() {
	scenarios["edge-miss"] = benchEdgeMiss
	plans["edge-miss"] = func(q bool) time.Duration {
		d, r := 5*time.Second, 2
		if q {
			d, r = 2*time.Second, 1
		}
		return systemSetup + time.Duration(2*r)*d
	}
}

// missScript makes every request a URL no one asked for before: the same
// listing page as edge-hit's (per_page=4), with a max_price filter that
// every priced listing passes and that differs from request to request
// (per wrk thread, per request, and per run through wrk's argument), so
// the edge's cache never has it and forwards every request to the origin.
const missScript = `
local threads = 0
function setup(thread)
  thread:set("tid", threads)
  threads = threads + 1
end
function init(args)
  base = tonumber(args[1] or "0")
  counter = 0
end
function request()
  counter = counter + 1
  return wrk.format("GET", "/v1/sites/%s/listings?per_page=4&max_price=" .. (1000000000 + base + tid * 100000000 + counter))
end
`

// benchEdgeMiss measures authenticated reads that miss the edge's cache:
// the key check, scope and limit, a forward to the origin, Postgres, and
// storing the answer, against the origin answering the same requests
// directly. It counts the origin's requests (its /metrics) to show that
// every edge request was a miss forwarded once.
func benchEdgeMiss(args []string) error {
	fs := flag.NewFlagSet("edge-miss", flag.ContinueOnError)
	dur := fs.Duration("duration", def(5*time.Second, 2*time.Second), "duration of each wrk run")
	conns := fs.Int("connections", 64, "wrk connections")
	rounds := fs.Int("rounds", def(2, 1), "alternating rounds")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ctx := context.Background()
	sys, err := startSystem(ctx)
	if err != nil {
		return err
	}
	defer sys.close()
	script := filepath.Join(sys.dir, "miss.lua")
	if err := os.WriteFile(script, []byte(fmt.Sprintf(missScript, sys.siteID)), 0o644); err != nil {
		return err
	}
	// The page is a real one: check it through the edge once.
	probe := fmt.Sprintf("%s/v1/sites/%s/listings?per_page=4&max_price=999999999", sys.edge.URL(), sys.siteID)
	if page, err := fetch(probe, "Bearer "+sys.readKey); err != nil {
		return err
	} else if len(page) < 1000 {
		return fmt.Errorf("the miss page is almost empty: %s", page)
	}

	type run struct {
		name, url string
		headers   []string
	}
	runs := []run{
		{"edge-miss", sys.edge.URL(), []string{"Authorization: Bearer " + sys.readKey}},
		{"origin-direct", sys.origin.URL(), originIdentity(sys)},
	}
	fmt.Printf("edge-miss: every request a new URL, wrk -t2 -c%d -d%v, %d alternating rounds\n", *conns, *dur, *rounds)
	best := map[string]wrkResult{}
	originCount := map[string]float64{}
	var edgeReqs, edgeOriginReqs float64
	for round := 1; round <= *rounds; round++ {
		for i, r := range runs {
			before, err := scrapeMetrics(ctx, sys.origin.URL())
			if err != nil {
				return err
			}
			// A new base for every run: no URL is ever asked for twice.
			base := fmt.Sprint((round*len(runs) + i) * 10_000_000)
			res, err := runWrkArgs(ctx, r.name, r.url, *dur, *conns, r.headers, script, base)
			if err != nil {
				return err
			}
			after, err := scrapeMetrics(ctx, sys.origin.URL())
			if err != nil {
				return err
			}
			n := after.originRequests(routeListings) - before.originRequests(routeListings)
			fmt.Printf("edge-miss: round %d  %s, origin counted %.0f\n", round, res, n)
			if res.Non2xx > 0 {
				return fmt.Errorf("%s: %d of %d answers were not 2xx", r.name, res.Non2xx, res.Requests)
			}
			if r.name == "edge-miss" {
				edgeReqs += float64(res.Requests)
				edgeOriginReqs += n
				// Every completed request reached the origin once; requests
				// still in flight when wrk stopped reached it too.
				if n < float64(res.Requests)*0.99 || n > float64(res.Requests+*conns) {
					return fmt.Errorf("edge-miss: %d requests through the edge but %.0f at the origin: not all misses", res.Requests, n)
				}
			}
			if res.RPS > best[r.name].RPS {
				best[r.name] = res
				originCount[r.name] = n
			}
		}
	}
	e, o := best["edge-miss"], best["origin-direct"]
	summarize("edge-miss", "best of %d wrk rounds (-c%d -d%v): through the edge (all misses) %s req/s, origin direct %s; edge-miss/origin-direct = %s",
		*rounds, *conns, *dur, fmtRate(e.RPS), fmtRate(o.RPS), fmtRatio(e.RPS/o.RPS))
	summarize("edge-miss", "origin requests per edge request: %.3f (%.0f at the origin for %.0f through the edge)",
		edgeOriginReqs/edgeReqs, edgeOriginReqs, edgeReqs)
	addTable("edge-miss", wrkTable(fmt.Sprintf("A listing page (per_page=4) at a new URL each request, `wrk -t2 -c%d -d%v`, best of %d alternating rounds:",
		*conns, *dur, *rounds), []wrkResult{e, o}, 0))
	addBars("edge-miss", barChart{Name: "throughput", Title: fmt.Sprintf("Cache misses: edge → origin vs origin direct, wrk -c%d", *conns),
		Unit: "requests/s", Ref: 0, Bars: []chartBar{{"edge-miss", e.RPS}, {"origin-direct", o.RPS}}})
	return writeResults("edge-miss", map[string]any{
		"connections": *conns, "duration_s": dur.Seconds(), "rounds": *rounds, "best": best,
		"origin_requests_of_best": originCount, "edge_over_origin": e.RPS / o.RPS,
		"edge_requests_total": edgeReqs, "origin_requests_for_edge_total": edgeOriginReqs,
	})
}
