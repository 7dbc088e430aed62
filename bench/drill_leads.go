package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	json "github.com/goccy/go-json"
	"github.com/jackc/pgx/v5"
)

// The drills' lead client: every enquiry retried with its Idempotency-Key
// as a careful API user would, then checked against the leads table.

// leadResult is what became of one enquiry after every retry.
type leadResult struct {
	email     string
	leadID    int64
	acked     bool // a 201 came back
	duplicate bool // the 201 said duplicate: true
	attempts  int
	inFlight  int // 409s: the key's claim was still held (by a request the outage cut)
	final     int // the last status (0: transport error)
	body      string
	at        time.Time // when the last answer came
}

// Lead retry policy: a client retries a 503 or a connection error with the
// same Idempotency-Key after Retry-After, and a 409 (the key is still in
// flight) after a second, always with the same key. A claim whose request
// the outage cut is released by the origin's idempotency lease (its lead
// timeout + 5 s), well within leadDeadline.
const (
	leadMaxAttempts = 40
	leadDeadline    = 45 * time.Second
)

// submitLead sends enquiry i of run (unique e-mail, its own Idempotency-Key)
// through the balancer until it is acknowledged or the retries run out.
func (d *driver) submitLead(run string, i int64, key string) leadResult {
	email := fmt.Sprintf("drill-%s-%d@example.com", run, i)
	body := fmt.Appendf(nil, `{"name":"Drill Buyer %d","email":%q,"type":"inquiry","message":"Is it still available? (%s)"}`,
		i, email, run)
	r := leadResult{email: email}
	idem := fmt.Sprintf("drill-%s-%d", run, i)
	deadline := time.Now().Add(leadDeadline)
	for r.attempts < leadMaxAttempts && time.Now().Before(deadline) {
		r.attempts++
		e := d.lb.pick()
		s, b := d.do("lead", e, "POST", "/v1/leads", body, map[string]string{"Authorization": "Bearer " + key,
			"Content-Type": "application/json", "Idempotency-Key": idem})
		r.final, r.body, r.at = s.status, string(b), s.end
		switch {
		case s.status == 201:
			var c struct {
				LeadID    int64 `json:"lead_id"`
				Duplicate bool
			}
			if err := json.Unmarshal(b, &c); err != nil || c.LeadID == 0 {
				return r
			}
			r.acked, r.leadID, r.duplicate = true, c.LeadID, c.Duplicate
			return r
		case s.status == 0:
			d.lb.markDown(e)
			time.Sleep(100 * time.Millisecond)
		case s.status == 503 || s.status == 429:
			time.Sleep(time.Duration(min(max(s.retryAfter, 1), 3)) * time.Second)
		case s.status == 409:
			r.inFlight++
			time.Sleep(time.Second)
		default:
			return r // a 4xx or a 500: not for retrying
		}
	}
	return r
}

// probeWrites sends one lead after another (a new enquiry each, one try,
// every 20 ms) until one is acknowledged or d passes: the moment writes
// work again, free of a client's back-off. It returns the results, the
// acknowledged one last.
func (d *driver) probeWrites(key string, dur time.Duration) []leadResult {
	run := runID() + "p"
	var rs []leadResult
	deadline := time.Now().Add(dur)
	for i := int64(1); time.Now().Before(deadline); i++ {
		email := fmt.Sprintf("drill-%s-%d@example.com", run, i)
		body := fmt.Appendf(nil, `{"name":"Drill Probe %d","email":%q,"type":"general"}`, i, email)
		s, b := d.do("probe", d.lb.pick(), "POST", "/v1/leads", body, map[string]string{"Authorization": "Bearer " + key,
			"Content-Type": "application/json", "Idempotency-Key": "probe-" + run + "-" + strconv.FormatInt(i, 10)})
		r := leadResult{email: email, attempts: 1, final: s.status, body: string(b), at: s.end}
		if s.status == 201 {
			var c struct {
				LeadID int64 `json:"lead_id"`
			}
			if json.Unmarshal(b, &c) == nil && c.LeadID != 0 {
				r.acked, r.leadID = true, c.LeadID
				return append(rs, r)
			}
		}
		rs = append(rs, r)
		time.Sleep(20 * time.Millisecond)
	}
	return rs
}

// acknowledged keeps the results that were acknowledged (for probes, whose
// failures are not retried).
func acknowledged(rs []leadResult) []leadResult {
	var out []leadResult
	for _, r := range rs {
		if r.acked {
			out = append(out, r)
		}
	}
	return out
}

// leadCheck is what the database says of a drill's enquiries.
type leadCheck struct {
	Sent       int `json:"sent"`
	Acked      int `json:"acknowledged"`
	NotAcked   int `json:"not_acknowledged"`
	Missing    int `json:"acknowledged_missing"` // a 201 without its row
	Duplicates int `json:"stored_twice"`         // one enquiry, several leads
	InFlight   int `json:"in_flight_409s"`
	Retried    int `json:"leads_retried"`
	Attempts   int `json:"attempts"`
	Statuses   map[int]int
}

func (c leadCheck) String() string {
	return fmt.Sprintf("%d leads, %d acknowledged (%d after retries, %d attempts), %d not acknowledged, %d acknowledged but missing, %d stored twice, %d retries answered 409 (key still in flight)",
		c.Sent, c.Acked, c.Retried, c.Attempts, c.NotAcked, c.Missing, c.Duplicates, c.InFlight)
}

// err reports the first broken promise: a lead lost, stored twice, or not
// stored after every retry.
func (c leadCheck) err() error {
	switch {
	case c.Missing > 0:
		return fmt.Errorf("%d acknowledged leads missing from Postgres", c.Missing)
	case c.Duplicates > 0:
		return fmt.Errorf("%d enquiries stored more than once", c.Duplicates)
	case c.NotAcked > 0:
		return fmt.Errorf("%d leads not acknowledged after %d attempts or %v", c.NotAcked, leadMaxAttempts, leadDeadline)
	}
	return nil
}

// checkLeads looks every result up in Postgres by its e-mail.
func checkLeads(ctx context.Context, dbURL, site string, results []leadResult) (leadCheck, error) {
	c := leadCheck{Sent: len(results), Statuses: map[int]int{}}
	if len(results) == 0 {
		return c, errors.New("no leads were sent")
	}
	emails := make([]string, len(results))
	for i, r := range results {
		emails[i] = r.email
	}
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return c, err
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT email, id FROM leads WHERE site_id = $1 AND email = ANY($2)`, site, emails)
	if err != nil {
		return c, err
	}
	stored := map[string][]int64{}
	for rows.Next() {
		var email string
		var id int64
		if err := rows.Scan(&email, &id); err != nil {
			return c, err
		}
		stored[email] = append(stored[email], id)
	}
	if err := rows.Err(); err != nil {
		return c, err
	}
	for _, r := range results {
		c.Attempts += r.attempts
		c.InFlight += r.inFlight
		c.Statuses[r.final]++
		if len(stored[r.email]) > 1 {
			c.Duplicates++
		}
		if !r.acked {
			c.NotAcked++
			continue
		}
		c.Acked++
		if r.attempts > 1 {
			c.Retried++
		}
		found := false
		for _, id := range stored[r.email] {
			found = found || id == r.leadID
		}
		if !found {
			c.Missing++
		}
	}
	return c, nil
}
