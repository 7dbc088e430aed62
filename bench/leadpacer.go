package main

import (
	"sync"
	"sync/atomic"
	"time"
)

// pacedLeads submits enquiries at a fixed rate (open model): enquiry i is
// due i/rate after the start whether or not earlier ones have been
// answered, each sent with submitLead (its own Idempotency-Key and
// retries, a unique e-mail so that none is a duplicate). The schedule is
// bounded in time and so in count (rate × duration), and at most
// pacedMaxInFlight enquiries are under way at once: past that the schedule
// waits, and the lateness is counted.
type pacedLeads struct {
	stop    chan struct{}
	once    sync.Once
	done    chan struct{}
	mu      sync.Mutex
	results []leadResult
	wg      sync.WaitGroup
	// late counts enquiries sent more than pacedLateAfter after they were
	// due: the generator, not the system, fell behind.
	late atomic.Int64
	// start and end are when the schedule began and when its last
	// enquiry was sent.
	start, end time.Time
}

const (
	pacedMaxInFlight = 512
	pacedLateAfter   = 100 * time.Millisecond
)

// startPacedLeads starts sending enquiries through d at rate per second
// for dur with the lead key.
func startPacedLeads(d *driver, rate float64, dur time.Duration, key string) *pacedLeads {
	p := &pacedLeads{stop: make(chan struct{}), done: make(chan struct{}), start: time.Now()}
	run := runID() + "w"
	n := int64(rate * dur.Seconds())
	interval := time.Duration(float64(time.Second) / rate)
	slots := make(chan struct{}, pacedMaxInFlight)
	go func() {
		defer close(p.done)
		t := time.NewTimer(0)
		defer t.Stop()
		for i := int64(0); i < n; i++ {
			due := p.start.Add(time.Duration(i) * interval)
			t.Reset(time.Until(due))
			select {
			case <-p.stop:
				return
			case <-t.C:
			}
			slots <- struct{}{}
			if time.Since(due) > pacedLateAfter {
				p.late.Add(1)
			}
			p.wg.Go(func() {
				defer func() { <-slots }()
				r := d.submitLead(run, i+1, key)
				p.mu.Lock()
				p.results = append(p.results, r)
				p.mu.Unlock()
			})
			p.end = time.Now()
		}
	}()
	return p
}

// halt stops sending new enquiries now.
func (p *pacedLeads) halt() { p.once.Do(func() { close(p.stop) }) }

// wait waits for the schedule to end (or halt) and for every enquiry sent
// to finish its retries, and returns their results.
func (p *pacedLeads) wait() []leadResult {
	<-p.done
	p.wg.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]leadResult(nil), p.results...)
}
