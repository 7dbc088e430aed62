package reaxml

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/listgate/listgate/pkg/reaxml/reaxmlgen"
)

// BenchmarkDecode decodes a generated 10,000-listing feed held in memory and
// reports listings/s next to the byte throughput; sub-benchmark xml-only
// reads every token with encoding/xml (the fast path off), for comparison.
func BenchmarkDecode(b *testing.B) {
	b.Run("fast", func(b *testing.B) { benchmarkDecode(b, false) })
	b.Run("xml-only", func(b *testing.B) { benchmarkDecode(b, true) })
}

func benchmarkDecode(b *testing.B, xmlOnly bool) {
	const listings = 10_000
	var feed bytes.Buffer
	if err := reaxmlgen.Generate(&feed, reaxmlgen.Options{Seed: 1, Listings: listings}); err != nil {
		b.Fatal(err)
	}
	data := feed.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		d := NewDecoder(bytes.NewReader(data), Options{})
		d.noFast = xmlOnly
		n := 0
		for {
			_, err := d.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
		if n != listings {
			b.Fatalf("decoded %d listings", n)
		}
	}
	b.ReportMetric(float64(listings*b.N)/b.Elapsed().Seconds(), "listings/s")
}

// BenchmarkGenerate measures the generator alone.
func BenchmarkGenerate(b *testing.B) {
	var n int64
	for b.Loop() {
		cw := &countingWriter{}
		if err := reaxmlgen.Generate(cw, reaxmlgen.Options{Seed: 1, Listings: 10_000}); err != nil {
			b.Fatal(err)
		}
		n = cw.n
	}
	b.SetBytes(n)
}

type countingWriter struct{ n int64 }

func (w *countingWriter) Write(p []byte) (int, error) { w.n += int64(len(p)); return len(p), nil }
