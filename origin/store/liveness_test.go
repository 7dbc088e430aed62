package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/listgate/listgate/origin/store"
	"github.com/listgate/listgate/origin/store/storetest"
)

// mustOpenLive opens url as an origin serving leads does: with a liveness
// lock. It is closed when the test ends.
func mustOpenLive(tb testing.TB, url string) *store.DB {
	tb.Helper()
	db, err := store.Open(context.Background(), url, store.Options{MaxConns: 2, Liveness: true})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(db.Close)
	if db.LivenessOwner() == 0 {
		tb.Fatal("opened with Liveness, but no liveness lock held")
	}
	return db
}

// An origin's liveness lock is held while its DB is open, on a connection
// of its own; it is released when the DB is closed, and taken again under
// a new instance id when its connection is lost.
func TestLivenessLock(t *testing.T) {
	url := storetest.URL(t)
	check := mustOpen(t, url)
	a, b := mustOpenLive(t, url), mustOpenLive(t, url)
	if a.LivenessOwner() == b.LivenessOwner() {
		t.Fatalf("two processes with instance %d", a.LivenessOwner())
	}
	held := func(db *store.DB) int {
		t.Helper()
		return mustCount(t, check, `SELECT count(*) `+livenessLocks+` AND objid = $2::int8::oid
			AND pid IN (SELECT pid FROM pg_stat_activity WHERE application_name = 'listgate-origin-liveness')`,
			store.LivenessClass, db.LivenessOwner())
	}
	if held(a) != 1 || held(b) != 1 {
		t.Fatalf("liveness locks held: %d, %d; want 1 each", held(a), held(b))
	}
	old := a.LivenessOwner()
	mustTerminateLiveness(t, check, old)
	mustWaitForNewOwner(t, a, old)
	if held(a) != 1 {
		t.Fatal("new instance id, but its lock is not held")
	}
	b.Close()
	if b.LivenessOwner() != 0 {
		t.Errorf("closed, but still instance %d", b.LivenessOwner())
	}
	// b's lock is unlocked before Close returns. A connection the liveness
	// loop gave up on (a ping that timed out on a loaded machine: it takes
	// the lock again on a new one) ends its backend, and so its lock,
	// asynchronously: wait for that, for at most 15 s.
	deadline := time.Now().Add(15 * time.Second)
	for n := mustCount(t, check, `SELECT count(*) `+livenessLocks, store.LivenessClass); n != 1; n = mustCount(t, check,
		`SELECT count(*) `+livenessLocks, store.LivenessClass) {
		if time.Now().After(deadline) {
			t.Fatalf("%d liveness locks held 15 s after one of two was closed", n)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if held(a) != 1 {
		t.Error("the open DB's lock is no longer held")
	}
}

// livenessLocks selects the liveness locks ($1: their class) in the
// test's database (advisory locks are per database).
const livenessLocks = `FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 2 AND classid = $1::int8::oid
	AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`

// mustTerminateLiveness ends the connection holding the liveness lock of
// instance id, as Postgres does when it restarts or the connection is cut,
// and waits until its backend is gone.
func mustTerminateLiveness(tb testing.TB, db *store.DB, id int32) {
	tb.Helper()
	var terminated bool
	if err := db.Pool.QueryRow(context.Background(), `SELECT pg_terminate_backend(pid, 5000) `+livenessLocks+
		` AND objid = $2::int8::oid`, store.LivenessClass, id).Scan(&terminated); err != nil || !terminated {
		tb.Fatalf("terminate the liveness connection: %v %v", terminated, err)
	}
}

// mustWaitForNewOwner waits until db holds its liveness lock again under
// an instance id other than old.
func mustWaitForNewOwner(tb testing.TB, db *store.DB, old int32) {
	tb.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for id := db.LivenessOwner(); id == 0 || id == old; id = db.LivenessOwner() {
		if time.Now().After(deadline) {
			tb.Fatal("liveness lock not taken again within 15 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func mustCount(tb testing.TB, db *store.DB, q string, args ...any) int {
	tb.Helper()
	var n int
	if err := db.Pool.QueryRow(context.Background(), q, args...).Scan(&n); err != nil {
		tb.Fatalf("%s: %v", q, err)
	}
	return n
}
