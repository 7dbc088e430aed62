package reaxmlgen_test

import (
	"runtime"
	"testing"

	"github.com/listgate/listgate/pkg/reaxml/reaxmlgen"
)

// heapWriter discards a feed and samples the live heap every sampleEvery
// bytes.
type heapWriter struct {
	written, next int64
	samples       []uint64
}

const sampleEvery = 16 << 20

func (w *heapWriter) Write(p []byte) (int, error) {
	w.written += int64(len(p))
	if w.written >= w.next {
		w.next += sampleEvery
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		w.samples = append(w.samples, ms.HeapInuse)
	}
	return len(p), nil
}

// TestGenerateMemoryBounded writes 50,000 full listings and checks that
// the live heap at the end is not meaningfully larger than near the start:
// the generator streams.
func TestGenerateMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 50,000 listings")
	}
	var w heapWriter
	if err := reaxmlgen.Generate(&w, reaxmlgen.Options{Seed: 3, Listings: 50_000}); err != nil {
		t.Fatal(err)
	}
	if len(w.samples) < 4 {
		t.Fatalf("only %d samples in %d bytes", len(w.samples), w.written)
	}
	base, peak := w.samples[1], uint64(0)
	for _, s := range w.samples[1:] {
		peak = max(peak, s)
	}
	t.Logf("%d MiB written; live heap %.1f MiB after %d MiB, peak %.1f MiB",
		w.written>>20, float64(base)/(1<<20), sampleEvery>>20, float64(peak)/(1<<20))
	const slack = 4 << 20
	if peak > 2*base+slack {
		t.Errorf("heap grew with the feed: %d bytes early, peak %d bytes", base, peak)
	}
}
