package main

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// The open-model latency runs (DESIGN.md §9): a closed-loop run finds the
// maximum a target sustains with this Go client, then vegeta sends at a
// fixed 25, 50 and 75 % of it. Requests go out on schedule whether or not
// earlier ones have been answered, and each latency counts from the time
// the request was due to be sent, so a stall shows up in every request
// it delays (no coordinated omission).

// latencyConns bounds the connections of an open-model run.
const latencyConns = 256

// latencyFractions are the offered rates, as fractions of the maximum.
var latencyFractions = []float64{0.25, 0.50, 0.75}

// latencyPlan is how long the open-model runs of targets take when each
// fixed-rate run lasts d: a closed-loop maximum and three rates each, with
// a second to drain after each rate.
func latencyPlan(targets int, d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	return time.Duration(targets) * (max(d/2, time.Second) + time.Duration(len(latencyFractions))*(d+time.Second))
}

// latencySeries is one target's fixed-rate runs.
type latencySeries struct {
	Target string `json:"target"`
	// MaxRPS is the closed-loop maximum the rates are fractions of, and
	// MaxFrom says how it was measured.
	MaxRPS  float64        `json:"max_rps"`
	MaxFrom string         `json:"max_from"`
	Points  []latencyPoint `json:"points"`
}

// latencyPoint is one fixed-rate run.
type latencyPoint struct {
	Fraction    float64 `json:"fraction_of_max"`
	OfferedRPS  float64 `json:"offered_rps"`
	AchievedRPS float64 `json:"achieved_rps"`
	DurationS   float64 `json:"duration_s"`
	Requests    int     `json:"requests"`
	// Success is the share of answers with the expected statuses.
	Success  float64        `json:"success_ratio"`
	P50      float64        `json:"p50_ms"`
	P99      float64        `json:"p99_ms"`
	P999     float64        `json:"p99_9_ms"`
	Max      float64        `json:"max_ms"`
	Statuses map[string]int `json:"statuses"`
	// SendLagP99 is how late, at the 99th percentile, vegeta sent a request
	// after its scheduled time: large when the generator itself could not
	// keep up (the latencies include that lag).
	SendLagP99 float64  `json:"send_lag_p99_ms"`
	Errors     []string `json:"errors,omitempty"`
}

// latencyTarget is what an open-model run sends: targeter makes each
// request (it is called from many goroutines at once), ok says which
// statuses count as success.
type latencyTarget struct {
	name     string
	targeter vegeta.Targeter
	ok       func(status int) bool
}

// staticTarget sends the same GET with the given headers every time.
func staticTarget(name, url string, header http.Header) latencyTarget {
	return latencyTarget{name: name, targeter: vegeta.NewStaticTargeter(vegeta.Target{Method: "GET", URL: url, Header: header}),
		ok: func(s int) bool { return s == 200 }}
}

// openModel runs target at each fraction of maxRPS for d each and returns
// the series. Each run is bounded by its duration (plus a drain of at most
// the request timeout) and so by rate × d requests.
func openModel(ctx context.Context, target latencyTarget, maxRPS float64, maxFrom string, d time.Duration) latencySeries {
	s := latencySeries{Target: target.name, MaxRPS: maxRPS, MaxFrom: maxFrom}
	for _, f := range latencyFractions {
		if ctx.Err() != nil {
			break
		}
		rate := maxRPS * f
		if rate < 1 {
			rate = 1
		}
		s.Points = append(s.Points, fixedRate(ctx, target, rate, d, f))
	}
	return s
}

// fixedRate sends target's requests at rate per second for d.
func fixedRate(ctx context.Context, target latencyTarget, rate float64, d time.Duration, fraction float64) latencyPoint {
	const timeout = 5 * time.Second
	atk := vegeta.NewAttacker(
		vegeta.Timeout(timeout),
		vegeta.MaxBody(0),       // read and discard bodies; keep none
		vegeta.Workers(64),      // goroutines to start with…
		vegeta.MaxWorkers(4096), // …and at most, as requests pile up
		// A client's connection pool: past it, requests wait for a
		// connection (and that wait counts in their latency) instead of
		// opening ever more connections when the target slows down.
		vegeta.MaxConnections(latencyConns),
		vegeta.Connections(latencyConns),
		vegeta.KeepAlive(true),
	)
	// Hit number i (from 0) is due (i+1) intervals after the attack began.
	pacer := vegeta.ConstantPacer{Freq: max(1, int(rate+0.5)), Per: time.Second}
	interval := time.Duration(pacer.Per.Nanoseconds() / int64(pacer.Freq))
	ctx, cancel := context.WithTimeout(ctx, d+timeout+2*time.Second)
	defer cancel()
	go func() { <-ctx.Done(); atk.Stop() }()

	pt := latencyPoint{Fraction: fraction, OfferedRPS: float64(pacer.Freq) / pacer.Per.Seconds(), Statuses: map[string]int{}}
	lat := make([]time.Duration, 0, int(rate*d.Seconds())+16)
	lags := make([]time.Duration, 0, cap(lat))
	errs := map[string]bool{}
	ok := 0
	start := time.Now()
	var last time.Time
	for res := range atk.Attack(target.targeter, pacer, d, target.name) {
		// Its scheduled send time: the attack began just after start.
		due := start.Add(time.Duration(res.Seq+1) * interval)
		lag := max(0, res.Timestamp.Sub(due))
		lat = append(lat, res.Latency+lag)
		lags = append(lags, lag)
		if end := res.Timestamp.Add(res.Latency); end.After(last) {
			last = end
		}
		code := int(res.Code)
		pt.Statuses[strconv.Itoa(code)]++
		if code != 0 && target.ok(code) {
			ok++
		} else if res.Error != "" && len(errs) < 5 {
			errs[res.Error] = true
		}
	}
	pt.Requests = len(lat)
	if pt.Requests == 0 {
		return pt
	}
	pt.DurationS = last.Sub(start).Seconds()
	pt.AchievedRPS = float64(ok) / d.Seconds()
	pt.Success = float64(ok) / float64(pt.Requests)
	slices.Sort(lat)
	slices.Sort(lags)
	pt.P50, pt.P99, pt.P999 = msAt(lat, 0.50), msAt(lat, 0.99), msAt(lat, 0.999)
	pt.Max = ms(lat[len(lat)-1])
	pt.SendLagP99 = msAt(lags, 0.99)
	for e := range errs {
		pt.Errors = append(pt.Errors, e)
	}
	slices.Sort(pt.Errors)
	fmt.Printf("  open model %-16s %3.0f %% of max: offered %7.0f req/s, achieved %7.0f, p50 %7.2f ms  p99 %7.2f ms  p99.9 %7.2f ms  success %.2f %%  send lag p99 %.2f ms  %v\n",
		target.name, 100*fraction, pt.OfferedRPS, pt.AchievedRPS, pt.P50, pt.P99, pt.P999, 100*pt.Success, pt.SendLagP99, pt.Statuses)
	return pt
}

// msAt is the q-quantile of sorted durations, in milliseconds.
func msAt(sorted []time.Duration, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q * float64(len(sorted)))
	if i >= len(sorted) {
		i = len(sorted) - 1
	}
	return ms(sorted[i])
}

// checkLatency returns an error when a series is not a result: a run that
// made no request, or that got a 5xx (a 5xx is a failure at any rate).
func checkLatency(s latencySeries) error {
	if len(s.Points) != len(latencyFractions) {
		return fmt.Errorf("open model %s: %d of %d runs", s.Target, len(s.Points), len(latencyFractions))
	}
	for _, p := range s.Points {
		if p.Requests == 0 {
			return fmt.Errorf("open model %s at %.0f req/s: no requests", s.Target, p.OfferedRPS)
		}
		for code, n := range p.Statuses {
			if c, _ := strconv.Atoi(code); c >= 500 {
				return fmt.Errorf("open model %s at %.0f req/s: %d × %d", s.Target, p.OfferedRPS, n, c)
			}
		}
	}
	return nil
}
