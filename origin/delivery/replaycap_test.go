package delivery_test

import (
	"context"
	"testing"
	"time"

	"github.com/listgate/listgate/origin/store"
)

// A replay queues at most store.MaxReplay deliveries, the oldest events
// first, and is refused while that many of the endpoint's wait.
func TestReplayBounded(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	ep := f.endpoint(t, "lead.created")
	lead := f.lead(t, `{"name":"Rae Replay","email":"rae@example.com","type":"inquiry"}`)
	// Past deliveries, as if sent: more than one replay may queue.
	if _, err := f.db.Pool.Exec(ctx, `INSERT INTO deliveries (site_id, endpoint_id, event_id, event_type, lead_id, state, done_at)
		SELECT $1, $2, 1000000 + i, 'lead.created', $3, 'delivered', now() FROM generate_series(1, $4::int) i`,
		f.site, ep.ID, lead, store.MaxReplay+500); err != nil {
		t.Fatal(err)
	}
	n, err := f.db.ReplayWebhooks(ctx, f.site, ep.ID, f.since(t))
	if err != nil || n != store.MaxReplay {
		t.Fatalf("replay queued %d, %v; want %d", n, err, store.MaxReplay)
	}
	var oldest int64
	f.scalar(t, &oldest, `SELECT min(event_id) FROM deliveries WHERE endpoint_id = $1 AND state = 'pending'`, ep.ID)
	if oldest > 1000001 {
		t.Errorf("the replay began at event %d, not the oldest", oldest)
	}
	// While they wait, another replay is refused.
	if _, err := f.db.ReplayWebhooks(ctx, f.site, ep.ID, f.since(t)); err == nil {
		t.Error("a second replay was accepted while the first one's deliveries wait")
	}
}

// since is a time before anything of the fixture was created.
func (f *fixture) since(tb testing.TB) (t0 time.Time) {
	tb.Helper()
	f.scalar(tb, &t0, `SELECT now() - interval '1 hour'`)
	return t0
}
