package pairing

import (
	"errors"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

// at returns a pairing in status s, created at t0, expiring ten minutes
// later, as the state machine would have left it.
func at(s Status) *Pairing {
	p := &Pairing{ID: "p1", HomeURL: "https://agency.example", Status: s, Interval: 5 * time.Second,
		CreatedAt: t0, ExpiresAt: t0.Add(10 * time.Minute)}
	switch s {
	case StatusApproved, StatusDenied, StatusDelivered, StatusDisconnected:
		p.SiteID, p.DecidedAt, p.DecidedBy = "site-1", t0.Add(time.Minute), "operator"
	}
	switch s {
	case StatusDelivered, StatusDisconnected:
		p.KeyID, p.DeliveredAt = "key-1", t0.Add(2*time.Minute)
	}
	if s == StatusDisconnected {
		p.DisconnectedAt = t0.Add(3 * time.Minute)
	}
	return p
}

// Every transition from every status: the status it leads to, or the error
// it fails with (and then nothing changed).
func TestTransitions(t *testing.T) {
	live, late := t0.Add(time.Minute), t0.Add(10*time.Minute) // late: the moment the codes expire
	type event func(p *Pairing, now time.Time) error
	approve := func(p *Pairing, now time.Time) error { return p.Approve("site-2", "acct", now) }
	deny := func(p *Pairing, now time.Time) error { return p.Deny("acct", now) }
	deliver := func(p *Pairing, now time.Time) error { return p.Deliver("key-2", now) }
	disconnect := func(p *Pairing, now time.Time) error { return p.Disconnect("", now) }
	replace := func(p *Pairing, now time.Time) error { return p.Disconnect("p2", now) }
	tests := []struct {
		name    string
		from    Status
		event   event
		now     time.Time
		want    Status
		wantErr error
	}{
		{"pending approve", StatusPending, approve, live, StatusApproved, nil},
		{"pending approve expired", StatusPending, approve, late, "", ErrExpired},
		{"pending deny", StatusPending, deny, live, StatusDenied, nil},
		{"pending deny expired", StatusPending, deny, late, "", ErrExpired},
		{"pending deliver", StatusPending, deliver, live, "", ErrDecided},
		{"pending disconnect", StatusPending, disconnect, live, "", ErrNotConnected},

		{"approved approve", StatusApproved, approve, live, "", ErrDecided},
		{"approved deny", StatusApproved, deny, live, "", ErrDecided},
		{"approved deliver", StatusApproved, deliver, live, StatusDelivered, nil},
		{"approved deliver expired", StatusApproved, deliver, late, "", ErrExpired},
		{"approved disconnect", StatusApproved, disconnect, live, "", ErrNotConnected},

		{"denied approve", StatusDenied, approve, live, "", ErrDecided},
		{"denied deny", StatusDenied, deny, live, "", ErrDecided},
		{"denied deliver", StatusDenied, deliver, live, "", ErrDecided},
		{"denied disconnect", StatusDenied, disconnect, live, "", ErrNotConnected},

		{"delivered approve", StatusDelivered, approve, live, "", ErrDecided},
		{"delivered deny", StatusDelivered, deny, live, "", ErrDecided},
		{"delivered deliver", StatusDelivered, deliver, live, "", ErrDecided},
		{"delivered disconnect", StatusDelivered, disconnect, live, StatusDisconnected, nil},
		{"delivered disconnect after expiry", StatusDelivered, disconnect, late.Add(time.Hour), StatusDisconnected, nil},
		{"delivered replaced", StatusDelivered, replace, live, StatusDisconnected, nil},

		{"expired approve", StatusExpired, approve, live, "", ErrExpired},
		{"expired deny", StatusExpired, deny, live, "", ErrExpired},
		{"expired deliver", StatusExpired, deliver, live, "", ErrExpired},
		{"expired disconnect", StatusExpired, disconnect, live, "", ErrNotConnected},

		{"disconnected approve", StatusDisconnected, approve, live, "", ErrDecided},
		{"disconnected deliver", StatusDisconnected, deliver, live, "", ErrDecided},
		{"disconnected disconnect", StatusDisconnected, disconnect, live, "", ErrNotConnected},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := at(tt.from)
			before := *p
			err := tt.event(p, tt.now)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("error %v, want %v", err, tt.wantErr)
				}
				if *p != before {
					t.Fatalf("a failed transition changed the pairing:\n%+v\n%+v", before, *p)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.Status != tt.want {
				t.Fatalf("status %s, want %s", p.Status, tt.want)
			}
			switch tt.want {
			case StatusApproved:
				if p.SiteID != "site-2" || p.DecidedAt != tt.now || p.DecidedBy != "acct" {
					t.Errorf("approval not recorded: %+v", p)
				}
			case StatusDenied:
				if p.SiteID != "" || p.DecidedAt != tt.now || p.DecidedBy != "acct" {
					t.Errorf("denial not recorded: %+v", p)
				}
			case StatusDelivered:
				if p.KeyID != "key-2" || p.DeliveredAt != tt.now {
					t.Errorf("delivery not recorded: %+v", p)
				}
			case StatusDisconnected:
				if p.DisconnectedAt != tt.now || p.KeyID != "key-1" {
					t.Errorf("disconnection not recorded: %+v", p)
				}
				if tt.name == "delivered replaced" && p.ReplacedBy != "p2" {
					t.Errorf("replaced_by %q", p.ReplacedBy)
				}
			}
		})
	}
}

func TestEffective(t *testing.T) {
	for _, tt := range []struct {
		status Status
		now    time.Time
		want   Status
	}{
		{StatusPending, t0.Add(10*time.Minute - time.Nanosecond), StatusPending},
		{StatusPending, t0.Add(10 * time.Minute), StatusExpired},
		{StatusApproved, t0.Add(10 * time.Minute), StatusExpired},
		{StatusDenied, t0.Add(time.Hour), StatusDenied},
		{StatusDelivered, t0.Add(time.Hour), StatusDelivered},
		{StatusDisconnected, t0.Add(time.Hour), StatusDisconnected},
	} {
		t.Run(string(tt.status)+" at "+tt.now.Sub(t0).String(), func(t *testing.T) {
			if got := at(tt.status).Effective(tt.now); got != tt.want {
				t.Errorf("Effective = %s, want %s", got, tt.want)
			}
		})
	}
}

// A poll's answer in every status, and what it changes.
func TestPoll(t *testing.T) {
	tests := []struct {
		name         string
		from         Status
		lastPoll     time.Duration // since t0; <0: never polled
		now          time.Duration // since t0
		want         error         // nil: deliver
		changed      bool
		wantInterval time.Duration
	}{
		{"pending first poll", StatusPending, -1, time.Minute, AuthorizationPending, true, 5 * time.Second},
		{"pending after the interval", StatusPending, 0, 5 * time.Second, AuthorizationPending, true, 5 * time.Second},
		{"pending within the leeway", StatusPending, 0, 5*time.Second - pollLeeway, AuthorizationPending, true, 5 * time.Second},
		{"pending too fast", StatusPending, 0, 4 * time.Second, SlowDown, true, 10 * time.Second},
		{"approved too fast", StatusApproved, 0, time.Second, SlowDown, true, 10 * time.Second},
		{"approved", StatusApproved, 0, time.Minute, nil, false, 5 * time.Second},
		{"approved never polled", StatusApproved, -1, time.Minute, nil, false, 5 * time.Second},
		{"pending expired", StatusPending, 0, 10 * time.Minute, ExpiredToken, false, 5 * time.Second},
		{"approved expired", StatusApproved, 0, 10 * time.Minute, ExpiredToken, false, 5 * time.Second},
		{"denied", StatusDenied, 0, time.Minute, AccessDenied, false, 5 * time.Second},
		{"denied too fast", StatusDenied, 0, 0, AccessDenied, false, 5 * time.Second},
		{"denied after expiry", StatusDenied, 0, time.Hour, AccessDenied, false, 5 * time.Second},
		{"delivered", StatusDelivered, 0, 3 * time.Minute, ExpiredToken, false, 5 * time.Second},
		{"expired", StatusExpired, 0, time.Minute, ExpiredToken, false, 5 * time.Second},
		{"disconnected", StatusDisconnected, 0, 4 * time.Minute, ExpiredToken, false, 5 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := at(tt.from)
			if tt.lastPoll >= 0 {
				p.LastPolledAt = t0.Add(tt.lastPoll)
			}
			before := *p
			now := t0.Add(tt.now)
			got, changed := p.Poll(now)
			if got != tt.want || changed != tt.changed {
				t.Fatalf("Poll = %v, changed %v; want %v, %v", got, changed, tt.want, tt.changed)
			}
			if p.Interval != tt.wantInterval {
				t.Errorf("interval %s, want %s", p.Interval, tt.wantInterval)
			}
			if changed && p.LastPolledAt != now {
				t.Errorf("last poll %s, want now", p.LastPolledAt)
			}
			if !changed && *p != before {
				t.Errorf("unchanged poll changed the pairing")
			}
		})
	}
}

// slow_down adds 5 s for this and every later poll (RFC 8628 §3.5), up to
// MaxInterval; a client that then waits the new interval is answered.
func TestSlowDownGrows(t *testing.T) {
	p := at(StatusPending)
	now := t0
	p.LastPolledAt = now
	for want := 10 * time.Second; want <= MaxInterval+SlowDownStep; want += SlowDownStep {
		now = now.Add(time.Second)
		if got, _ := p.Poll(now); got != SlowDown {
			t.Fatalf("poll after 1s: %v", got)
		}
		if p.Interval != min(want, MaxInterval) {
			t.Fatalf("interval %s, want %s", p.Interval, min(want, MaxInterval))
		}
	}
	if got, _ := p.Poll(now.Add(MaxInterval)); got != AuthorizationPending {
		t.Fatalf("poll after the grown interval: %v", got)
	}
}

func TestWrongEntry(t *testing.T) {
	p := at(StatusPending)
	for i := 1; i <= 5; i++ {
		if !p.WrongEntry(5, t0) {
			t.Fatalf("wrong entry %d not counted", i)
		}
		want := StatusPending
		if i == 5 {
			want = StatusExpired
		}
		if p.FailedAttempts != i || p.Status != want {
			t.Fatalf("after %d wrong entries: %d, %s", i, p.FailedAttempts, p.Status)
		}
	}
	if p.WrongEntry(5, t0) || p.FailedAttempts != 5 {
		t.Error("a dead code still counts wrong entries")
	}
	for _, s := range []Status{StatusApproved, StatusDenied, StatusDelivered, StatusDisconnected} {
		if q := at(s); q.WrongEntry(5, t0) || q.FailedAttempts != 0 {
			t.Errorf("%s counts wrong entries", s)
		}
	}
	if q := at(StatusPending); q.WrongEntry(5, t0.Add(time.Hour)) {
		t.Error("an expired code counts wrong entries")
	}
}

func TestPollErrorDescriptions(t *testing.T) {
	for _, e := range []PollError{AuthorizationPending, SlowDown, AccessDenied, ExpiredToken, InvalidGrant} {
		if e.Description() == "" || e.Description() == string(e) || e.Error() != string(e) {
			t.Errorf("%s: description %q", e, e.Description())
		}
	}
}
