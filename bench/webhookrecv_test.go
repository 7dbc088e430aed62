package main

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/listgate/listgate/pkg/webhook"
)

// mustReceiver starts a receiver with a new secret and stops it at the
// test's end.
func mustReceiver(tb testing.TB) (*webhookReceiver, string) {
	tb.Helper()
	rv, err := startWebhookReceiver()
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(rv.close)
	master, err := webhook.ParseMasterKey(webhook.NewMasterKey())
	if err != nil {
		tb.Fatal(err)
	}
	secret := webhook.DeriveSecret(master, "bench-endpoint", 1)
	rv.setSecret(secret)
	return rv, secret
}

// mustPost sends a webhook of lead signed with secret (empty: unsigned)
// and returns the status, 0 when the connection failed.
func mustPost(tb testing.TB, url, secret, msgID, body string) int {
	tb.Helper()
	req, err := http.NewRequest("POST", url, bytes.NewReader([]byte(body)))
	if err != nil {
		tb.Fatal(err)
	}
	if secret != "" {
		if err := webhook.SetHeaders(req.Header, []string{secret}, msgID, time.Now(), []byte(body)); err != nil {
			tb.Fatal(err)
		}
	}
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 5 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

func leadBody(id int64) string {
	return fmt.Sprintf(`{"type":"lead.created","timestamp":"2026-11-26T12:00:00Z","site_id":"s","data":{"lead_id":%d,"name":"B"}}`, id)
}

func TestWebhookReceiver(t *testing.T) {
	rv, secret := mustReceiver(t)
	other, _ := mustReceiver(t)
	otherSecret := *other.secret.Load()
	for _, tc := range []struct {
		name   string
		secret string
		body   string
		want   int
		reason string // the refusal counted; empty: recorded
	}{
		{"signed", secret, leadBody(7), 204, ""},
		{"unsigned", "", leadBody(8), 401, "signature"},
		{"another endpoint's secret", otherSecret, leadBody(9), 401, "signature"},
		{"another event", secret, `{"type":"lead.updated","data":{"lead_id":10}}`, 400, "body"},
		{"no lead", secret, `{"type":"lead.created","data":{}}`, 400, "body"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prior, before, _, _ := rv.snapshot()
			n := len(prior)
			if got := mustPost(t, rv.URL(), tc.secret, "msg_1", tc.body); got != tc.want {
				t.Fatalf("status %d, want %d", got, tc.want)
			}
			arrivals, rejected, _, _ := rv.snapshot()
			if tc.reason == "" {
				if len(arrivals) != n+1 || arrivals[n].ID != "msg_1" || arrivals[n].LeadID != 7 {
					t.Fatalf("arrivals %+v, want msg_1 of lead 7 recorded", arrivals[n:])
				}
				return
			}
			if len(arrivals) != n || rejected[tc.reason] != before[tc.reason]+1 {
				t.Fatalf("arrivals %d → %d, refusals %v → %v: want one more %q refusal", n, len(arrivals), before, rejected, tc.reason)
			}
		})
	}
}

func TestWebhookReceiverRefuseDelayOpen(t *testing.T) {
	rv, secret := mustReceiver(t)
	url := rv.URL()
	rv.refuse()
	if got := mustPost(t, url, secret, "msg_2", leadBody(2)); got != 0 {
		t.Fatalf("refusing: status %d, want a refused connection", got)
	}
	rv.setDelay(100 * time.Millisecond)
	if err := rv.open(); err != nil {
		t.Fatal(err)
	}
	if rv.URL() != url {
		t.Fatalf("reopened at %s, was %s", rv.URL(), url)
	}
	t0 := time.Now()
	if got := mustPost(t, url, secret, "msg_2", leadBody(2)); got != 204 {
		t.Fatalf("status %d, want 204", got)
	}
	if d := time.Since(t0); d < 100*time.Millisecond {
		t.Fatalf("answered after %v, want the 100 ms delay", d)
	}
	if n := rv.awaitLeads(map[int64]time.Time{2: t0}, time.Second); n != 0 {
		t.Fatalf("%d leads missing", n)
	}
	if n := rv.awaitLeads(map[int64]time.Time{3: t0}, 50*time.Millisecond); n != 1 {
		t.Fatalf("lead 3 never sent: %d missing, want 1", n)
	}
}

func TestCheckDeliveries(t *testing.T) {
	t0 := time.Unix(1_800_000_000, 0)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	acked := map[int64]time.Time{1: t0, 2: t0, 3: t0}
	for _, tc := range []struct {
		name     string
		arrivals []webhookArrival
		want     deliveryCheck // the counts compared
		fails    bool
	}{
		{"each once", []webhookArrival{{"msg_1", 1, ms(5)}, {"msg_2", 2, ms(10)}, {"msg_3", 3, ms(-2)}},
			deliveryCheck{Delivered: 3}, false},
		{"a retry with the same id", []webhookArrival{{"msg_1", 1, ms(5)}, {"msg_2", 2, ms(10)}, {"msg_2", 2, ms(900)}, {"msg_3", 3, ms(1)}},
			deliveryCheck{Delivered: 3, SameID: 1}, false},
		{"one lost", []webhookArrival{{"msg_1", 1, ms(5)}, {"msg_2", 2, ms(10)}},
			deliveryCheck{Delivered: 2, Lost: 1}, true},
		{"a lead under two ids", []webhookArrival{{"msg_1", 1, ms(5)}, {"msg_2", 2, ms(10)}, {"msg_9", 2, ms(20)}, {"msg_3", 3, ms(1)}},
			deliveryCheck{Delivered: 3, MultiID: 1}, true},
		{"an id for two leads", []webhookArrival{{"msg_1", 1, ms(5)}, {"msg_1", 2, ms(10)}, {"msg_3", 3, ms(1)}},
			deliveryCheck{Delivered: 3, SharedID: 1, SameID: 1}, true},
		{"a lead not acknowledged", []webhookArrival{{"msg_1", 1, ms(5)}, {"msg_2", 2, ms(10)}, {"msg_3", 3, ms(1)}, {"msg_4", 4, ms(1)}},
			deliveryCheck{Delivered: 3, NotAcked: 1}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := checkDeliveries(acked, tc.arrivals, nil)
			got := [6]int{c.Delivered, c.Lost, c.MultiID, c.SharedID, c.SameID, c.NotAcked}
			want := [6]int{tc.want.Delivered, tc.want.Lost, tc.want.MultiID, tc.want.SharedID, tc.want.SameID, tc.want.NotAcked}
			if got != want || c.Acked != 3 || c.Arrivals != len(tc.arrivals) {
				t.Errorf("delivered, lost, multi-id, shared id, same id, not acked = %v, want %v (%s)", got, want, c)
			}
			if err := c.err(); (err != nil) != tc.fails {
				t.Errorf("err() = %v, want failure %v", err, tc.fails)
			}
		})
	}
	c := checkDeliveries(acked, []webhookArrival{{"msg_1", 1, ms(5)}, {"msg_2", 2, ms(10)}, {"msg_2", 2, ms(3)}, {"msg_3", 3, ms(-2)}}, nil)
	if c.Lag["min"] != -2 || c.Lag["max"] != 5 || c.Lag["p50"] != 3 || !c.Last.Equal(ms(5)) {
		t.Errorf("lag %v, last %v: want each lead's first arrival (min -2, p50 3, max 5 ms; last at 5 ms)", c.Lag, c.Last.Sub(t0))
	}
	if c := checkDeliveries(acked, nil, map[string]int{"signature": 1}); c.err() == nil {
		t.Error("a refused webhook did not fail the check")
	}
}

// TestPacedLeads sends leads at a fixed rate to a stand-in edge that
// answers every one 201 with a new lead id.
func TestPacedLeads(t *testing.T) {
	var n atomic.Int64
	edge := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(201)
		fmt.Fprintf(w, `{"lead_id":%d,"duplicate":false}`, n.Add(1))
	}))
	defer edge.Close()
	d := newDriver([]string{edge.URL})
	defer d.close()
	t0 := time.Now()
	rs := startPacedLeads(d, 100, 300*time.Millisecond, "key").wait()
	if len(rs) != 30 {
		t.Fatalf("%d leads, want 30 (100/s for 300 ms)", len(rs))
	}
	if took := time.Since(t0); took < 280*time.Millisecond {
		t.Errorf("sent in %v, want about 300 ms", took)
	}
	acked := ackedLeads(rs)
	if len(acked) != 30 {
		t.Errorf("%d acknowledged, want 30", len(acked))
	}
	emails := map[string]bool{}
	for _, r := range rs {
		emails[r.email] = true
	}
	if len(emails) != 30 {
		t.Errorf("%d distinct e-mails of 30 leads: each lead must be a new contact", len(emails))
	}
}
