package delivery_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/listgate/listgate/pkg/webhook"
)

// No attempt starts later than webhook.RetryFor after the event: a failure
// whose next attempt would come after that is given up, however long the
// receiver's Retry-After.
func TestNoAttemptAfterRetryFor(t *testing.T) {
	f := newFixture(t)
	f.recv.answer = func(int, *http.Request) (int, http.Header) {
		return http.StatusServiceUnavailable, http.Header{"Retry-After": {"3600"}}
	}
	f.endpoint(t, "lead.created")
	id := f.lead(t, `{"name":"Gil Giveup","email":"gil@example.com","type":"inquiry"}`)
	// The event is 71 h 30 min old: an hour from now is past its 72 h.
	if _, err := f.db.Pool.Exec(context.Background(), `UPDATE deliveries SET created_at = now() - $2::interval
		WHERE lead_id = $1`, id, webhook.RetryFor-30*time.Minute); err != nil {
		t.Fatal(err)
	}
	f.worker(t, nil)
	f.recv.wait(t, 1)
	waitState(t, f, id, "failed")
}
