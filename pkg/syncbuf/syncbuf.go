// Package syncbuf is a bytes.Buffer that goroutines may write at once, such
// as a server's log that a test reads after.
package syncbuf

import (
	"bytes"
	"sync"
)

// Buffer collects what is written to it, from any goroutine.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String is everything written so far.
func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
