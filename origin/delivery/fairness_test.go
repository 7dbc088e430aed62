package delivery_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/listgate/listgate/origin/delivery"
	"github.com/listgate/listgate/pkg/webhook"
)

// An endpoint that hangs holds at most its share of a worker's slots: a
// backlog of its deliveries, older than another endpoint's, does not keep
// that one waiting for the hung attempts' timeout.
func TestHungEndpointDoesNotStallOthers(t *testing.T) {
	f := newFixture(t)
	release := make(chan struct{})
	var hung atomic.Int32
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hung.Add(1)
		<-release
		w.WriteHeader(204)
	}))
	t.Cleanup(slow.Close)
	ctx := context.Background()
	if _, err := f.db.CreateWebhookEndpoint(ctx, f.site, slow.URL+"/hang", []string{"lead.created"}); err != nil {
		t.Fatal(err)
	}
	for i := range 12 {
		f.lead(t, `{"name":"Hal `+jsonNumber(int64(i))+`","email":"hal`+jsonNumber(int64(i))+`@example.com","type":"inquiry"}`)
	}
	f.endpoint(t, "lead.created") // the healthy receiver
	f.lead(t, `{"name":"Fay Fine","email":"fay@example.com","type":"inquiry"}`)
	f.worker(t, func(c *delivery.Config) {
		c.Workers = 4
		c.Timeout = time.Minute
		c.Client = webhook.NewClient(delivery.ClientOptions("loopback", time.Minute))
	})
	// Registered after the worker's, so it runs before the worker stops
	// (which waits for the attempts in flight): the hung handlers return.
	t.Cleanup(func() { close(release) })
	// The healthy endpoint's one delivery arrives while the hung ones still
	// hang (their timeout is a minute away).
	f.recv.wait(t, 1)
	if n := hung.Load(); n > 1 {
		t.Errorf("%d attempts hang on the hung endpoint, more than its share of 4 slots (1)", n)
	}
	// Its one attempt does reach it.
	for deadline := time.Now().Add(10 * time.Second); hung.Load() == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no attempt reached the hung endpoint")
		}
	}
	if n := hung.Load(); n != 1 {
		t.Errorf("%d attempts hang on the hung endpoint, want its share of 4 slots: 1", n)
	}
}
