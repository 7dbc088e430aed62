package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sort"
	"sync"
	"time"

	json "github.com/goccy/go-json"
)

// loadResult is what a closed-loop run measured.
type loadResult struct {
	Requests int
	Errors   int
	Duration time.Duration
	P50, P99 time.Duration
	Statuses map[int]int
}

func (r loadResult) rps() float64 { return float64(r.Requests) / r.Duration.Seconds() }

func (r loadResult) String() string {
	return fmt.Sprintf("%8.0f req/s  p50 %6.2f ms  p99 %6.2f ms  (%d requests, %d errors, statuses %v)",
		r.rps(), ms(r.P50), ms(r.P99), r.Requests, r.Errors, r.Statuses)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// closedLoop runs workers that each send requests back to back for at most
// d and at most maxRequests in all. newReq builds the i-th request; check,
// when not nil, sees every answer.
func closedLoop(ctx context.Context, workers int, d time.Duration, maxRequests int, newReq func(i int) *http.Request,
	check func(i, status int, body []byte)) loadResult {
	tr := &http.Transport{MaxIdleConnsPerHost: workers, MaxConnsPerHost: workers, DisableCompression: true}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var mu sync.Mutex
	res := loadResult{Statuses: map[int]int{}}
	lat := make([]time.Duration, 0, min(maxRequests, 1<<20))
	next := make(chan int)
	go func() {
		defer close(next)
		for i := 0; i < maxRequests; i++ {
			select {
			case next <- i:
			case <-ctx.Done():
				return
			}
		}
	}()
	start := time.Now()
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				req := newReq(i).WithContext(ctx)
				t0 := time.Now()
				resp, err := client.Do(req)
				status := 0
				if err == nil {
					if check != nil {
						body, rerr := io.ReadAll(resp.Body)
						if rerr == nil {
							check(i, resp.StatusCode, body)
						}
					} else {
						io.Copy(io.Discard, resp.Body)
					}
					resp.Body.Close()
					status = resp.StatusCode
				}
				el := time.Since(t0)
				mu.Lock()
				if err != nil {
					if ctx.Err() == nil {
						res.Errors++
					}
				} else {
					res.Requests++
					res.Statuses[status]++
					lat = append(lat, el)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	res.Duration = time.Since(start)
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	if len(lat) > 0 {
		res.P50 = lat[len(lat)/2]
		res.P99 = lat[len(lat)*99/100]
	}
	return res
}

// MarshalJSON writes the result in the units of the report.
func (r loadResult) MarshalJSON() ([]byte, error) {
	return json.Marshal(map[string]any{"requests": r.Requests, "errors": r.Errors, "duration_s": r.Duration.Seconds(),
		"requests_per_second": r.rps(), "p50_ms": ms(r.P50), "p99_ms": ms(r.P99), "statuses": r.Statuses})
}
