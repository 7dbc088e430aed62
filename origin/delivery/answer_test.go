package delivery_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"unicode/utf8"
)

// Whatever a receiver answers, the attempt is recorded: an answer whose
// first bytes end inside a character, or hold a NUL byte or bytes that are
// not UTF-8, is kept in the log with those bytes replaced, and a 2xx is
// delivered once, not sent again and again because the log refused it.
func TestAnyAnswerRecorded(t *testing.T) {
	for _, tc := range []struct{ name, answer string }{
		{"a character cut at the log's limit", strings.Repeat("€", 400)},
		{"a NUL byte", "ok\x00thanks"},
		{"not UTF-8", "\xff\xfe{\"ok\":true}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			var got atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				got.Add(1)
				w.Write([]byte(tc.answer))
			}))
			t.Cleanup(srv.Close)
			ep, err := f.db.CreateWebhookEndpoint(context.Background(), f.site, srv.URL+"/hooks", []string{"lead.created"})
			if err != nil {
				t.Fatal(err)
			}
			f.worker(t, nil)
			id := f.lead(t, `{"name":"Ann Answer","email":"ann@example.com","type":"inquiry"}`)
			waitState(t, f, id, "delivered")
			if n := got.Load(); n != 1 {
				t.Errorf("the receiver got %d requests, want 1", n)
			}
			log, err := f.db.DeliveryLog(context.Background(), f.site, ep.ID, 10)
			if err != nil || len(log) != 1 || log[0].Status != 200 || !utf8.ValidString(log[0].Response) ||
				strings.ContainsRune(log[0].Response, 0) || log[0].Response == "" {
				t.Errorf("log %+v, %v", log, err)
			}
		})
	}
}
