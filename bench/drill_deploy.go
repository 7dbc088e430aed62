package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// deployStep is one origin taken down and started again.
type deployStep struct {
	Origin    int     `json:"origin"`
	Signal    string  `json:"signal"`
	ExitMS    float64 `json:"exit_ms"`      // from the signal to the process gone
	StartMS   float64 `json:"start_ms"`     // from starting the new one to it listening
	ReadmitMS float64 `json:"readmit_ms"`   // from listening to both edges sending it requests
	Requests  int     `json:"requests"`     // answered while it was away
	Failed    int     `json:"failed"`       // of those, not 200/304/201
	Retried   float64 `json:"edge_retries"` // requests the edges sent to the other origin
	from, to  time.Time
}

// drillRollingDeploy is a deploy of the origins one at a time, as
// docs/operations.md describes it, under WordPress sites' traffic: two
// origins behind two edges (each edge lists both), the wordpress-mix load
// (reads revalidating with their ETags, enquiries with an Idempotency-Key
// as the plugin sends them, each request sent once, never retried by the
// client), and each origin in turn stopped and started again on its
// address: first with SIGTERM (a deploy), then with SIGKILL (a crash).
// Every request must be answered 200, 304 or 201, and every enquiry be in
// Postgres exactly once.
func drillRollingDeploy(ctx context.Context, p drillParams) (map[string]any, string, error) {
	sys, err := startSystemWith(ctx, systemOptions{Edges: 2, Origins: 2})
	if err != nil {
		return nil, "", err
	}
	defer sys.close()
	_, leadKey, err := createKey(ctx, sys, "drill rolling-deploy leads", "leads:write")
	if err != nil {
		return nil, "", err
	}
	site, err := discoverMix(sys)
	if err != nil {
		return nil, "", err
	}
	edges := sys.edgeURLs()
	clients := 4 * len(edges)
	tr := &http.Transport{MaxIdleConnsPerHost: clients, DisableCompression: true}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 20 * time.Second}
	run := runID()

	var (
		mu      sync.Mutex
		results []mixResult
	)
	// The load stops between requests, never cutting one: every enquiry
	// sent has its answer, so every stored row must be an acknowledged one.
	var stopped atomic.Bool
	deadline := time.Now().Add(4*(p.pre+p.down+15*time.Second) + p.post)
	stopLoad := func() { stopped.Store(true) }
	defer stopLoad()
	var wg sync.WaitGroup
	for w := range clients {
		wg.Go(func() {
			c := &mixClient{site: site, client: client, r: rand.New(rand.NewPCG(uint64(w), 7)), etags: map[string]string{},
				readKey: sys.readKey, leadKey: leadKey, email: fmt.Sprintf("deploy-%s-%d-%%d@example.com", run, w)}
			var mine []mixResult
			for i := int64(0); i < 5_000_000 && !stopped.Load() && time.Now().Before(deadline); i++ {
				mine = append(mine, c.do(ctx, edges[w%len(edges)], i))
			}
			mu.Lock()
			results = append(results, mine...)
			mu.Unlock()
		})
	}

	time.Sleep(p.pre)
	var steps []*deployStep
	var stepErr error
	for _, sig := range []string{"SIGTERM", "SIGKILL"} {
		for i := range sys.origins {
			st, err := deployOrigin(ctx, sys, i, sig, p.down)
			if err != nil {
				stepErr = err
				break
			}
			steps = append(steps, st)
			time.Sleep(p.pre / 2) // both origins serve before the next step
		}
		if stepErr != nil {
			break
		}
	}
	time.Sleep(p.post)
	stopLoad()
	wg.Wait()
	if stepErr != nil {
		return nil, "", stepErr
	}

	statuses, failures := map[int]int{}, map[string]int{}
	var sent []sentLead
	for _, r := range results {
		statuses[r.status]++
		if failedAnswer(r) {
			failures[failureName(r)]++
		}
		for _, st := range steps {
			if between(r.end, st.from, st.to) {
				st.Requests++
				if failedAnswer(r) {
					st.Failed++
				}
			}
		}
		if r.lead != nil {
			sent = append(sent, *r.lead)
		}
	}
	check, err := checkLeadRows(ctx, sys.dbURL, sys.siteID, "deploy-"+run+"-", sent)
	if err != nil {
		return nil, "", err
	}
	failed := 0
	for _, n := range failures {
		failed += n
	}
	data := map[string]any{"clients": clients, "requests": len(results), "statuses": statuses, "failed": failed,
		"failures": failures, "steps": steps, "leads": check}
	line := fmt.Sprintf("%d origins × %d edges, %d clients: %d requests, %d failed (%v); ", len(sys.origins), len(edges),
		clients, len(results), failed, statuses)
	for _, st := range steps {
		line += fmt.Sprintf("origin %d %s: %d answered while away (%d failed), back in %.0f ms; ", st.Origin, st.Signal,
			st.Requests, st.Failed, st.StartMS+st.ReadmitMS)
	}
	line += "leads: " + check.String()
	for _, st := range steps {
		if st.Requests == 0 {
			return data, line, fmt.Errorf("no request was answered while origin %d was away (%s)", st.Origin, st.Signal)
		}
	}
	if failed > 0 {
		return data, line, fmt.Errorf("%d requests failed: %v", failed, failures)
	}
	if check.Stored != check.Matched {
		return data, line, fmt.Errorf("%d stored enquiries are not the one acknowledged for their e-mail (stored twice?)", check.Stored-check.Matched)
	}
	return data, line, check.err()
}

// deployOrigin stops origin i with sig, keeps it away for down, starts it
// again on its address and waits until both edges send it requests again.
func deployOrigin(ctx context.Context, sys *benchSystem, i int, sig string, down time.Duration) (*deployStep, error) {
	before, err := edgeRetries(ctx, sys)
	if err != nil {
		return nil, err
	}
	st := &deployStep{Origin: i, Signal: sig, from: time.Now()}
	if sig == "SIGKILL" {
		sys.origins[i].Kill()
	} else {
		sys.origins[i].Stop()
	}
	st.ExitMS = msSince(st.from, time.Now())
	time.Sleep(down)
	t0 := time.Now()
	if err := sys.restartOriginAt(i); err != nil {
		return nil, err
	}
	up := time.Now()
	st.StartMS = msSince(t0, up)
	label := fmt.Sprintf("origin=%q", "http://"+sys.originAddrs[i])
	for _, e := range sys.edgeAdminURLs() {
		for {
			m, err := scrapeMetrics(ctx, e)
			if err != nil {
				return nil, err
			}
			if m.sum("listgate_edge_origin_up", label) == 1 {
				break
			}
			if time.Since(up) > 15*time.Second {
				return nil, fmt.Errorf("edge %s did not take origin %d back within 15 s of it listening", e, i)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	st.to = time.Now()
	st.ReadmitMS = msSince(up, st.to)
	after, err := edgeRetries(ctx, sys)
	if err != nil {
		return nil, err
	}
	st.Retried = after - before
	return st, nil
}

// edgeRetries adds the edges' counts of requests sent again to another
// origin.
func edgeRetries(ctx context.Context, sys *benchSystem) (float64, error) {
	total := 0.0
	for _, e := range sys.edgeAdminURLs() {
		m, err := scrapeMetrics(ctx, e)
		if err != nil {
			return 0, err
		}
		total += m.sum("listgate_edge_origin_retries_total")
	}
	return total, nil
}

// failedAnswer reports whether a request of the mix failed: anything but
// 200 and 304 for a read and 201 for an enquiry.
func failedAnswer(r mixResult) bool {
	if r.err != nil {
		return true
	}
	if r.kind == mixLead {
		return r.status != 201
	}
	return r.status != 200 && r.status != 304
}

func failureName(r mixResult) string {
	if r.err != nil {
		return r.kind + ": " + shortErr(r.err)
	}
	return fmt.Sprintf("%s: %d", r.kind, r.status)
}
