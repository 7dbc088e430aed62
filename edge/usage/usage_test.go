package usage

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/listgate/listgate/edge/upstream"
	"github.com/listgate/listgate/pkg/internalapi"
)

func TestCountAndFlush(t *testing.T) {
	var mu sync.Mutex
	var got []internalapi.UsageCount
	status := http.StatusNoContent
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/internal/v1/usage" || r.Header.Get("X-Listgate-Internal-Token") != "tok" {
			w.WriteHeader(401)
			return
		}
		var body struct{ Counts []internalapi.UsageCount }
		b, _ := io.ReadAll(r.Body)
		json.Unmarshal(b, &body)
		mu.Lock()
		defer mu.Unlock()
		if status == http.StatusNoContent {
			got = append(got, body.Counts...)
		}
		w.WriteHeader(status)
	}))
	defer srv.Close()
	origins, err := upstream.New(upstream.Options{URLs: []string{srv.URL}, InternalToken: "tok"})
	if err != nil {
		t.Fatal(err)
	}
	r := New(origins, time.Hour, slog.New(slog.DiscardHandler))
	m := time.Date(2026, 11, 22, 2, 30, 0, 0, time.UTC)
	var wg sync.WaitGroup
	for i := 0; i < 100; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			r.Count("site-a", m.Add(time.Duration(i%50)*time.Second)) // one minute
			if i%10 == 0 {
				r.Count("site-b", m.Add(time.Minute))
			}
		}(i)
	}
	wg.Wait()
	// The origin refuses: counts are kept.
	status = http.StatusServiceUnavailable
	if err := r.Flush(context.Background()); err == nil {
		t.Fatal("a refused report was not an error")
	}
	status = http.StatusNoContent
	r.Count("site-a", m.Add(10*time.Second))
	if err := r.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	sums := map[string]int64{}
	for _, c := range got {
		sums[c.SiteID+" "+c.Minute.Format("15:04")] += c.Requests
	}
	if sums["site-a 02:30"] != 101 || sums["site-b 02:31"] != 10 || len(sums) != 2 {
		t.Errorf("reported %v", sums)
	}
	// The refused report went again as it was (two counts), the new count
	// in a report of its own.
	if len(got) != 3 {
		t.Errorf("sent %d counts, want 3", len(got))
	}
	if err := r.Flush(context.Background()); err != nil || len(got) != 3 {
		t.Errorf("empty flush sent something: %v %d", err, len(got))
	}
	allocs := testing.AllocsPerRun(100, func() { r.Count("site-a", m) })
	if allocs != 0 {
		t.Errorf("Count allocates %v times for a known minute", allocs)
	}
}

// TestResendSameID: a report whose answer the edge did not get is sent
// again as it was, with its id, so that an origin applying each id once
// counts it once; big flushes are split into reports the origin takes.
func TestResendSameID(t *testing.T) {
	var mu sync.Mutex
	applied := map[string]bool{}
	sums := map[string]int64{}
	var sent []string  // report ids, in order
	var sizes []int    // counts per report
	loseAnswer := true // apply the report, then answer 503 (the answer lost)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body internalapi.UsageReport
		b, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(b, &body); err != nil || len(body.ReportID) != 36 {
			w.WriteHeader(422)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		sent = append(sent, body.ReportID)
		sizes = append(sizes, len(body.Counts))
		if !applied[body.ReportID] {
			applied[body.ReportID] = true
			for _, c := range body.Counts {
				sums[c.SiteID] += c.Requests
			}
		}
		if loseAnswer {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	origins, err := upstream.New(upstream.Options{URLs: []string{srv.URL}, InternalToken: "tok"})
	if err != nil {
		t.Fatal(err)
	}
	r := New(origins, time.Hour, slog.New(slog.DiscardHandler))
	m := time.Date(2026, 11, 22, 2, 30, 0, 0, time.UTC)
	for range 7 {
		r.Count("site-a", m)
	}
	if err := r.Flush(context.Background()); err == nil {
		t.Fatal("a lost answer was not an error")
	}
	mu.Lock()
	loseAnswer = false
	mu.Unlock()
	r.Count("site-a", m) // counted after: a report of its own
	if err := r.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(sent) != 3 || sent[0] != sent[1] || sent[1] == sent[2] || sums["site-a"] != 8 {
		t.Fatalf("sent %v, sums %v; want the first report twice with one id, then a new one, 8 requests", sent, sums)
	}

	// 12,000 site minutes: reports of at most maxReportCounts.
	mu.Lock()
	sent, sizes = nil, nil
	mu.Unlock()
	for i := range 12_000 {
		r.Count(fmt.Sprintf("site-%05d", i), m)
	}
	if err := r.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, n := range sizes {
		if n > maxReportCounts {
			t.Errorf("a report of %d counts", n)
		}
		total += n
	}
	if len(sizes) != 3 || total != 12_000 {
		t.Fatalf("report sizes %v", sizes)
	}
}

// TestRefusedReportDropped: a report the origin refuses for good (422) is
// dropped, not sent for ever ahead of the others; a 401 is kept.
func TestRefusedReportDropped(t *testing.T) {
	var mu sync.Mutex
	status := http.StatusUnprocessableEntity
	var got []int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body internalapi.UsageReport
		b, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(b, &body)
		mu.Lock()
		defer mu.Unlock()
		if status == http.StatusNoContent {
			for _, c := range body.Counts {
				got = append(got, c.Requests)
			}
		}
		w.WriteHeader(status)
	}))
	defer srv.Close()
	origins, err := upstream.New(upstream.Options{URLs: []string{srv.URL}, InternalToken: "tok"})
	if err != nil {
		t.Fatal(err)
	}
	r := New(origins, time.Hour, slog.New(slog.DiscardHandler))
	m := time.Date(2026, 11, 22, 2, 30, 0, 0, time.UTC)
	set := func(s int) { mu.Lock(); status = s; mu.Unlock() }
	r.Count("site-a", m)
	_ = r.Flush(context.Background()) // 422: dropped
	set(http.StatusUnauthorized)
	r.Count("site-a", m)
	r.Count("site-a", m)
	if err := r.Flush(context.Background()); err == nil {
		t.Fatal("a 401 was not an error")
	}
	set(http.StatusNoContent)
	if err := r.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0] != 2 {
		t.Fatalf("reported %v, want the two requests kept through the 401 alone", got)
	}
}
