package usage

import (
	"context"
	"encoding/json"
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
	if err := r.Flush(context.Background()); err != nil || len(got) != 2 {
		t.Errorf("empty flush sent something: %v %d", err, len(got))
	}
	allocs := testing.AllocsPerRun(100, func() { r.Count("site-a", m) })
	if allocs != 0 {
		t.Errorf("Count allocates %v times for a known minute", allocs)
	}
}
