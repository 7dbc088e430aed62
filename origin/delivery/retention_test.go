package delivery_test

import (
	"context"
	"testing"
	"time"

	"github.com/listgate/listgate/origin/store"
)

// Held deliveries (their endpoint was disabled) are kept DeliveryRetention,
// like the others, whether the outbox's trigger or a worker held them: a
// disabled endpoint's events do not pile up for ever.
func TestHeldDeliveriesSwept(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	ep := f.endpoint(t, "lead.created")
	if _, err := f.db.SetWebhookEnabled(ctx, f.site, ep.ID, false); err != nil {
		t.Fatal(err)
	}
	id := f.lead(t, `{"name":"Hal Held","email":"hal@example.com","type":"inquiry"}`)
	waitState(t, f, id, "held")
	swept, err := f.db.Sweep(ctx, time.Now().Add(store.DeliveryRetention+time.Hour), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	var n int
	f.scalar(t, &n, `SELECT count(*) FROM deliveries WHERE lead_id = $1`, id)
	if n != 0 || swept.Deliveries != 1 {
		t.Errorf("%d deliveries left, %d swept, after their retention; want 0 and 1", n, swept.Deliveries)
	}
}

// A held delivery that is replayed or sent again is pending, not finished:
// the sweep leaves it however long ago it was held.
func TestReplayedDeliveriesNotSwept(t *testing.T) {
	for _, how := range []string{"replay", "resend"} {
		t.Run(how, func(t *testing.T) {
			f := newFixture(t)
			ctx := context.Background()
			ep := f.endpoint(t, "lead.created")
			id := f.lead(t, `{"name":"Rae Replay","email":"rae@example.com","type":"inquiry"}`)
			// A worker found its endpoint disabled 29 days ago.
			var del int64
			f.scalar(t, &del, `UPDATE deliveries SET state = 'held', done_at = now() - interval '29 days',
				created_at = now() - interval '29 days' WHERE lead_id = $1 RETURNING id`, id)
			var err error
			if how == "replay" {
				_, err = f.db.ReplayWebhooks(ctx, f.site, ep.ID, time.Now().Add(-store.DeliveryRetention))
			} else {
				_, err = f.db.ResendDelivery(ctx, f.site, del)
			}
			if err != nil {
				t.Fatal(err)
			}
			waitState(t, f, id, "pending")
			if _, err := f.db.Sweep(ctx, time.Now().Add(2*24*time.Hour), time.Hour); err != nil {
				t.Fatal(err)
			}
			var n int
			f.scalar(t, &n, `SELECT count(*) FROM deliveries WHERE lead_id = $1 AND state = 'pending'`, id)
			if n != 1 {
				t.Errorf("%d pending deliveries after the sweep, want 1", n)
			}
		})
	}
}
