package leads_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/listgate/listgate/origin/leads"
)

// fire sends each body at once from its own goroutine, after a common start,
// and returns the replies in the order of bodies.
func fire(f *fixture, bodies []string) []reply {
	replies := make([]reply, len(bodies))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, body := range bodies {
		wg.Go(func() {
			<-start
			replies[i] = send(f.handler, "POST", "/v1/leads", strings.NewReader(body), f.identity())
		})
	}
	close(start)
	wg.Wait()
	return replies
}

// The same enquiry from 50 goroutines at once: one lead, 50 submissions,
// one answer that is not a duplicate and 49 that point at it.
func TestConcurrentDuplicatesMakeOneLead(t *testing.T) {
	f := newFixture(t, leads.Config{})
	f.mustListings(t)
	const body = `{"name":"Ann","email":"ann@example.com","mobile":"0412 345 678","type":"inquiry","listing_id":"L1"}`
	bodies := make([]string, 50)
	for i := range bodies {
		bodies[i] = body
	}
	ids := map[int64]int{}
	fresh := 0
	for _, r := range fire(f, bodies) {
		if r.status != http.StatusCreated {
			t.Fatalf("%d %s", r.status, r.body)
		}
		c := mustCreated(t, r.body)
		ids[c.LeadID]++
		if !c.Duplicate {
			fresh++
		}
	}
	if len(ids) != 1 || fresh != 1 {
		t.Errorf("lead ids %v, %d not duplicates; want one lead, one fresh answer", ids, fresh)
	}
	if n := f.count(t, `SELECT count(*) FROM leads`); n != 1 {
		t.Errorf("%d leads, want 1", n)
	}
	if n := f.count(t, `SELECT count(*) FROM lead_submissions`); n != 50 {
		t.Errorf("%d submissions, want 50", n)
	}
	if n := f.count(t, `SELECT count(*) FROM lead_submissions WHERE duplicate`); n != 49 {
		t.Errorf("%d duplicate submissions, want 49", n)
	}
	if n := f.count(t, `SELECT count(*) FROM lead_assignments`); n != 1 {
		t.Errorf("%d assignments, want 1", n)
	}
}

// Racing duplicates that match on different contacts (one by e-mail, one
// by phone, one by both) still make one lead.
func TestConcurrentDuplicatesAcrossContacts(t *testing.T) {
	f := newFixture(t, leads.Config{})
	bodies := []string{
		`{"name":"Ann","email":"ann@example.com","phone":"0412 345 678"}`,
		`{"name":"Ann","email":"ANN@example.com"}`,
		`{"name":"Ann","mobile":"+61412345678"}`,
	}
	for round := range 10 {
		f.mustExec(t, `DELETE FROM leads`)
		for _, r := range fire(f, append(append([]string{}, bodies...), bodies...)) {
			if r.status != http.StatusCreated {
				t.Fatalf("%d %s", r.status, r.body)
			}
		}
		// The e-mail-only and phone-only ones may each race the other, but
		// both share a key with the first: at most two leads, and never one
		// per request.
		if n := f.count(t, `SELECT count(*) FROM leads`); n > 2 {
			t.Fatalf("round %d: %d leads from 6 overlapping submissions", round, n)
		}
	}
}

// N distinct leads at once to a site with k agents and no listing: each
// agent gets N/k of them, exactly.
func TestRoundRobinIsFairUnderConcurrency(t *testing.T) {
	f := newFixture(t, leads.Config{})
	const k, n = 3, 60
	for i := range k {
		f.mustAgent(t, fmt.Sprintf("Agent %d", i), fmt.Sprintf("agent%d@agency.example", i))
	}
	bodies := make([]string, n)
	for i := range bodies {
		bodies[i] = fmt.Sprintf(`{"name":"Buyer %d","email":"buyer%d@example.com"}`, i, i)
	}
	per := map[string]int{}
	for _, r := range fire(f, bodies) {
		if r.status != http.StatusCreated {
			t.Fatalf("%d %s", r.status, r.body)
		}
		c := mustCreated(t, r.body)
		if c.AssignedTo == nil || c.Duplicate {
			t.Fatalf("%s", r.body)
		}
		per[*c.AssignedTo]++
	}
	if len(per) != k {
		t.Fatalf("assigned to %v", per)
	}
	for agent, got := range per {
		if got != n/k {
			t.Errorf("%s got %d leads, want %d (all: %v)", agent, got, n/k, per)
		}
	}
	rows, err := f.db.Pool.Query(context.Background(),
		`SELECT assigned_to, count(*) FROM lead_assignments WHERE reason = 'round_robin' GROUP BY assigned_to`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var agent string
		var c int
		rows.Scan(&agent, &c)
		if c != n/k {
			t.Errorf("lead_assignments: %s has %d, want %d", agent, c, n/k)
		}
	}
}
