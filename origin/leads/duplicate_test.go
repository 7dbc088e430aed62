package leads_test

import (
	"testing"
	"time"

	"github.com/listgate/listgate/origin/leads"
)

// The duplicate rule of API.md, case by case: a second submission after a
// first one is attached to the first lead, or makes a lead of its own.
func TestDuplicates(t *testing.T) {
	const first = `{"name":"Ann","email":"Ann@Example.com","mobile":"0412 345 678","type":"inquiry","listing_id":"L1"}`
	for name, tc := range map[string]struct {
		second    string
		ageFirst  time.Duration // how old the first lead is made
		duplicate bool
	}{
		"identical":                   {first, 0, true},
		"e-mail in another case":      {`{"name":"Ann L","email":" ann@example.COM ","type":"inquiry","listing_id":"AG:L1"}`, 0, true},
		"same number, other field":    {`{"name":"A","phone":"+61 412 345 678","type":"inquiry","listing_id":"L1"}`, 0, true},
		"same e-mail, other number":   {`{"name":"A","email":"ann@example.com","phone":"0412 999 999","type":"inquiry","listing_id":"L1"}`, 0, true},
		"other priority and message":  {`{"name":"A","email":"ann@example.com","type":"inquiry","listing_id":"L1","priority":"hot","message":"again"}`, 0, true},
		"other type":                  {`{"name":"Ann","email":"ann@example.com","type":"appraisal","listing_id":"L1"}`, 0, false},
		"default type is general":     {`{"name":"Ann","email":"ann@example.com","listing_id":"L1"}`, 0, false},
		"other listing":               {`{"name":"Ann","email":"ann@example.com","type":"inquiry","listing_id":"L2"}`, 0, false},
		"no listing":                  {`{"name":"Ann","email":"ann@example.com","type":"inquiry"}`, 0, false},
		"other contact":               {`{"name":"Ann","email":"ann@example.org","type":"inquiry","listing_id":"L1"}`, 0, false},
		"just inside the window":      {first, 23 * time.Hour, true},
		"outside the window":          {first, 25 * time.Hour, false},
		"first one was moved along":   {first, time.Hour, true},
		"agent named on the second":   {`{"name":"Ann","email":"ann@example.com","type":"inquiry","listing_id":"L1","agent_email":"bea@agency.example"}`, 0, true},
		"phone matches mobile across": {`{"name":"Ann","mobile":"(04) 1234 5678","type":"inquiry","listing_id":"L1"}`, 0, true},
	} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, leads.Config{})
			f.mustListings(t)
			a := f.mustCreate(t, first, nil)
			if a.Duplicate || a.AssignedTo == nil || *a.AssignedTo != "Al@Agency.example" {
				t.Fatalf("first: %+v", a)
			}
			if tc.ageFirst > 0 {
				f.mustExec(t, `UPDATE leads SET created_at = now() - make_interval(secs => $2), status = 'contacted' WHERE id = $1`,
					a.LeadID, tc.ageFirst.Seconds())
			}
			b := f.mustCreate(t, tc.second, nil)
			if b.Duplicate != tc.duplicate {
				t.Fatalf("second: %+v, want duplicate=%v", b, tc.duplicate)
			}
			leadsN := f.count(t, `SELECT count(*) FROM leads WHERE site_id = $1`, f.site)
			subs := f.count(t, `SELECT count(*) FROM lead_submissions WHERE site_id = $1`, f.site)
			if tc.duplicate {
				wantStatus := "new"
				if tc.ageFirst > 0 {
					wantStatus = "contacted"
				}
				if b.LeadID != a.LeadID || b.Status != wantStatus || b.AssignedTo == nil || *b.AssignedTo != *a.AssignedTo {
					t.Errorf("duplicate answered %+v, want the first lead %d (%s, %s)", b, a.LeadID, wantStatus, *a.AssignedTo)
				}
				dups := f.count(t, `SELECT count(*) FROM lead_submissions WHERE lead_id = $1 AND duplicate`, a.LeadID)
				if leadsN != 1 || subs != 2 || dups != 1 {
					t.Errorf("%d leads, %d submissions (%d duplicate); want 1, 2 (1)", leadsN, subs, dups)
				}
			} else if b.LeadID == a.LeadID || leadsN != 2 || subs != 2 {
				t.Errorf("%+v: %d leads, %d submissions; want a new lead", b, leadsN, subs)
			}
		})
	}
}

// The window comes from the configuration.
func TestDuplicateWindowIsConfigurable(t *testing.T) {
	f := newFixture(t, leads.Config{DuplicateWindow: time.Hour})
	const body = `{"name":"Ann","email":"ann@example.com"}`
	a := f.mustCreate(t, body, nil)
	if b := f.mustCreate(t, body, nil); !b.Duplicate || b.LeadID != a.LeadID {
		t.Fatalf("within the hour: %+v", b)
	}
	f.mustExec(t, `UPDATE leads SET created_at = now() - interval '61 minutes' WHERE id = $1`, a.LeadID)
	if c := f.mustCreate(t, body, nil); c.Duplicate {
		t.Fatalf("after the hour: %+v", c)
	}
}

// Leads of other sites are never duplicates.
func TestDuplicatesStayInTheSite(t *testing.T) {
	f := newFixture(t, leads.Config{})
	other := newFixtureOn(t, f.db, leads.Config{})
	const body = `{"name":"Ann","email":"ann@example.com"}`
	a := f.mustCreate(t, body, nil)
	b := other.mustCreate(t, body, nil)
	if b.Duplicate || b.LeadID == a.LeadID {
		t.Fatalf("same enquiry on another site: %+v", b)
	}
	// The earliest lead within the window is the one a duplicate joins.
	c := f.mustCreate(t, `{"name":"Ann","email":"ann+2@example.com","phone":"0412345678"}`, nil)
	d := f.mustCreate(t, `{"name":"Ann","email":"ann@example.com","phone":"0412345678"}`, nil)
	if !d.Duplicate || d.LeadID != a.LeadID || c.LeadID == a.LeadID {
		t.Errorf("matching two leads joined %d; want the earlier %d (other %d)", d.LeadID, a.LeadID, c.LeadID)
	}
}
