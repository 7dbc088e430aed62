package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

const (
	floodClients = 16
	floodBytes   = 48 << 20 // each upload's Content-Length, under the 50 MiB feed limit
	floodGrowth  = 64 << 20 // the edge's RSS must grow less than this
)

// floodHead is an upload without credentials and without "Expect:
// 100-continue" (which would let the edge refuse it before any body).
var floodHead = "POST /v1/feeds HTTP/1.1\r\nHost: listgate\r\nContent-Type: application/xml\r\nContent-Length: " +
	strconv.Itoa(floodBytes) + "\r\n\r\n"

// drillUploadFlood reads cached pages through one edge with a few readers
// alone, then again while 16 clients without credentials each send 48 MiB
// feed uploads over and over, sampling the edge's RSS every 100 ms. It
// fails when the RSS grows by 64 MiB or more, when an upload is answered
// anything but 401 (or not at all), or when a read is answered anything
// but 200 or 304. The per-address limit of the routes without a key is
// lifted, so that every upload reaches the token check (from one address
// they would get 429 from the 121st of the minute on).
func drillUploadFlood(ctx context.Context, p drillParams) (map[string]any, string, error) {
	sys, err := startSystemWith(ctx, systemOptions{EdgeConfig: "public_limit: 1000000\n"})
	if err != nil {
		return nil, "", err
	}
	defer sys.close()
	pid, err := pidRunning(sys.edgeBin)
	if err != nil {
		return nil, "", err
	}
	d := newDriver(sys.edgeURLs())
	defer d.close()
	paths := cachedPaths(sys.siteID)
	if err := d.warm(paths, sys.readKey); err != nil {
		return nil, "", err
	}
	phase := max(p.pre, time.Second)
	rss, cpu := startRSSSampler(pid), newCPUMeter(pid, os.Getpid())
	alone := readPhase(d, "alone", paths, sys.readKey, p.readWorkers, phase)
	base, coresAlone := rss.restart(), cpu.cores()
	flood := startUploadFlood(sys.edge.Addr)
	during := readPhase(d, "flood", paths, sys.readKey, p.readWorkers, phase)
	answers, coresFlood := flood.stop(), cpu.cores()
	peak, samples, rssErr := rss.stop()
	data := map[string]any{"rss_base_mib": mib(base), "rss_peak_mib": mib(peak), "rss_growth_mib": mib(peak - base),
		"rss_samples": samples, "flood_answers": answers, "flood_mib_sent": mib(flood.sent),
		"flood_max_mib_sent_per_upload": mib(flood.maxSent), "readers_alone": alone, "readers_during": during,
		"p99_ratio": during.P99 / alone.P99, "rps_ratio": during.RPS / alone.RPS,
		"cores_edge_bench_alone": coresAlone, "cores_edge_bench_flood": coresFlood}
	line := fmt.Sprintf("edge RSS %.0f → peak %.0f MiB (+%.1f) under %d clients' unauthenticated 48 MiB uploads (answers %v, %.0f MiB sent, at most %.1f MiB of one); readers %.0f req/s p99 %.1f ms alone, %.0f req/s p99 %.1f ms beside the flood (p99 %.1f×, req/s %.2f×); cores used by the edge and the bench's clients %.2f/%.2f alone, %.2f/%.2f with the flood",
		mib(base), mib(peak), mib(peak-base), floodClients, answers, mib(flood.sent), mib(flood.maxSent),
		alone.RPS, alone.P99, during.RPS, during.P99, during.P99/alone.P99, during.RPS/alone.RPS,
		coresAlone[0], coresAlone[1], coresFlood[0], coresFlood[1])
	return data, line, floodProblems(answers, rssErr, peak-base, alone, during)
}

// floodProblems are the drill's failed conditions, nil when none failed.
func floodProblems(answers map[string]int, rssErr error, growth int64, reads ...readResult) error {
	var problems []string
	if rssErr != nil {
		problems = append(problems, rssErr.Error())
	}
	if growth >= floodGrowth {
		problems = append(problems, fmt.Sprintf("the edge's RSS grew %.0f MiB", mib(growth)))
	}
	for _, a := range slices.Sorted(maps.Keys(answers)) {
		if a != "401" {
			problems = append(problems, fmt.Sprintf("%d uploads: %s", answers[a], a))
		}
	}
	if answers["401"] == 0 {
		problems = append(problems, "no upload was answered 401")
	}
	for _, r := range reads {
		for st, n := range r.Statuses {
			if st != 200 && st != 304 {
				problems = append(problems, fmt.Sprintf("%d reads %s answered %d", n, r.Phase, st))
			}
		}
	}
	if len(problems) == 0 {
		return nil
	}
	return errors.New(strings.Join(problems, "; "))
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

// readResult is one read phase: requests/s, latency percentiles in ms (of
// the 200s and 304s) and the answers by status (0: transport error).
type readResult struct {
	Phase    string      `json:"-"`
	RPS      float64     `json:"rps"`
	P50      float64     `json:"p50_ms"`
	P99      float64     `json:"p99_ms"`
	Statuses map[int]int `json:"statuses"`
}

// readPhase reads paths with key for dur, closed loop, with workers.
func readPhase(d *driver, phase string, paths []string, key string, workers int, dur time.Duration) readResult {
	hdr := map[string]string{"Authorization": "Bearer " + key}
	start := time.Now()
	startLoad(workers, dur, 1<<24, func(i int64) {
		d.do(phase, int(i%int64(len(d.lb.urls))), "GET", paths[i%int64(len(paths))], nil, hdr)
	}).wait()
	r := readResult{Phase: phase, Statuses: map[int]int{}}
	var lat []float64
	for _, s := range d.rec.all() {
		if s.kind != phase {
			continue
		}
		r.Statuses[s.status]++
		if s.status == 200 || s.status == 304 {
			lat = append(lat, msSince(s.start, s.end))
		}
	}
	r.RPS = float64(len(lat)) / time.Since(start).Seconds()
	if len(lat) > 0 {
		slices.Sort(lat)
		r.P50, r.P99 = lat[len(lat)/2], lat[len(lat)*99/100]
	}
	return r
}

// uploadFlood is the flood's clients. stop ends them and returns their
// answers by status ("401"), or by what happened instead ("no answer: EOF").
type uploadFlood struct {
	halt          atomic.Bool
	wg            sync.WaitGroup
	mu            sync.Mutex
	answers       map[string]int
	sent, maxSent int64 // bytes written in all, and of one upload at most
}

// startUploadFlood starts floodClients clients, each sending one upload
// after another to addr on a new connection, its body from one shared
// buffer as fast as the socket takes it.
func startUploadFlood(addr string) *uploadFlood {
	f := &uploadFlood{answers: map[string]int{}}
	chunk := make([]byte, 64<<10)
	for range floodClients {
		f.wg.Go(func() {
			for !f.halt.Load() {
				f.upload(addr, chunk)
			}
		})
	}
	return f
}

// upload sends one upload and reads the answer while the body is being
// written, until the edge closes the connection (or the body is all
// written).
func (f *uploadFlood) upload(addr string, chunk []byte) {
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		f.record("dial: "+shortErr(err), 0)
		time.Sleep(10 * time.Millisecond)
		return
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	written := make(chan int64, 1)
	go func() {
		var sent int64
		_, err := c.Write([]byte(floodHead))
		for err == nil && sent < floodBytes {
			var n int
			n, err = c.Write(chunk[:min(int64(len(chunk)), floodBytes-sent)])
			sent += int64(n)
		}
		written <- sent
	}()
	answer := "no answer: "
	if resp, err := http.ReadResponse(bufio.NewReader(c), nil); err != nil {
		answer += shortErr(err)
	} else {
		resp.Body.Close()
		answer = strconv.Itoa(resp.StatusCode)
	}
	f.record(answer, <-written)
}

func (f *uploadFlood) record(answer string, sent int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.answers[answer]++
	f.sent += sent
	f.maxSent = max(f.maxSent, sent)
}

func (f *uploadFlood) stop() map[string]int {
	f.halt.Store(true)
	f.wg.Wait()
	return f.answers
}
