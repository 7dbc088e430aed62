package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// uploadFloodBytes is each flood upload's announced size (48 MiB), under
// the edge's 50 MiB feed limit, so only the missing token refuses it.
const (
	uploadFloodBytes   = 48 << 20
	uploadFloodClients = 16
	uploadFloodGrowth  = 64 << 20 // the edge's RSS may grow this much at most
)

// drillUploadFlood: cached reads through the edge alone, then the same
// reads while 16 clients without credentials each send 48 MiB feed uploads
// over and over, as fast as their sockets take them (no Expect: 100-continue,
// which would make refusing them trivial). The edge must refuse each before
// reading it: its RSS, sampled every 100 ms, may not grow by 64 MiB, every
// flood answer is a 401 (or a 429 once the address passes the limit of the
// routes without a key), and the readers get only 200s. The readers'
// latency beside the flood is reported, not judged: the flood's clients
// share the machine's two cores with the edge.
func drillUploadFlood(ctx context.Context, p drillParams) (map[string]any, string, error) {
	sys, err := startSystem(ctx)
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
	phase := max(p.pre, time.Second)
	rss := startRSSSampler(sys.edge.PID())
	base := rss.peak()
	alone := readPhase(d, "alone", paths, sys.readKey, p.readWorkers, phase)
	// The control: the same flood at a bare sink that refuses each upload
	// as the edge does (answer, then read at most 256 KiB), so the readers'
	// loss to the flood's clients on the shared cores is told from the
	// edge's own.
	sink, err := startRefusingSink()
	if err != nil {
		return nil, "", err
	}
	ctrl := startUploadFlood(sink.Addr().String(), uploadFloodClients)
	control := readPhase(d, "control", paths, sys.readKey, p.readWorkers, phase)
	ctrl.stop()
	sink.Close()
	flood := startUploadFlood(sys.edge.Addr, uploadFloodClients)
	during := readPhase(d, "flood", paths, sys.readKey, p.readWorkers, phase)
	answers := flood.stop()
	peak := rss.stop()
	data := map[string]any{"rss_base_mib": mib(base), "rss_peak_mib": mib(peak), "rss_growth_mib": mib(peak - base),
		"flood_answers": answers, "flood_mib_sent": mib(flood.sent.Load()),
		"readers_alone": alone, "readers_during": during, "readers_flood_at_sink": control,
		"rps_ratio_edge_flood_to_sink_flood": during.RPS / control.RPS}
	line := fmt.Sprintf("edge RSS %.0f → peak %.0f MiB (+%.1f) under %d unauthenticated 48 MiB uploads (%v answers, %.0f MiB sent); readers %.0f req/s p99 %.2f ms alone, %.0f req/s p99 %.2f ms with the flood at a bare sink, %.0f req/s p99 %.2f ms with it at the edge (%.2f× the sink's)",
		mib(base), mib(peak), mib(peak-base), uploadFloodClients, answers, mib(flood.sent.Load()), alone.RPS, alone.P99,
		control.RPS, control.P99, during.RPS, during.P99, during.RPS/control.RPS)
	var problems []string
	if peak-base >= uploadFloodGrowth {
		problems = append(problems, fmt.Sprintf("the edge grew %.0f MiB", mib(peak-base)))
	}
	// 401 (no token) or 429 (the per-address limit of the routes without
	// a key): both before the body.
	for st, n := range answers {
		if st != 401 && st != 429 {
			problems = append(problems, fmt.Sprintf("%d flood answers %d", n, st))
		}
	}
	if answers[401] == 0 {
		problems = append(problems, "no flood upload was answered")
	}
	for name, r := range map[string]readResult{"alone": alone, "during the flood": during} {
		if r.Other > 0 {
			problems = append(problems, fmt.Sprintf("%d reads %s not 200", r.Other, name))
		}
	}
	if len(problems) > 0 {
		return data, line, fmt.Errorf("%s", strings.Join(problems, "; "))
	}
	return data, line, nil
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

// startRefusingSink is a bare TCP server that answers every request 401
// after its header and closes after reading at most 256 KiB more or 2 s,
// as the edge refuses an upload without a token.
func startRefusingSink() (net.Listener, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				c.SetDeadline(time.Now().Add(2 * time.Second))
				br := bufio.NewReader(c)
				for {
					line, err := br.ReadString('\n')
					if err != nil {
						return
					}
					if line == "\r\n" {
						break
					}
				}
				io.WriteString(c, "HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\n\r\n")
				io.CopyN(io.Discard, br, 256<<10)
			}()
		}
	}()
	return ln, nil
}

// readResult is one read phase: requests/s, latency percentiles (ms) and
// the answers other than 200.
type readResult struct {
	RPS, P50, P99 float64
	OK, Other     int
}

func readPhase(d *driver, kind string, paths []string, key string, workers int, dur time.Duration) readResult {
	start := time.Now()
	g := startLoad(workers, dur, 1_000_000, func(i int64) {
		d.do(kind, int(i%int64(len(d.lb.urls))), "GET", paths[i%int64(len(paths))], nil, map[string]string{"Authorization": "Bearer " + key})
	})
	g.wait()
	var lat []float64
	var r readResult
	for _, s := range d.rec.all() {
		if s.kind != kind {
			continue
		}
		if s.status == 200 {
			r.OK++
			lat = append(lat, msSince(s.start, s.end))
		} else {
			r.Other++
		}
	}
	sort.Float64s(lat)
	r.RPS = float64(r.OK+r.Other) / time.Since(start).Seconds()
	if len(lat) > 0 {
		r.P50, r.P99 = lat[len(lat)/2], lat[len(lat)*99/100]
	}
	return r
}

// uploadFlood is the flood's clients; stop ends them and returns the
// statuses of the answers they read.
type uploadFlood struct {
	done    chan struct{}
	wg      sync.WaitGroup
	mu      sync.Mutex
	answers map[int]int
	sent    atomic.Int64
}

func startUploadFlood(addr string, clients int) *uploadFlood {
	f := &uploadFlood{done: make(chan struct{}), answers: map[int]int{}}
	chunk := make([]byte, 64<<10)
	head := "POST /v1/feeds HTTP/1.1\r\nHost: edge\r\nContent-Type: application/xml\r\nContent-Length: " +
		strconv.Itoa(uploadFloodBytes) + "\r\n\r\n"
	for range clients {
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			for {
				select {
				case <-f.done:
					return
				default:
				}
				f.once(addr, head, chunk)
			}
		}()
	}
	return f
}

// once sends one upload until the edge answers and closes, and records
// the answer.
func (f *uploadFlood) once(addr, head string, chunk []byte) {
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		time.Sleep(10 * time.Millisecond)
		return
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	go func() {
		if _, err := io.WriteString(c, head); err != nil {
			return
		}
		for left := uploadFloodBytes; left > 0; {
			n, err := c.Write(chunk[:min(len(chunk), left)])
			f.sent.Add(int64(n))
			left -= n
			if err != nil {
				return
			}
		}
	}()
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return
	}
	resp.Body.Close()
	f.mu.Lock()
	f.answers[resp.StatusCode]++
	f.mu.Unlock()
}

func (f *uploadFlood) stop() map[int]int {
	close(f.done)
	f.wg.Wait()
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.answers
}

// rssSampler reads a process's resident set size every 100 ms and keeps
// the largest.
type rssSampler struct {
	max  atomic.Int64
	done chan struct{}
	wg   sync.WaitGroup
}

func startRSSSampler(pid int) *rssSampler {
	s := &rssSampler{done: make(chan struct{})}
	s.max.Store(rssOf(pid))
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-s.done:
				return
			case <-t.C:
				if v := rssOf(pid); v > s.max.Load() {
					s.max.Store(v)
				}
			}
		}
	}()
	return s
}

func (s *rssSampler) peak() int64 { return s.max.Load() }

func (s *rssSampler) stop() int64 {
	close(s.done)
	s.wg.Wait()
	return s.max.Load()
}

// rssOf is VmRSS of /proc/PID/status in bytes, or 0.
func rssOf(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}
