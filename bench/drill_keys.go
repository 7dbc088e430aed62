package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
)

// drillKeyRevoked revokes a key (`origin keys revoke`) while both edges
// serve it under load, p.rounds times. For each edge it measures the time
// from the command's return to the first 401, and checks that every request
// sent after that was refused (no flapping back to 200), that nothing but
// 200 and 401 came back, and that another key of the site kept working.
// Every edge must refuse within one second.
func drillKeyRevoked(ctx context.Context, p drillParams) (map[string]any, string, error) {
	const edges = 2
	sys, err := startSystemWith(ctx, systemOptions{Edges: edges})
	if err != nil {
		return nil, "", err
	}
	defer sys.close()
	d := newDriver(sys.edgeURLs())
	defer d.close()
	path := "/v1/sites/" + sys.siteID + "/listings"
	var rounds []map[string]any
	var maxima, cliMs, maxFromStart []float64
	var failures []string
	for round := 1; round <= p.rounds; round++ {
		keyID, key, err := sys.newKey(ctx, sys.siteID, "listings:read")
		if err != nil {
			return nil, "", err
		}
		// Both edges know the key (cached for key_ttl, 30 s): only the
		// event stream can make them refuse it within the second.
		if err := d.warm([]string{path}, key); err != nil {
			return nil, "", err
		}
		kind, ctrl := fmt.Sprintf("revoked-%d", round), fmt.Sprintf("control-%d", round)
		g := startLoad(2*edges, 30*time.Second, 1_000_000, func(i int64) {
			e := int(i % edges)
			if i%10 == 0 {
				d.do(ctrl, e, "GET", path, nil, map[string]string{"Authorization": "Bearer " + sys.readKey})
				return
			}
			d.do(kind, e, "GET", path, nil, map[string]string{"Authorization": "Bearer " + key})
		})
		time.Sleep(min(p.pre, 500*time.Millisecond)) // under load before the revocation
		watchers := make([]*watcher, edges)
		for e := range edges {
			watchers[e] = d.rec.watch(func(s sample) bool { return s.kind == kind && s.edge == e && s.status == 401 })
		}
		cliStart := time.Now()
		err = sys.cli(ctx, nil, "keys", "revoke", keyID)
		cliDone := time.Now()
		if err != nil {
			g.halt()
			return nil, "", err
		}
		lat, fromStart := make([]float64, edges), make([]float64, edges)
		firsts := make([]sample, edges)
		for e := range edges {
			s, ok := d.rec.wait(watchers[e], 3*time.Second)
			if !ok {
				g.halt()
				failures = append(failures, fmt.Sprintf("round %d: edge %d still accepted the key 3 s after the revocation", round, e))
				lat[e] = -1
				continue
			}
			firsts[e], lat[e], fromStart[e] = s, msSince(cliDone, s.end), msSince(cliStart, s.end)
		}
		time.Sleep(300 * time.Millisecond) // keep the load on to see any flapping
		g.halt()

		flaps := make([]int, edges)
		other := map[int]int{}
		ctrlBad := map[int]int{}
		for _, s := range d.rec.all() {
			switch {
			case s.kind == ctrl && s.status != 200:
				ctrlBad[s.status]++
			case s.kind != kind:
			case s.status != 200 && s.status != 401:
				other[s.status]++
			case s.status == 200 && !firsts[s.edge].end.IsZero() && s.start.After(firsts[s.edge].end):
				flaps[s.edge]++
			case s.status == 401 && s.end.Before(cliStart):
				other[401]++ // refused before the revocation began
			}
		}
		roundMax := slices.Max(lat)
		maxima, cliMs = append(maxima, roundMax), append(cliMs, msSince(cliStart, cliDone))
		maxFromStart = append(maxFromStart, slices.Max(fromStart))
		rounds = append(rounds, map[string]any{"after_cli_return_ms": lat, "after_cli_start_ms": fromStart, "cli_ms": msSince(cliStart, cliDone),
			"flaps": flaps, "unexpected": other, "control_failures": ctrlBad})
		for e := range edges {
			if lat[e] > 1000 {
				failures = append(failures, fmt.Sprintf("round %d: edge %d refused the key %.0f ms after the revocation", round, e, lat[e]))
			}
			if flaps[e] > 0 {
				failures = append(failures, fmt.Sprintf("round %d: edge %d accepted the key %d times after refusing it", round, e, flaps[e]))
			}
		}
		if len(other) > 0 || len(ctrlBad) > 0 {
			failures = append(failures, fmt.Sprintf("round %d: unexpected answers %v, control key %v", round, other, ctrlBad))
		}
	}
	dist := distribution(maxima)
	data := map[string]any{"rounds": rounds, "max_across_edges_ms": maxima, "distribution_ms": dist,
		"max_across_edges_from_cli_start_ms": maxFromStart, "cli_ms": distribution(cliMs)}
	line := fmt.Sprintf("%d revocations under load on 2 edges: the slower edge refused the key %v ms after `origin keys revoke` returned (max %.1f ms; negative: before the command exited), %v ms after it started (the command takes a median %.0f ms); no flapping, control key unaffected",
		len(maxima), maxima, dist["max"], maxFromStart, distribution(cliMs)["median"])
	if len(failures) > 0 {
		return data, line, fmt.Errorf("%s", strings.Join(failures, "; "))
	}
	return data, line, nil
}

// revokeAndAwait revokes a key the edge has cached and polls the edge with
// it until it answers 401, at most for d. It returns the milliseconds from
// the command's return to the first 401, or -1.
func revokeAndAwait(ctx context.Context, sys *benchSystem, dr *driver, edge int, keyID, key, path string, d time.Duration) (float64, error) {
	hdr := map[string]string{"Authorization": "Bearer " + key}
	// The key is cached now (key_ttl): only the event stream can revoke it
	// within the second.
	if s, b := dr.do("revoke-probe", edge, "GET", path, nil, hdr); s.status != 200 {
		return -1, fmt.Errorf("before the revocation: %d %s %s", s.status, s.err, b)
	}
	if err := sys.cli(ctx, nil, "keys", "revoke", keyID); err != nil {
		return -1, err
	}
	done := time.Now()
	for time.Since(done) < d {
		s, _ := dr.do("revoke-probe", edge, "GET", path, nil, hdr)
		if s.status == 401 {
			return msSince(done, s.end), nil
		}
		time.Sleep(5 * time.Millisecond)
	}
	return -1, nil
}
