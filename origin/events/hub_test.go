package events

import (
	"context"
	"fmt"
	"net"
	"net/http/httptest"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/listgate/listgate/origin/store"
	"github.com/listgate/listgate/origin/store/storetest"
	"github.com/listgate/listgate/pkg/internalapi"
	"github.com/listgate/listgate/pkg/model"
)

func TestCursorAccept(t *testing.T) {
	const timeout = 5 * time.Second
	type read struct {
		ids        []int64
		xmin, xmax int64
		want       int           // how many are published
		at         time.Duration // when, from the start
	}
	for name, tc := range map[string]struct {
		start    int64
		reads    []read
		last     int64
		forgiven []int64
	}{
		"contiguous": {0, []read{{[]int64{1, 2, 3}, 10, 10, 3, 0}}, 3, nil},
		"gap holds everything after it": {0, []read{
			{[]int64{1, 3, 4}, 10, 12, 1, 0},
			{[]int64{3, 4}, 11, 12, 0, time.Second}, // a transaction of the first snapshot still runs
		}, 1, nil},
		"gap filled by a late commit": {0, []read{
			{[]int64{1, 3}, 10, 12, 1, 0},
			{[]int64{2, 3}, 10, 12, 2, time.Second},
		}, 3, nil},
		"gap never filled, older transactions ended": {5, []read{
			{[]int64{7, 8}, 10, 12, 0, 0},
			{[]int64{7, 8}, 12, 14, 2, time.Second},
		}, 8, nil},
		"second gap beyond the first one's reach": {0, []read{
			{[]int64{2}, 10, 12, 0, 0},
			{[]int64{2, 5}, 12, 15, 1, time.Second}, // 1 never came; 3-4 are newer than the first snapshot
			{[]int64{5}, 14, 15, 0, 2 * time.Second},
			{[]int64{5}, 15, 16, 1, 3 * time.Second},
		}, 5, nil},
		"gap resolved, then contiguous": {0, []read{
			{[]int64{2}, 10, 12, 0, 0},
			{[]int64{2, 3, 4}, 13, 13, 3, time.Second},
		}, 4, nil},
		"ids past the first gap's reach wait for their own horizon": {0, []read{
			{[]int64{2}, 10, 12, 0, 0},
			{[]int64{4}, 13, 14, 0, time.Second}, // 1 never came, but 3 is newer than the first snapshot
			{[]int64{4}, 14, 14, 1, 2 * time.Second},
		}, 4, nil},
		"gap given up on after the timeout": {0, []read{
			{[]int64{3, 4}, 10, 12, 0, 0},
			{[]int64{3, 4}, 10, 12, 0, timeout - 1},
			{[]int64{3, 4}, 10, 12, 2, timeout},
		}, 4, []int64{1, 2}},
		"given up only as far as the gap reached": {0, []read{
			{[]int64{2}, 10, 12, 0, 0},
			{[]int64{2, 4}, 10, 14, 1, timeout}, // 1 given up; 3 starts a gap of its own
			{[]int64{4}, 14, 14, 1, timeout + time.Second},
		}, 4, []int64{1}},
	} {
		t.Run(name, func(t *testing.T) {
			c := cursor{started: true, last: tc.start}
			for i, r := range tc.reads {
				if got := c.accept(r.ids, r.xmin, r.xmax, time.Unix(0, 0).Add(r.at), timeout); got != r.want {
					t.Fatalf("read %d (%v): published %d, want %d", i, r.ids, got, r.want)
				}
			}
			if c.last != tc.last {
				t.Fatalf("last = %d, want %d", c.last, tc.last)
			}
			if got := c.watched(time.Unix(0, 0)); !slices.Equal(got, tc.forgiven) {
				t.Fatalf("forgiven %v, want %v", got, tc.forgiven)
			}
		})
	}
}

func TestCursorForgivenBounded(t *testing.T) {
	var c cursor
	now := time.Unix(0, 0)
	c.forgive(1, 3*maxForgiven, now)
	c.forgive(3*maxForgiven+2, 3*maxForgiven+2, now.Add(time.Minute))
	w := c.watched(now)
	if len(w) != maxForgiven || w[len(w)-1] != 3*maxForgiven+2 {
		t.Fatalf("%d ids watched, last %d", len(w), w[len(w)-1])
	}
	if w := c.watched(now.Add(forgivenFor + time.Second)); len(w) != 1 {
		t.Fatalf("after an hour %d ids watched, want the newest one", len(w))
	}
	c.unforgive([]int64{3*maxForgiven + 2})
	if len(c.forgiven) != 0 {
		t.Fatal("unforgive kept the id")
	}
}

// TestOutOfOrderCommit: an event id committed after a higher one is still
// delivered, in id order; one that never commits does not hold the stream
// for longer than the transactions that were running.
func TestOutOfOrderCommit(t *testing.T) {
	for _, commit := range []bool{true, false} {
		t.Run(fmt.Sprintf("commit=%v", commit), func(t *testing.T) {
			o := newTestOrigin(t, fast())
			ctx := context.Background()
			site := mustSite(t, o.db, model.Starter)
			s := o.dial(t, "")
			s.position(t)

			tx, err := o.db.Pool.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback(ctx)
			if err := store.InsertEvent(ctx, tx, site.ID, store.EventContentChanged, map[string]any{"site_id": site.ID}); err != nil {
				t.Fatal(err)
			}
			waits := metricGapsDeferred.Get()
			later := mustEvents(t, o.db, site.ID, 1)[0] // a higher id, committed first
			// The hub reads the later event and holds it.
			deadline := time.Now().Add(5 * time.Second)
			for metricGapsDeferred.Get() == waits {
				if time.Now().After(deadline) {
					t.Fatal("the hub never saw the gap")
				}
				time.Sleep(5 * time.Millisecond)
			}
			select {
			case f := <-s.frames:
				t.Fatalf("got %+v while a lower id was uncommitted", f)
			default:
			}
			if o.hub.Position() != 0 {
				t.Fatalf("position %d, want 0 while id 1 is uncommitted", o.hub.Position())
			}

			want := []string{later}
			if commit {
				if err := tx.Commit(ctx); err != nil {
					t.Fatal(err)
				}
				want = []string{"1", later}
			} else if err := tx.Rollback(ctx); err != nil {
				t.Fatal(err)
			}
			var got []string
			for range want {
				got = append(got, s.nextEvent(t, 5*time.Second).ID)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("streamed %v, want %v", got, want)
			}
		})
	}
}

// TestGapGivenUpThenLateCommit: a transaction holding a lower id longer
// than GapTimeout does not hold the stream; when it commits after all,
// every stream resets.
func TestGapGivenUpThenLateCommit(t *testing.T) {
	cfg := fast()
	cfg.GapTimeout = 200 * time.Millisecond
	o := newTestOrigin(t, cfg)
	ctx := context.Background()
	site := mustSite(t, o.db, model.Starter)
	s := o.dial(t, "")
	s.position(t)

	tx, err := o.db.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if err := store.InsertEvent(ctx, tx, site.ID, store.EventContentChanged, map[string]any{"site_id": site.ID}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	later := mustEvents(t, o.db, site.ID, 1)[0]
	if f := s.nextEvent(t, 5*time.Second); f.ID != later {
		t.Fatalf("got %+v, want %s once the gap is given up on", f, later)
	}
	if d := time.Since(start); d < cfg.GapTimeout {
		t.Fatalf("delivered after %s, before the gap timeout", d)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	f := s.nextEvent(t, 5*time.Second)
	if f.Event != internalapi.EventReset || f.ID != later || f.Data != `{"reason":"late"}` {
		t.Fatalf("after the late commit got %+v, want a reset at %s", f, later)
	}
	next := mustEvents(t, o.db, site.ID, 1)[0]
	if f := s.nextEvent(t, 5*time.Second); f.ID != next {
		t.Fatalf("then %+v, want %s", f, next)
	}
}

// TestStartWaitsForRunningTransactions: a hub starting while a transaction
// holds an event id below the head is not ready until it ends, so no stream
// starts at a position an event can still appear under.
func TestStartWaitsForRunningTransactions(t *testing.T) {
	url := storetest.URL(t)
	a := newOrigin(t, url, fast())
	ctx := context.Background()
	site := mustSite(t, a.db, model.Starter)
	tx, err := a.db.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if err := store.InsertEvent(ctx, tx, site.ID, store.EventContentChanged, map[string]any{"site_id": site.ID}); err != nil {
		t.Fatal(err)
	}
	head := mustEvents(t, a.db, site.ID, 1)[0]

	cfg := fast()
	cfg.DB = a.db
	b, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); b.Run(runCtx) }()
	defer func() { cancel(); <-done }()
	select {
	case <-b.ready:
		t.Fatal("hub ready while an older event transaction runs")
	case <-time.After(300 * time.Millisecond):
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-b.ready:
	case <-time.After(5 * time.Second):
		t.Fatal("hub not ready after the transaction ended")
	}
	if got := itoa(b.Position()); got != head {
		t.Fatalf("start position %s, want the head %s", got, head)
	}
}

// TestStartGivesUpAfterGapTimeout: a hub starting beside a transaction
// that outlives GapTimeout starts anyway; the event that transaction commits
// later resets the streams.
func TestStartGivesUpAfterGapTimeout(t *testing.T) {
	url := storetest.URL(t)
	a := newOrigin(t, url, fast())
	ctx := context.Background()
	site := mustSite(t, a.db, model.Starter)
	tx, err := a.db.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if err := store.InsertEvent(ctx, tx, site.ID, store.EventContentChanged, map[string]any{"site_id": site.ID}); err != nil {
		t.Fatal(err)
	}
	head := mustEvents(t, a.db, site.ID, 1)[0]

	cfg := fast()
	cfg.GapTimeout = 200 * time.Millisecond
	b := newOrigin(t, url, cfg) // returns once ready
	if got := itoa(b.hub.Position()); got != head {
		t.Fatalf("start position %s, want the head %s", got, head)
	}
	s := b.dial(t, "")
	s.position(t)
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if f := s.nextEvent(t, 5*time.Second); f.Event != internalapi.EventReset || f.Data != `{"reason":"late"}` {
		t.Fatalf("after the late commit got %+v, want a reset", f)
	}
}

// TestSlowSubscriberIsCut: a subscriber that does not take its events is
// cut when its queue is full; the others get every event, undelayed.
func TestSlowSubscriberIsCut(t *testing.T) {
	cfg := fast()
	cfg.SubscriberBuffer = 4
	o := newTestOrigin(t, cfg)
	site := mustSite(t, o.db, model.Starter)
	fastSub := o.dial(t, "")
	fastSub.position(t)
	slow, _, err := o.hub.subscribe()
	if err != nil {
		t.Fatal(err)
	}
	defer o.hub.unsubscribe(slow)

	// One event at a time, each taken by the fast subscriber before the
	// next is written: each is a batch of its own.
	var ids, got []string
	for i := 0; i < 10; i++ {
		ids = append(ids, mustEvents(t, o.db, site.ID, 1)...)
		got = append(got, fastSub.nextEvent(t, 2*time.Second).ID)
	}
	if !slices.Equal(got, ids) {
		t.Fatalf("fast subscriber got %v, want %v", got, ids)
	}
	var queued int
	timeout := time.After(5 * time.Second)
	for open := true; open; {
		select {
		case batch, ok := <-slow.ch:
			queued += len(batch)
			open = ok
		case <-timeout:
			t.Fatalf("slow subscriber not cut; %d events queued", queued)
		}
	}
	if queued != cfg.SubscriberBuffer || o.hub.reason(slow) != "too far behind" {
		t.Fatalf("slow subscriber: %d events queued then %q; want %d, then cut",
			queued, o.hub.reason(slow), cfg.SubscriberBuffer)
	}
}

// TestStalledClientIsCut: a client that stops reading its stream is cut
// (by the hub when its queue is full, or by the write timeout) while another
// client receives everything.
func TestStalledClientIsCut(t *testing.T) {
	cfg := fast()
	cfg.SubscriberBuffer = 8
	cfg.WriteTimeout = 300 * time.Millisecond
	o := newTestOrigin(t, cfg)
	site := mustSite(t, o.db, model.Starter)
	reader := o.dial(t, "")
	reader.position(t)

	// The stalled client sends its request and never reads.
	conn, err := net.Dial("tcp", o.srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.(*net.TCPConn).SetReadBuffer(4 << 10)
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: origin\r\n%s: %s\r\n\r\n", Path, "X-Listgate-Internal-Token", token)
	deadline := time.Now().Add(5 * time.Second)
	for subscribers(o.hub) < 2 {
		if time.Now().After(deadline) {
			t.Fatal("stalled client never subscribed")
		}
		time.Sleep(5 * time.Millisecond)
	}

	// 200 events of 64 KiB: far more than socket buffers hold.
	start := time.Now()
	var n int
	if err := o.db.Pool.QueryRow(context.Background(), `WITH e AS (
		INSERT INTO events (site_id, type, payload)
		SELECT $1::uuid, 'site.content_changed', jsonb_build_object('site_id', $1::uuid, 'pad', repeat('x', 65536), 'n', i)
		FROM generate_series(1, 200) i RETURNING id)
		SELECT count(pg_notify('listgate_events', id::text)) FROM e`, site.ID).Scan(&n); err != nil || n != 200 {
		t.Fatalf("insert events: %d, %v", n, err)
	}
	for i := 1; i <= 200; i++ {
		if f := reader.nextEvent(t, 5*time.Second); f.ID != itoa(int64(i)) {
			t.Fatalf("reader got event %s, want %d", f.ID, i)
		}
	}
	t.Logf("reader received 200 × 64 KiB events in %s beside a stalled client", time.Since(start))
	for subscribers(o.hub) != 1 {
		if time.Now().After(deadline.Add(5 * time.Second)) {
			t.Fatalf("stalled client still subscribed (%d subscribers)", subscribers(o.hub))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func subscribers(h *Hub) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs)
}

// TestListenerReconnects: the hub's LISTEN connection is terminated; the
// events written before it is back reach the open stream, in order.
func TestListenerReconnects(t *testing.T) {
	var attempts atomic.Int32
	reconnecting := make(chan struct{}, 1)
	release := make(chan struct{})
	o := newOrigin(t, storetest.URL(t), fast(), func(h *Hub, _ *httptest.Server) {
		h.beforeConnect = func() {
			if attempts.Add(1) == 1 {
				return // the first connection
			}
			reconnecting <- struct{}{}
			<-release
		}
	})
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
	})
	ctx := context.Background()
	site := mustSite(t, o.db, model.Starter)
	key, _ := mustKey(t, o.db, site.ID)
	s := o.dial(t, "")
	s.position(t)
	if !o.hub.Listening() {
		t.Fatal("hub not listening")
	}

	var n int
	if err := o.db.Pool.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE application_name = $1 AND datname = current_database()`, applicationName).Scan(&n); err != nil || n != 1 {
		t.Fatalf("terminated %d listener connections (%v), want 1", n, err)
	}
	select {
	case <-reconnecting:
	case <-time.After(5 * time.Second):
		t.Fatal("the hub did not notice its connection was terminated")
	}
	if o.hub.Listening() {
		t.Error("Listening() while reconnecting")
	}
	// Written while the hub is disconnected: no notification reaches it.
	mustRevoke(t, o.db, key.ID)
	if err := o.db.SetPlan(ctx, site.ID, model.Professional); err != nil {
		t.Fatal(err)
	}
	close(release)
	first, second := s.nextEvent(t, 5*time.Second), s.nextEvent(t, 5*time.Second)
	if first.Event != internalapi.EventKeyRevoked || second.Event != internalapi.EventPlanChanged {
		t.Fatalf("after reconnecting got %+v, %+v", first, second)
	}
	// And it listens again.
	id := mustEvents(t, o.db, site.ID, 1)[0]
	if f := s.nextEvent(t, 5*time.Second); f.ID != id {
		t.Fatalf("got %+v, want live event %s", f, id)
	}
}

func TestPrune(t *testing.T) {
	o := newTestOrigin(t, Config{Retention: time.Hour, PruneInterval: -1})
	ctx := context.Background()
	site := mustSite(t, o.db, model.Starter)
	ids := mustEvents(t, o.db, site.ID, 5)
	if n, err := o.hub.Prune(ctx); err != nil || n != 0 {
		t.Fatalf("Prune of fresh events = %d, %v", n, err)
	}
	if _, err := o.db.Pool.Exec(ctx, `UPDATE events SET created_at = now() - interval '61 minutes' WHERE id <= $1`, ids[2]); err != nil {
		t.Fatal(err)
	}
	if n, err := o.hub.Prune(ctx); err != nil || n != 3 {
		t.Fatalf("Prune = %d, %v; want 3", n, err)
	}
	var left []string
	var pruned string
	if err := o.db.Pool.QueryRow(ctx, `SELECT array_agg(id::text ORDER BY id), (SELECT pruned_through::text FROM event_stream_state) FROM events`).
		Scan(&left, &pruned); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(left, ids[3:]) || pruned != ids[2] {
		t.Fatalf("left %v pruned through %s; want %v and %s", left, pruned, ids[3:], ids[2])
	}
}

func TestPruneRunsInTheHub(t *testing.T) {
	url := storetest.URL(t)
	seed, err := store.Open(context.Background(), url, store.Options{MaxConns: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer seed.Close()
	site := mustSite(t, seed, model.Starter)
	mustEvents(t, seed, site.ID, 3)
	if _, err := seed.Pool.Exec(context.Background(), `UPDATE events SET created_at = now() - interval '2 days'`); err != nil {
		t.Fatal(err)
	}
	o := newOrigin(t, url, Config{PruneInterval: time.Hour}) // prunes once at start
	deadline := time.Now().Add(5 * time.Second)
	for {
		var n int
		if err := o.db.Pool.QueryRow(context.Background(), `SELECT count(*) FROM events`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d expired events left", n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestConfigValidate(t *testing.T) {
	for name, tc := range map[string]struct {
		cfg Config
		ok  bool
	}{
		"defaults":          {Config{DB: &store.DB{}}, true},
		"no database":       {Config{}, false},
		"negative":          {Config{DB: &store.DB{}, Heartbeat: -1}, false},
		"negative buffer":   {Config{DB: &store.DB{}, SubscriberBuffer: -1}, false},
		"never prune is ok": {Config{DB: &store.DB{}, PruneInterval: -1}, true},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := New(tc.cfg)
			if (err == nil) != tc.ok {
				t.Fatalf("New = %v, want ok=%v", err, tc.ok)
			}
		})
	}
}
