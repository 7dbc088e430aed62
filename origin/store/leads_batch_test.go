package store_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/listgate/listgate/origin/store"
)

// mustGroup stores nls as one group and fails unless the group stored
// every one of them.
func (f *leadsFixture) mustGroup(tb testing.TB, nls ...store.NewLead) []store.LeadOutcome {
	tb.Helper()
	outs, errs, grouped := f.db.SubmitLeadGroup(context.Background(), nls)
	for i := range nls {
		if errs[i] != nil || !grouped[i] {
			tb.Fatalf("submission %d: grouped %v, error %v", i, grouped[i], errs[i])
		}
	}
	return outs
}

// Two submissions with a contact in common in one group are a lead and its
// duplicate, as if the second had come after the first committed: one
// lead, two submissions, and the duplicate's answer names the lead and its
// assignee (assigned by round robin at the end of the group).
func TestLeadGroupSameContactIsADuplicate(t *testing.T) {
	f := newLeadsFixture(t)
	other := f.lead("bob@example.com", 2)
	outs := f.mustGroup(t, f.lead("ann@example.com", 1), other, f.lead("ann@example.com", 1))
	first, dup := outs[0], outs[2]
	if first.Duplicate || first.LeadID == 0 || first.Reason != store.AssignedByRoundRobin {
		t.Fatalf("first: %+v", first)
	}
	if !dup.Duplicate || dup.LeadID != first.LeadID || dup.Reason != "" {
		t.Fatalf("duplicate: %+v, first %+v", dup, first)
	}
	for i, o := range outs {
		if o.AssignedTo == nil || *o.AssignedTo != "al@agency.example" {
			t.Errorf("submission %d assigned to %v, want al@agency.example", i, o.AssignedTo)
		}
		if !bytes.Contains(o.Response, []byte(`"assigned_to":"al@agency.example"`)) {
			t.Errorf("submission %d answered %s", i, o.Response)
		}
	}
	if c := f.counts(t); c != (counts{leads: 2, submissions: 3, assignments: 2, events: 3}) {
		t.Errorf("rows %+v", c)
	}
	var assigned int
	if err := f.db.Pool.QueryRow(context.Background(),
		`SELECT count(*) FROM leads WHERE site_id = $1 AND assigned_to = 'al@agency.example'`, f.site).Scan(&assigned); err != nil {
		t.Fatal(err)
	}
	if assigned != 2 {
		t.Errorf("%d leads assigned in the table, want 2", assigned)
	}
}

// An Idempotency-Key used twice in one group: the second use replays the
// first's answer (which names the assignee), as it would after the first
// committed; with another body it is refused. The answer stored with the
// key is the one given.
func TestLeadGroupSameKeyReplays(t *testing.T) {
	f := newLeadsFixture(t)
	a := f.lead("ann@example.com", 1)
	a.Key = f.keyReq("k1", "body", time.Hour)
	again := f.lead("ann@example.com", 1)
	again.Key = f.keyReq("k1", "body", time.Hour)
	otherBody := f.lead("carl@example.com", 3)
	otherBody.Key = f.keyReq("k1", "another body", time.Hour)
	outs := f.mustGroup(t, a, again, otherBody)
	if outs[0].Key != store.IdempotencyClaimed || outs[0].LeadID == 0 {
		t.Fatalf("first: %+v", outs[0])
	}
	if outs[1].Key != store.IdempotencyReplay || outs[1].ResponseStatus != 201 || !bytes.Equal(outs[1].Response, outs[0].Response) {
		t.Fatalf("second use: %+v %s, first answered %s", outs[1], outs[1].Response, outs[0].Response)
	}
	if outs[2].Key != store.IdempotencyMismatch {
		t.Fatalf("another body: %+v", outs[2])
	}
	if !bytes.Contains(outs[0].Response, []byte(`"assigned_to":"al@agency.example"`)) {
		t.Errorf("answered %s", outs[0].Response)
	}
	var stored []byte
	if err := f.db.Pool.QueryRow(context.Background(), `SELECT response_body FROM idempotency_keys
		WHERE site_id = $1 AND key_id = $2 AND idem_key = 'k1' AND state = 'done'`, f.site, f.keyID).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(stored, outs[0].Response) {
		t.Errorf("stored %s, answered %s", stored, outs[0].Response)
	}
	// After the group, a retry replays the same answer.
	if r := f.mustSubmit(t, again); r.Key != store.IdempotencyReplay || !bytes.Equal(r.Response, outs[0].Response) {
		t.Errorf("later retry: %+v %s", r, r.Response)
	}
	if c := f.counts(t); c.leads != 1 || c.submissions != 1 {
		t.Errorf("rows %+v", c)
	}
}

// One submission the database refuses does not cost the others of its
// group: it fails alone, they are stored once each.
func TestLeadGroupOneBadSubmission(t *testing.T) {
	f := newLeadsFixture(t)
	bad := f.lead("bad@example.com", 2)
	bad.Type = "no such type" // refused by the table's check
	good2 := f.lead("carl@example.com", 3)
	good2.Key = f.keyReq("k3", "body", time.Hour)
	outs, errs, _ := f.db.SubmitLeadGroup(context.Background(),
		[]store.NewLead{f.lead("ann@example.com", 1), bad, good2})
	if errs[1] == nil {
		t.Fatalf("the bad submission was stored: %+v", outs[1])
	}
	for _, i := range []int{0, 2} {
		if errs[i] != nil || outs[i].LeadID == 0 || outs[i].Duplicate {
			t.Fatalf("submission %d: %+v %v", i, outs[i], errs[i])
		}
	}
	if outs[2].Key != store.IdempotencyClaimed {
		t.Errorf("key: %+v", outs[2])
	}
	if c := f.counts(t); c != (counts{leads: 2, submissions: 2, assignments: 2, events: 2}) {
		t.Errorf("rows %+v", c)
	}
}

// Round robin over groups: the new leads of a group take consecutive turns
// in the group's order (a duplicate takes none), the next group goes on
// where it stopped, and every agent gets the same share.
func TestLeadGroupRoundRobinIsFair(t *testing.T) {
	f := newLeadsFixture(t)
	ctx := context.Background()
	for _, email := range []string{"bea@agency.example", "cy@agency.example"} {
		if _, err := f.db.Pool.Exec(ctx, `INSERT INTO agents (site_id, name, email) VALUES ($1, 'Agent', $2)`, f.site, email); err != nil {
			t.Fatal(err)
		}
	}
	agents := []string{"al@agency.example", "bea@agency.example", "cy@agency.example"} // in id order
	per := map[string]int{}
	turn := 0
	for g := range 4 {
		var nls []store.NewLead
		for i := range 7 {
			n := g*7 + i
			nls = append(nls, f.lead(fmt.Sprintf("buyer%d@example.com", n), int64(100+n)))
			if i == 3 { // a duplicate of the group's first
				nls = append(nls, nls[0])
			}
		}
		for i, o := range f.mustGroup(t, nls...) {
			if o.Duplicate {
				if i != 4 || o.LeadID == 0 {
					t.Fatalf("group %d submission %d: %+v", g, i, o)
				}
				continue
			}
			want := agents[turn%len(agents)]
			turn++
			if o.AssignedTo == nil || *o.AssignedTo != want || o.Reason != store.AssignedByRoundRobin {
				t.Fatalf("group %d submission %d assigned to %v (%s), want %s", g, i, o.AssignedTo, o.Reason, want)
			}
			per[*o.AssignedTo]++
		}
	}
	if want := map[string]int{agents[0]: 10, agents[1]: 9, agents[2]: 9}; fmt.Sprint(per) != fmt.Sprint(want) {
		t.Errorf("shares %v, want %v (28 leads in turn)", per, want)
	}
	rows, err := f.db.Pool.Query(ctx, `SELECT a.assigned_to, count(*) FROM lead_assignments a
		JOIN leads l ON l.site_id = a.site_id AND l.id = a.lead_id AND l.assigned_to = a.assigned_to
		WHERE a.site_id = $1 AND a.reason = 'round_robin' GROUP BY a.assigned_to`, f.site)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	stored := map[string]int{}
	for rows.Next() {
		var a string
		var n int
		if err := rows.Scan(&a, &n); err != nil {
			t.Fatal(err)
		}
		stored[a] = n
	}
	if fmt.Sprint(stored) != fmt.Sprint(per) {
		t.Errorf("lead_assignments %v, answered %v", stored, per)
	}
}

// A group whose answer is lost after it committed is made again lead by
// lead, with the same attempt ids: each finds what the group stored, and
// nothing is stored twice.
func TestLeadGroupAnswerLost(t *testing.T) {
	f := newLeadsFixture(t)
	p := newDropProxy(t, "", "cut-after-commit@example.com")
	through := f.openThrough(t, p)
	keyed := f.lead("carl@example.com", 3)
	keyed.Key = f.keyReq("k1", "body", time.Hour)
	p.armed.Store(true)
	outs, errs, grouped := through.SubmitLeadGroup(context.Background(), []store.NewLead{
		f.lead("ann@example.com", 1), f.lead("cut-after-commit@example.com", 2), f.lead("ann@example.com", 1), keyed})
	if p.dropped.Load() != 1 {
		t.Fatalf("the proxy cut %d answers, want 1", p.dropped.Load())
	}
	for i, o := range outs {
		if errs[i] != nil || grouped[i] || !o.Repeated {
			t.Fatalf("submission %d: %+v %v (grouped %v), want the group's outcome, repeated alone", i, o, errs[i], grouped[i])
		}
	}
	if !outs[2].Duplicate || outs[2].LeadID != outs[0].LeadID || outs[0].Duplicate {
		t.Errorf("lead and duplicate: %+v, %+v", outs[0], outs[2])
	}
	if outs[3].Key != store.IdempotencyClaimed || !bytes.Contains(outs[3].Response, []byte(`"assigned_to":"al@agency.example"`)) {
		t.Errorf("keyed lead: %+v %s", outs[3], outs[3].Response)
	}
	if c := f.counts(t); c != (counts{leads: 3, submissions: 4, assignments: 3, events: 4}) {
		t.Errorf("rows %+v", c)
	}
}
