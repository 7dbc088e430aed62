package main

import (
	"bufio"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	json "github.com/goccy/go-json"

	"github.com/listgate/listgate/pkg/model"
)

// drillRedisKilled kills the Redis that two edges share for the rate
// limiter, under a load split across both edges on a Starter site (60 a
// minute). Nothing may fail: no 5xx, no connection error. Requests must
// still be limited: while Redis answers the edges admit at most the limit
// together; once an edge has fallen back, it admits at most
// limit/expected_edges (30) per window on its own; so a window spanning the
// kill admits at most limit + edges × limit/edges (pkg/ratelimit's
// documented bound). It measures when each edge fell back (its log line)
// from the kill. Then Redis comes back, empty: each edge must say it
// returned (within 5 s; it probes once a second) and decide in Redis again.
// Having forgotten the window's count, Redis may admit the limit once more
// in that window.
func drillRedisKilled(ctx context.Context, p drillParams) (map[string]any, string, error) {
	const edges = 2
	plan := model.Starter
	sys, err := startSystemWith(ctx, systemOptions{Edges: edges, Redis: true, Plan: plan})
	if err != nil {
		return nil, "", err
	}
	defer sys.close()
	limit := plan.Limit()
	share := max(limit/edges, 1)
	d := newDriver(sys.edgeURLs())
	defer d.close()
	path := "/v1/sites/" + sys.siteID + "/stats/summary"
	hdr := map[string]string{"Authorization": "Bearer " + sys.readKey}
	// The edges learn the key before the load (one request each, counted
	// in whatever window this is).
	for e := range edges {
		if s, b := d.do("introduce", e, "GET", path, nil, hdr); s.status != 200 {
			return nil, "", fmt.Errorf("edge %d: %d %s %s", e, s.status, s.err, b)
		}
	}
	// Both edges must decide in Redis before the load: an edge's first
	// Redis call can miss the timeout and put it in fallback for a
	// probe interval (noted as a finding).
	coldFallbacks := make([]int, edges)
	for e := range edges {
		coldFallbacks[e] = len(fallbackEpisodes(sys.edges[e].Logs()))
		deadline := time.Now().Add(5 * time.Second)
		for {
			m, err := scrapeMetrics(ctx, sys.edges[e].AdminURL())
			if err == nil && m.sum("listgate_edge_ratelimit_fallback_active") == 0 {
				break
			}
			if time.Now().After(deadline) {
				return nil, "", fmt.Errorf("edge %d still in fallback 5 s after start (Redis up): %v", e, err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}

	// One window for the whole drill, so the counts are the window's. The
	// load is paced (redisDrillRate): the drill checks correctness, and a
	// saturated machine makes Redis calls miss their 5 ms timeout, which
	// is a fallback of its own (reported below when it happens).
	windowEnd := awaitWindow(p.pre + 2*p.post + 15*time.Second)
	tick := time.NewTicker(time.Second / redisDrillRate)
	defer tick.Stop()
	loadAt := time.Now()
	g := startLoad(p.readWorkers, p.pre+2*p.post+30*time.Second, 10_000_000, func(i int64) {
		<-tick.C
		d.do("limit", int(i%edges), "GET", path, nil, hdr)
	})
	time.Sleep(p.pre)
	// A Redis call over the timeout is decided locally without a fallback
	// (three in a row make one): each may admit a request the shared count
	// did not see. Counted just before the kill.
	slowBefore := 0
	for e := range edges {
		if m, err := scrapeMetrics(ctx, sys.edges[e].AdminURL()); err == nil {
			slowBefore += int(m.sum("listgate_edge_ratelimit_redis_slow_calls_total"))
		}
	}
	killAt := time.Now()
	sys.killRedis()
	// Each edge says it fell back in its log.
	deadline := time.Now().Add(5 * time.Second)
	fellBack := make([]time.Time, edges)
	already := make([]bool, edges)
	for e := range edges {
		for {
			if t, inFallback, ok := fallbackAt(sys.edges[e].Logs(), killAt); ok {
				fellBack[e], already[e] = t, inFallback
				break
			}
			if time.Now().After(deadline) {
				g.halt()
				return nil, "", fmt.Errorf("edge %d did not log a fallback within 5 s of the kill:\n%s", e, sys.edges[e].Logs())
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	time.Sleep(p.post)
	// Redis comes back, empty (no persistence), as a crashed one would:
	// each edge's probe (once a second) finds it and says so in its log.
	returnAt := time.Now()
	if err := sys.redis.Restart(ctx); err != nil {
		g.halt()
		return nil, "", fmt.Errorf("restart Redis: %w", err)
	}
	answeredAt := time.Now()
	returned := make([]time.Time, edges)
	deadline = time.Now().Add(5 * time.Second)
	for e := range edges {
		for {
			if t, ok := returnedAt(sys.edges[e].Logs(), returnAt); ok {
				returned[e] = t
				break
			}
			if time.Now().After(deadline) {
				g.halt()
				return nil, "", fmt.Errorf("edge %d did not log its return to Redis within 5 s of Redis answering:\n%s", e, sys.edges[e].Logs())
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	redisAtReturn := make([]float64, edges)
	for e := range edges {
		if m, err := scrapeMetrics(ctx, sys.edges[e].AdminURL()); err == nil {
			redisAtReturn[e] = m.sum("listgate_edge_ratelimit_decisions_total", `backend="redis"`)
		}
	}
	time.Sleep(p.post)
	g.halt()
	metricsActive := make([]float64, edges)
	redisAfterReturn := make([]float64, edges)
	fallbackDecisions := make([]float64, edges)
	spurious := make([]int, edges)
	var spuriousAt []float64 // ms after the load began
	slowAll := 0
	for e := range edges {
		m, err := scrapeMetrics(ctx, sys.edges[e].AdminURL())
		if err != nil {
			return nil, "", err
		}
		metricsActive[e] = m.sum("listgate_edge_ratelimit_fallback_active")
		fallbackDecisions[e] = m.sum("listgate_edge_ratelimit_decisions_total", `backend="fallback"`)
		redisAfterReturn[e] = m.sum("listgate_edge_ratelimit_decisions_total", `backend="redis"`) - redisAtReturn[e]
		slowAll += int(m.sum("listgate_edge_ratelimit_redis_slow_calls_total"))
		for _, ep := range fallbackEpisodes(sys.edges[e].Logs()) {
			if ep.Before(killAt) && !ep.Before(loadAt) {
				spurious[e]++
				spuriousAt = append(spuriousAt, msSince(loadAt, ep))
			}
		}
	}

	ss := d.rec.all()
	type windowCount struct {
		Before      int   `json:"admitted_before_kill"`
		AfterByEdge []int `json:"admitted_in_fallback_by_edge"`
		AfterReturn int   `json:"admitted_after_return"`
		Total       int   `json:"admitted"`
		Limited     int   `json:"limited"`
		LimitedPost int   `json:"limited_after_kill"`
	}
	windows := map[int64]*windowCount{}
	statuses := statusCounts(ss, func(s sample) bool { return s.kind == "limit" })
	for _, s := range ss {
		if s.kind != "limit" || (s.status != 200 && s.status != 429) {
			continue
		}
		w := windows[s.reset]
		if w == nil {
			w = &windowCount{AfterByEdge: make([]int, edges)}
			windows[s.reset] = w
		}
		if s.status == 429 {
			w.Limited++
			if s.start.After(killAt) {
				w.LimitedPost++
			}
			continue
		}
		w.Total++
		if s.end.Before(killAt) {
			w.Before++
		}
		switch {
		case s.start.After(returned[s.edge]):
			w.AfterReturn++
		case s.start.After(fellBack[s.edge]):
			w.AfterByEdge[s.edge]++
		}
	}
	effect, back := make([]float64, edges), make([]float64, edges)
	for e := range edges {
		effect[e] = msSince(killAt, fellBack[e])
		back[e] = msSince(answeredAt, returned[e])
	}
	data := map[string]any{
		"plan": plan, "limit": limit, "share_per_edge": share, "window_end": windowEnd, "rate_per_s": redisDrillRate,
		"statuses": statuses, "windows": windows, "fallback_after_kill_ms": effect, "in_fallback_at_kill": already,
		"fallbacks_at_first_request": coldFallbacks, "fallbacks_before_kill": spurious, "fallbacks_before_kill_after_load_start_ms": spuriousAt,
		"metric_fallback_active": metricsActive, "metric_fallback_decisions": fallbackDecisions,
		"slow_redis_calls_before_kill": slowBefore, "returned_after_redis_answered_ms": back,
		"slow_redis_calls_after_kill": slowAll - slowBefore, "redis_decisions_after_return": redisAfterReturn,
	}
	// Before the kill the edges admit at most the limit together, unless
	// one fell back already (a Redis call over its timeout): then the
	// window's bound is the one for a window spanning a fallback; and
	// each slow call decided locally may add one.
	preBound := limit + slowBefore
	if spurious[0]+spurious[1] > 0 {
		preBound = limit + edges*share + slowBefore
	}
	var parts, problems []string
	for reset, w := range windows {
		parts = append(parts, fmt.Sprintf("window ending %s: %d admitted (%d before the kill, %v per edge in fallback, %d after the return), %d limited (%d after the kill)",
			time.Unix(reset, 0).UTC().Format("15:04:05"), w.Total, w.Before, w.AfterByEdge, w.AfterReturn, w.Limited, w.LimitedPost))
		if w.Before > preBound {
			problems = append(problems, fmt.Sprintf("%d admitted before the kill, over %d", w.Before, preBound))
		}
		for e, n := range w.AfterByEdge {
			if n > share {
				problems = append(problems, fmt.Sprintf("edge %d admitted %d after falling back, over its share %d", e, n, share))
			}
		}
		// Redis came back empty: it forgot the window's count, so the
		// edges may admit the limit once more after their return (and
		// one more per slow call decided locally).
		if w.AfterReturn > limit+slowAll-slowBefore {
			problems = append(problems, fmt.Sprintf("%d admitted after the return, over the limit %d", w.AfterReturn, limit))
		}
		if bound := 2*limit + edges*share + slowAll; w.Total > bound {
			problems = append(problems, fmt.Sprintf("%d admitted in one window, over 2 × limit + edges × share = %d", w.Total, bound))
		}
	}
	slices.Sort(parts)
	var when []string
	for e := range edges {
		if already[e] {
			when = append(when, fmt.Sprintf("edge %d was in fallback already", e))
		} else {
			when = append(when, fmt.Sprintf("edge %d fell back %.1f ms after the kill", e, effect[e]))
		}
	}
	line := fmt.Sprintf("Redis killed under %d req/s over 2 edges: %s; restarted (empty) after %.1f s: the edges returned to it %.0f and %.0f ms after it answered; statuses %v; %s",
		redisDrillRate, strings.Join(when, ", "), answeredAt.Sub(killAt).Seconds(), back[0], back[1], statuses, strings.Join(parts, "; "))
	if spurious[0]+spurious[1] > 0 {
		line += fmt.Sprintf("; fallbacks before the kill (Redis calls over the 5 ms timeout) %v, at %v ms into the load", spurious, spuriousAt)
	}
	if coldFallbacks[0]+coldFallbacks[1] > 0 {
		line += fmt.Sprintf("; an edge's first Redis call missed the timeout and it fell back at start %v", coldFallbacks)
	}
	postLimited := 0
	for _, w := range windows {
		postLimited += w.LimitedPost
	}
	switch {
	case statuses[200]+statuses[429] != sumCounts(statuses):
		return data, line, fmt.Errorf("statuses other than 200 and 429 (5xx or connection errors): %v %v",
			statuses, errorsByKind(ss, func(sample) bool { return true }))
	case len(problems) > 0:
		return data, line, fmt.Errorf("%s", strings.Join(problems, "; "))
	case postLimited == 0:
		return data, line, fmt.Errorf("nothing was limited after the kill: the fallback did not limit")
	case fallbackDecisions[0] == 0 || fallbackDecisions[1] == 0:
		return data, line, fmt.Errorf("listgate_edge_ratelimit_decisions_total{backend=fallback} %v, want some on each edge", fallbackDecisions)
	case redisAfterReturn[0] == 0 || redisAfterReturn[1] == 0:
		return data, line, fmt.Errorf("decisions in Redis after its return %v, want some on each edge", redisAfterReturn)
	}
	return data, line, nil
}

// redisDrillRate is the redis-killed drill's load, requests per second.
const redisDrillRate = 500

// Log lines of pkg/ratelimit's Redis limiter.
const (
	msgFallback = "ratelimit: Redis unavailable"
	msgReturned = "ratelimit: Redis answers again"
)

// limiterLogLines returns the edge's limiter lines: when, and whether it
// fell back (true) or returned to Redis (false).
func limiterLogLines(logs string) (times []time.Time, fell []bool) {
	sc := bufio.NewScanner(strings.NewReader(logs))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var l struct {
			Time time.Time
			Msg  string
		}
		if json.Unmarshal(sc.Bytes(), &l) != nil {
			continue
		}
		switch {
		case strings.HasPrefix(l.Msg, msgFallback):
			times, fell = append(times, l.Time), append(fell, true)
		case strings.HasPrefix(l.Msg, msgReturned):
			times, fell = append(times, l.Time), append(fell, false)
		}
	}
	return times, fell
}

// fallbackAt is when the edge fell back because of a kill at killAt: its
// first fallback line from killAt on, or killAt itself when it was still in
// fallback from before (inFallback).
func fallbackAt(logs string, killAt time.Time) (t time.Time, inFallback, ok bool) {
	times, fell := limiterLogLines(logs)
	down := false
	for i := range times {
		if times[i].Before(killAt) {
			down = fell[i]
			continue
		}
		if fell[i] {
			return times[i], false, true
		}
	}
	if down {
		return killAt, true, true
	}
	return time.Time{}, false, false
}

// returnedAt is when the edge logged that Redis answers again, at or after
// from.
func returnedAt(logs string, from time.Time) (time.Time, bool) {
	times, fell := limiterLogLines(logs)
	for i := range times {
		if !fell[i] && !times[i].Before(from) {
			return times[i], true
		}
	}
	return time.Time{}, false
}

// fallbackEpisodes returns when each fallback began.
func fallbackEpisodes(logs string) []time.Time {
	var out []time.Time
	times, fell := limiterLogLines(logs)
	for i := range times {
		if fell[i] {
			out = append(out, times[i])
		}
	}
	return out
}

// drillEdgeKilled kills one of two edges (SIGKILL) under a load of cached
// reads and leads that a balancer spreads over both and retries on the
// other edge after a connection error. Every read and lead must succeed in
// the end, no answer may be a 5xx, the only errors must be connection
// errors to the killed edge, and every acknowledged lead must be stored
// once.
func drillEdgeKilled(ctx context.Context, p drillParams) (map[string]any, string, error) {
	sys, err := startSystemWith(ctx, systemOptions{Edges: 2})
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
	var readOps, readFailed atomic.Int64
	total := p.pre + p.post + 30*time.Second
	reads := startLoad(p.readWorkers, total, 10_000_000, func(i int64) {
		readOps.Add(1)
		if s := d.get("read", paths[i%int64(len(paths))], sys.readKey); s.status != 200 {
			readFailed.Add(1)
		}
	})
	leads := startLeads(d, p.leadWorkers, total, sys.leadKey)
	time.Sleep(p.pre)
	// The balancer notices at the first connection error.
	w := d.rec.watch(func(s sample) bool { return s.edge == 1 && s.status == 0 })
	killAt := time.Now()
	sys.killEdge(1)
	_, noticed := d.rec.wait(w, 5*time.Second)
	time.Sleep(p.post)
	reads.halt()
	results := leads.halt()

	ss := d.rec.all()
	lc, err := checkLeads(ctx, sys.dbURL, sys.siteID, results)
	if err != nil {
		return nil, "", err
	}
	errsSurvivor := errorsByKind(ss, func(s sample) bool { return s.edge == 0 })
	errsKilled := errorsByKind(ss, func(s sample) bool { return s.edge == 1 })
	errsBeforeKill := errorsByKind(ss, func(s sample) bool { return s.end.Before(killAt) })
	five := count5xx(ss, false)
	survivorOK := 0
	for _, s := range ss {
		if s.edge == 0 && s.status >= 200 && s.status < 300 && s.start.After(killAt) {
			survivorOK++
		}
	}
	d.lb.mu.Lock()
	markedDown := d.lb.markedDown[1]
	d.lb.mu.Unlock()
	data := map[string]any{
		"read_ops": readOps.Load(), "read_ops_failed": readFailed.Load(),
		"leads": lc, "five_xx": five, "survivor_2xx_after_kill": survivorOK,
		"errors_to_survivor": errsSurvivor, "errors_to_killed": errsKilled, "errors_before_kill": errsBeforeKill,
		"statuses_by_edge": []map[int]int{
			statusCounts(ss, func(s sample) bool { return s.edge == 0 }),
			statusCounts(ss, func(s sample) bool { return s.edge == 1 })},
	}
	if !markedDown.IsZero() {
		data["taken_out_after_kill_ms"] = msSince(killAt, markedDown)
	}
	line := fmt.Sprintf("edge 1 killed: %d requests succeeded on the survivor after the kill; connection errors to the killed edge %v, to the survivor %v; 5xx %v; %d/%d reads failed after retries; %s",
		survivorOK, errsKilled, errsSurvivor, five, readFailed.Load(), readOps.Load(), lc)
	switch {
	case !noticed:
		return data, line, fmt.Errorf("no request saw the killed edge fail")
	case len(errsSurvivor) > 0 || len(errsBeforeKill) > 0:
		return data, line, fmt.Errorf("connection errors other than to the killed edge after the kill: survivor %v, before the kill %v", errsSurvivor, errsBeforeKill)
	case len(five) > 0:
		return data, line, fmt.Errorf("5xx answers: %v", five)
	case readFailed.Load() > 0:
		return data, line, fmt.Errorf("%d reads failed after the balancer's retries", readFailed.Load())
	case survivorOK == 0:
		return data, line, fmt.Errorf("the survivor served nothing after the kill")
	}
	return data, line, lc.err()
}
