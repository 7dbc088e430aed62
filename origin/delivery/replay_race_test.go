package delivery_test

import (
	"context"
	"sync"
	"testing"
	"time"
)

// Two replays of an endpoint at once (a double click) queue each event
// once: the second waits for the first and finds its deliveries pending.
func TestConcurrentReplaysQueueOnce(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	ep := f.endpoint(t, "lead.created")
	const leads = 20
	for i := range leads {
		f.lead(t, `{"name":"Rex `+jsonNumber(int64(i))+`","email":"rex`+jsonNumber(int64(i))+`@example.com","type":"inquiry"}`)
	}
	if _, err := f.db.Pool.Exec(ctx, `UPDATE deliveries SET state = 'delivered', done_at = now()`); err != nil {
		t.Fatal(err)
	}
	for round := range 10 {
		var wg sync.WaitGroup
		queued := make([]int64, 2)
		for i := range queued {
			wg.Go(func() {
				n, err := f.db.ReplayWebhooks(ctx, f.site, ep.ID, time.Now().Add(-time.Hour))
				if err != nil {
					t.Error(err)
				}
				queued[i] = n
			})
		}
		wg.Wait()
		var pending int64
		f.scalar(t, &pending, `SELECT count(*) FROM deliveries WHERE state = 'pending'`)
		if queued[0]+queued[1] != leads || pending != leads {
			t.Fatalf("round %d: two replays at once queued %d and %d, %d pending; want %d in all", round, queued[0], queued[1], pending, leads)
		}
		if _, err := f.db.Pool.Exec(ctx, `UPDATE deliveries SET state = 'delivered', done_at = now() WHERE state = 'pending'`); err != nil {
			t.Fatal(err)
		}
	}
}

// Two "Send again" of one delivery at once queue it once.
func TestConcurrentResendsQueueOnce(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.endpoint(t, "lead.created")
	id := f.lead(t, `{"name":"Ros Resend","email":"ros@example.com","type":"inquiry"}`)
	var del int64
	f.scalar(t, &del, `UPDATE deliveries SET state = 'delivered', done_at = now() WHERE lead_id = $1 RETURNING id`, id)
	for round := range 10 {
		var wg sync.WaitGroup
		for range 2 {
			wg.Go(func() {
				if _, err := f.db.ResendDelivery(ctx, f.site, del); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		var pending int64
		f.scalar(t, &pending, `SELECT count(*) FROM deliveries WHERE state = 'pending'`)
		if pending != 1 {
			t.Fatalf("round %d: two resends at once left %d pending, want 1", round, pending)
		}
		if _, err := f.db.Pool.Exec(ctx, `UPDATE deliveries SET state = 'delivered', done_at = now() WHERE state = 'pending'`); err != nil {
			t.Fatal(err)
		}
	}
}
