package reaxml

import (
	"bytes"
	"errors"
	"io"
	"syscall"
	"testing"
	"time"

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
	cpu := processCPU()
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
	// CPU time (GC included), which a shared machine's load moves far less
	// than the rate.
	b.ReportMetric(float64((processCPU()-cpu).Microseconds())/float64(listings*b.N), "cpu-µs/listing")
}

// processCPU is the user and system CPU time this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
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
