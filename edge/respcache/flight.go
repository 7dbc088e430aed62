package respcache

// Flight is one origin request that concurrent misses for a key share.
type Flight struct {
	done chan struct{}
	// Entry is what the leader stored, nil when the answer was not
	// cacheable (the followers then ask the origin themselves).
	Entry *Entry
}

// Join returns the flight for key and whether the caller leads it. The
// leader must call Finish; followers wait on Wait.
func (c *Cache) Join(key []byte) (f *Flight, leader bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if f, ok := c.flights[b2s(key)]; ok {
		return f, false
	}
	f = &Flight{done: make(chan struct{})}
	c.flights[string(key)] = f
	return f, true
}

// Finish ends the leader's flight with the entry it stored (or nil).
func (c *Cache) Finish(key []byte, f *Flight, e *Entry) {
	c.mu.Lock()
	delete(c.flights, b2s(key))
	c.mu.Unlock()
	f.Entry = e
	close(f.done)
}

// Done is closed when the flight's leader has finished.
func (f *Flight) Done() <-chan struct{} { return f.done }
