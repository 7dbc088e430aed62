package delivery_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/listgate/listgate/origin/delivery"
	"github.com/listgate/listgate/pkg/mail"
)

// slowMailer accepts each message after wait, or when the attempt's context
// ends, whichever is first (a server that answers the end of DATA at the
// last moment), and counts what it is given.
type slowMailer struct {
	wait  time.Duration
	sends atomic.Int32
}

func (m *slowMailer) Send(ctx context.Context, _ mail.Message) error {
	m.sends.Add(1)
	select {
	case <-time.After(m.wait):
	case <-ctx.Done():
	}
	return nil
}

// emailLead sets up a lead e-mail to the site's default recipient and
// returns the new lead's id.
func (f *fixture) emailLead(tb testing.TB, name string) int64 {
	tb.Helper()
	ctx := context.Background()
	if err := f.db.SetEmailDelivery(ctx, true); err != nil {
		tb.Fatal(err)
	}
	if _, err := f.db.Pool.Exec(ctx, `UPDATE sites SET default_lead_recipient = 'office@agency.example' WHERE id = $1`, f.site); err != nil {
		tb.Fatal(err)
	}
	return f.lead(tb, `{"name":"`+name+`","email":"lease@example.com","type":"inquiry"}`)
}

// An attempt that lasts as long as an attempt may is still inside its
// claim's lease, whatever the Timeout: no other claim sends it meanwhile.
func TestLeaseOutlastsAttempt(t *testing.T) {
	f := newFixture(t)
	m := &slowMailer{wait: 4 * time.Second}
	f.worker(t, func(c *delivery.Config) { c.Mailer, c.Timeout = m, time.Second })
	id := f.emailLead(t, "Lena Long")
	waitState(t, f, id, "delivered")
	if n := m.sends.Load(); n != 1 {
		t.Errorf("the e-mail was sent %d times, want once", n)
	}
}

// An attempt that ends at its deadline still has its result recorded: a
// message the server accepted is delivered, not sent again.
func TestResultRecordedAfterDeadline(t *testing.T) {
	f := newFixture(t)
	m := &slowMailer{wait: time.Minute}
	f.worker(t, func(c *delivery.Config) { c.Mailer, c.Timeout, c.Lease = m, time.Second, time.Minute })
	id := f.emailLead(t, "Dee Deadline")
	waitState(t, f, id, "delivered")
	if n := m.sends.Load(); n != 1 {
		t.Errorf("the e-mail was sent %d times, want once", n)
	}
}
