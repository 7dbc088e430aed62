package reaxmlgen_test

import (
	"io"
	"testing"

	"github.com/listgate/listgate/pkg/reaxml/reaxmlgen"
)

// countingWriter counts what it is given.
type countingWriter struct{ n int64 }

func (w *countingWriter) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	return len(p), nil
}

var _ io.Writer = (*countingWriter)(nil)

// BenchmarkGenerate writes a feed of 100,000 listings per iteration (the
// portal-scale site of issue #17) and reports listings/s and the feed's
// size.
func BenchmarkGenerate(b *testing.B) {
	for _, bc := range []struct {
		name string
		opts reaxmlgen.Options
	}{
		{"full", reaxmlgen.Options{Seed: 1, Listings: 100_000}},
		{"compact", reaxmlgen.Options{Seed: 1, Listings: 100_000, Compact: true}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			var w countingWriter
			for b.Loop() {
				w.n = 0
				if err := reaxmlgen.Generate(&w, bc.opts); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(bc.opts.Listings)*float64(b.N)/b.Elapsed().Seconds(), "listings/s")
			b.ReportMetric(float64(w.n)/(1<<20), "feed-MiB")
			b.SetBytes(w.n)
		})
	}
}
