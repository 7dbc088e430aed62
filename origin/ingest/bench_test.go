package ingest_test

import (
	"bytes"
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/listgate/listgate/origin/ingest"
	"github.com/listgate/listgate/pkg/reaxml/reaxmlgen"
)

// BenchmarkImport imports a generated feed of 10,000 listings into a fresh
// site per iteration and reports listings/s and the peak heap in use.
func BenchmarkImport(b *testing.B) {
	const n = 10000
	var feed bytes.Buffer
	if err := reaxmlgen.Generate(&feed, reaxmlgen.Options{Seed: 42, Listings: n}); err != nil {
		b.Fatal(err)
	}
	f := newFixture(b)
	var peak uint64
	var ms runtime.MemStats
	sample := func(ingest.Counts, int64) {
		runtime.ReadMemStats(&ms)
		peak = max(peak, ms.HeapInuse)
	}
	var total time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		site, err := f.db.CreateSite(context.Background(), "Bench Realty", "enterprise", "")
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start := time.Now()
		res, err := f.im.Import(context.Background(), site.ID, bytes.NewReader(feed.Bytes()), ingest.Options{Progress: sample})
		total += time.Since(start)
		if err != nil || res.Counts.Errors != 0 {
			b.Fatalf("import: %v %+v", err, res.Counts)
		}
	}
	b.ReportMetric(float64(n*b.N)/total.Seconds(), "listings/s")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
	b.ReportMetric(float64(feed.Len())/(1<<20), "feed-MiB")
}
