package syncbuf

import (
	"strings"
	"sync"
	"testing"
)

// Lines written from many goroutines at once all arrive, whole.
func TestConcurrentWriters(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				b.Write([]byte("a line\n"))
			}
		}()
	}
	wg.Wait()
	if n := strings.Count(b.String(), "a line\n"); n != 800 {
		t.Fatalf("%d lines, want 800", n)
	}
}
