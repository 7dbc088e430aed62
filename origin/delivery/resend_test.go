package delivery_test

import (
	"context"
	"testing"
	"time"

	"github.com/listgate/listgate/origin/store"
)

// "Send now" of a delivery that a worker is sending does not make it due
// again inside the claim's lease: no second worker sends it meanwhile.
// One waiting for a retry is made due now.
func TestResendInFlight(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.endpoint(t, "lead.created")
	id := f.lead(t, `{"name":"Ivy Inflight","email":"ivy@example.com","type":"inquiry"}`)
	ds, err := f.db.ClaimDeliveries(ctx, true, 10, time.Minute, nil)
	if err != nil || len(ds) != 1 {
		t.Fatalf("claimed %d, %v", len(ds), err)
	}
	if _, err := f.db.ResendDelivery(ctx, f.site, ds[0].ID); err != nil {
		t.Fatal(err)
	}
	if again, err := f.db.ClaimDeliveries(ctx, true, 10, time.Minute, nil); err != nil || len(again) != 0 {
		t.Fatalf("a second worker claimed %d deliveries (%v) while the first is sending", len(again), err)
	}
	// The attempt fails; its retry is an hour away. Send now makes it due.
	r := failedAttempt(ds[0].SiteID, ds[0].ID, ds[0].Attempt, time.Now().Add(time.Hour))
	if _, err := f.db.FinishDelivery(ctx, r); err != nil {
		t.Fatal(err)
	}
	if _, err := f.db.ResendDelivery(ctx, f.site, ds[0].ID); err != nil {
		t.Fatal(err)
	}
	if again, err := f.db.ClaimDeliveries(ctx, true, 10, time.Minute, nil); err != nil || len(again) != 1 {
		t.Fatalf("claimed %d deliveries (%v) after Send now of a retry, want 1", len(again), err)
	}
	var n int
	f.scalar(t, &n, `SELECT count(*) FROM deliveries WHERE lead_id = $1`, id)
	if n != 1 {
		t.Errorf("%d deliveries, want 1 (Send now of a pending one queues no other)", n)
	}
}

// failedAttempt is the result of an attempt answered 500, to retry at.
func failedAttempt(siteID string, id int64, attempt int, retryAt time.Time) store.DeliveryResult {
	return store.DeliveryResult{SiteID: siteID, ID: id, Attempt: attempt, State: store.DeliveryPending, RetryAt: retryAt,
		Attempted: true, Status: 500, Error: "HTTP 500", EndpointID: ""}
}
