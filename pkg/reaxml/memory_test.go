package reaxml

import (
	"errors"
	"io"
	"runtime"
	"testing"

	"github.com/listgate/listgate/pkg/reaxml/reaxmlgen"
)

// TestMemoryBounded streams a generated feed of 50,000 listings from the
// generator through a pipe into the decoder (the feed is never held whole)
// and checks that the live heap after 50,000 listings is not meaningfully
// larger than after 5,000.
func TestMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("streams 50,000 listings")
	}
	const total, first, every = 50_000, 5_000, 5_000
	pr, pw := io.Pipe()
	genDone := make(chan error, 1)
	go func() {
		err := reaxmlgen.Generate(pw, reaxmlgen.Options{Seed: 99, Listings: total, Compact: true, Username: "u", Password: "p"})
		pw.CloseWithError(err)
		genDone <- err
	}()
	defer pr.Close()

	heapInuse := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapInuse
	}
	d := NewDecoder(pr, Options{})
	var base, peak uint64
	n := 0
	for {
		l, err := d.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("listing %d: %v", n+1, err)
		}
		_ = l
		n++
		if n%every == 0 {
			h := heapInuse()
			if n == first {
				base = h
			}
			peak = max(peak, h)
			t.Logf("after %6d listings: HeapInuse %.1f MiB", n, float64(h)/(1<<20))
		}
	}
	if err := <-genDone; err != nil {
		t.Fatalf("generator: %v", err)
	}
	if n != total {
		t.Fatalf("decoded %d listings, want %d", n, total)
	}
	const slack = 4 << 20
	if peak > 2*base+slack {
		t.Errorf("heap grew with the feed: %d bytes after %d listings, peak %d bytes", base, first, peak)
	}
}
