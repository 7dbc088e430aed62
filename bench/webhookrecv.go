package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	json "github.com/goccy/go-json"

	"github.com/listgate/listgate/pkg/webhook"
)

// webhookReceiver receives the origins' lead.created webhooks on 127.0.0.1
// (the webhooks scenario and the webhook-outage drill): it verifies every
// signature (pkg/webhook.Verify, default tolerance), answers 204 at once or
// after its delay, and records each verified webhook's webhook-id, lead id
// and arrival. It can refuse connections (refuse: listener and every
// connection closed) and accept them again on the same address (open).
// Its methods are safe for concurrent use, but refuse, open and close must
// not run concurrently with each other.
type webhookReceiver struct {
	addr   string // 127.0.0.1:port, the same after refuse and open
	secret atomic.Pointer[string]
	// delay is how long each answer waits (nanoseconds); 0: at once.
	delay    atomic.Int64
	inFlight atomic.Int64

	mu       sync.Mutex
	srv      *http.Server // nil while refusing
	served   chan struct{}
	arrivals []webhookArrival
	first    map[int64]time.Time // lead id → its first arrival
	rejected map[string]int      // why a webhook was refused → how many
	rejectEx []string            // the first few refusals' errors
	cut      int                 // answers not given: the sender went away first
	arrived  chan struct{}       // a token after each arrival (capacity 1)
}

// webhookArrival is one verified webhook as it arrived.
type webhookArrival struct {
	ID     string // webhook-id
	LeadID int64
	At     time.Time
}

// maxWebhookBody bounds the body the receiver reads.
const maxWebhookBody = 1 << 20

// startWebhookReceiver listens on a free loopback port and serves.
func startWebhookReceiver() (*webhookReceiver, error) {
	rv := &webhookReceiver{addr: "127.0.0.1:0", first: map[int64]time.Time{}, rejected: map[string]int{},
		arrived: make(chan struct{}, 1)}
	if err := rv.open(); err != nil {
		return nil, err
	}
	return rv, nil
}

// URL is where the origins send the webhooks.
func (rv *webhookReceiver) URL() string { return "http://" + rv.addr + "/hooks/listgate" }

// setSecret sets the endpoint's signing secret; until then every webhook
// is refused as unverifiable.
func (rv *webhookReceiver) setSecret(s string) { rv.secret.Store(&s) }

// setDelay makes every answer from now on wait d (0: answer at once).
func (rv *webhookReceiver) setDelay(d time.Duration) { rv.delay.Store(int64(d)) }

// open accepts connections again on the receiver's address.
func (rv *webhookReceiver) open() error {
	rv.mu.Lock()
	defer rv.mu.Unlock()
	if rv.srv != nil {
		return nil
	}
	ln, err := net.Listen("tcp4", rv.addr)
	if err != nil {
		return fmt.Errorf("webhook receiver: %w", err)
	}
	rv.addr = ln.Addr().String()
	srv := &http.Server{Handler: rv, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	served := make(chan struct{})
	go func() {
		defer close(served)
		srv.Serve(ln)
	}()
	rv.srv, rv.served = srv, served
	return nil
}

// refuse closes the listener and every connection, answering none of the
// requests under way: from now on, connecting is refused.
func (rv *webhookReceiver) refuse() {
	rv.mu.Lock()
	srv, served := rv.srv, rv.served
	rv.srv = nil
	rv.mu.Unlock()
	if srv != nil {
		srv.Close()
		<-served
	}
}

// close stops the receiver for good.
func (rv *webhookReceiver) close() { rv.refuse() }

// ServeHTTP receives one webhook.
func (rv *webhookReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	at := time.Now()
	rv.inFlight.Add(1)
	defer rv.inFlight.Add(-1)
	body, err := io.ReadAll(io.LimitReader(r.Body, maxWebhookBody))
	if err != nil {
		rv.reject("unreadable body", err)
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	secret := rv.secret.Load()
	if secret == nil {
		rv.reject("before the secret was known", errors.New("no secret yet"))
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	if err := webhook.Verify(*secret, r.Header, body, 0, at); err != nil {
		rv.reject("signature", err)
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	var p struct {
		Type string `json:"type"`
		Data struct {
			LeadID int64 `json:"lead_id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &p); err != nil || p.Type != "lead.created" || p.Data.LeadID == 0 {
		rv.reject("body", fmt.Errorf("type %q, lead %d, %v", p.Type, p.Data.LeadID, err))
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	rv.record(webhookArrival{ID: r.Header.Get(webhook.HeaderID), LeadID: p.Data.LeadID, At: at})
	if d := time.Duration(rv.delay.Load()); d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-r.Context().Done():
			rv.mu.Lock()
			rv.cut++
			rv.mu.Unlock()
			return
		}
	}
	w.WriteHeader(http.StatusNoContent)
}

func (rv *webhookReceiver) record(a webhookArrival) {
	rv.mu.Lock()
	rv.arrivals = append(rv.arrivals, a)
	if _, ok := rv.first[a.LeadID]; !ok {
		rv.first[a.LeadID] = a.At
	}
	rv.mu.Unlock()
	select {
	case rv.arrived <- struct{}{}:
	default:
	}
}

func (rv *webhookReceiver) reject(why string, err error) {
	rv.mu.Lock()
	defer rv.mu.Unlock()
	rv.rejected[why]++
	if len(rv.rejectEx) < 5 {
		rv.rejectEx = append(rv.rejectEx, why+": "+err.Error())
	}
}

// snapshot returns a copy of the arrivals so far, the refusals by reason,
// examples of them, and how many answers were cut.
func (rv *webhookReceiver) snapshot() (arrivals []webhookArrival, rejected map[string]int, examples []string, cut int) {
	rv.mu.Lock()
	defer rv.mu.Unlock()
	rejected = map[string]int{}
	for k, v := range rv.rejected {
		rejected[k] = v
	}
	return slices.Clone(rv.arrivals), rejected, slices.Clone(rv.rejectEx), rv.cut
}

// missing counts the leads of want that have not arrived.
func (rv *webhookReceiver) missing(want map[int64]time.Time) int {
	rv.mu.Lock()
	defer rv.mu.Unlock()
	n := 0
	for id := range want {
		if _, ok := rv.first[id]; !ok {
			n++
		}
	}
	return n
}

// awaitLeads waits until every lead of want has arrived at least once, or
// d has passed, and returns how many are still missing.
func (rv *webhookReceiver) awaitLeads(want map[int64]time.Time, d time.Duration) int {
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	for {
		n := rv.missing(want)
		if n == 0 {
			return 0
		}
		select {
		case <-rv.arrived:
		case <-deadline.C:
			return rv.missing(want)
		}
	}
}

// awaitInFlight waits until at least n webhooks are being answered (the
// receiver holds them for its delay), or d has passed, and returns how
// many are.
func (rv *webhookReceiver) awaitInFlight(n int64, d time.Duration) int64 {
	deadline := time.Now().Add(d)
	for {
		k := rv.inFlight.Load()
		if k >= n || time.Now().After(deadline) {
			return k
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// ackedLeads maps every acknowledged enquiry's lead id to its 201's time.
func ackedLeads(rs []leadResult) map[int64]time.Time {
	m := map[int64]time.Time{}
	for _, r := range rs {
		if r.acked {
			m[r.leadID] = r.at
		}
	}
	return m
}

// deliveryCheck is what the receiver saw of the acknowledged leads.
type deliveryCheck struct {
	Acked     int `json:"acknowledged"`
	Delivered int `json:"delivered"`
	// Lost is acknowledged leads that never arrived.
	Lost int `json:"never_delivered"`
	// MultiID is leads that arrived under two or more webhook-ids, and
	// SharedID webhook-ids that carried two or more leads.
	MultiID  int `json:"leads_under_two_ids"`
	SharedID int `json:"ids_of_two_leads"`
	// SameID is arrivals beyond the first of a webhook-id: at-least-once
	// duplicates a receiver dedupes on the id.
	SameID   int `json:"duplicates_same_id"`
	Arrivals int `json:"arrivals"`
	// NotAcked is leads that arrived but whose enquiry got no 201 (its
	// answer was lost; stored all the same).
	NotAcked int            `json:"arrived_not_acknowledged"`
	Rejected map[string]int `json:"rejected,omitempty"`
	// Lag is from each lead's 201 to its first arrival, in milliseconds
	// (negative when the webhook arrived before the 201 did): min, p50,
	// p90, p99, max.
	Lag map[string]float64 `json:"lag_ms,omitempty"`
	// Last is the last first arrival of an acknowledged lead.
	Last     time.Time `json:"last_delivery"`
	lostLead []int64
}

// checkDeliveries matches the arrivals to the acknowledged leads.
func checkDeliveries(acked map[int64]time.Time, arrivals []webhookArrival, rejected map[string]int) deliveryCheck {
	c := deliveryCheck{Acked: len(acked), Arrivals: len(arrivals), Rejected: rejected}
	first := map[int64]time.Time{}
	idsOf := map[int64]map[string]bool{}
	leadsOf := map[string]map[int64]bool{}
	perID := map[string]int{}
	for _, a := range arrivals {
		if t, ok := first[a.LeadID]; !ok || a.At.Before(t) {
			first[a.LeadID] = a.At
		}
		if idsOf[a.LeadID] == nil {
			idsOf[a.LeadID] = map[string]bool{}
		}
		idsOf[a.LeadID][a.ID] = true
		if leadsOf[a.ID] == nil {
			leadsOf[a.ID] = map[int64]bool{}
		}
		leadsOf[a.ID][a.LeadID] = true
		perID[a.ID]++
	}
	for _, n := range perID {
		c.SameID += n - 1
	}
	for _, ids := range idsOf {
		if len(ids) > 1 {
			c.MultiID++
		}
	}
	for _, leads := range leadsOf {
		if len(leads) > 1 {
			c.SharedID++
		}
	}
	for id := range first {
		if _, ok := acked[id]; !ok {
			c.NotAcked++
		}
	}
	lags := make([]time.Duration, 0, len(acked))
	for id, ackAt := range acked {
		at, ok := first[id]
		if !ok {
			c.Lost++
			c.lostLead = append(c.lostLead, id)
			continue
		}
		c.Delivered++
		lags = append(lags, at.Sub(ackAt))
		if at.After(c.Last) {
			c.Last = at
		}
	}
	slices.Sort(c.lostLead)
	if len(lags) > 0 {
		slices.Sort(lags)
		c.Lag = map[string]float64{"min": ms(lags[0]), "p50": msAt(lags, 0.50), "p90": msAt(lags, 0.90),
			"p99": msAt(lags, 0.99), "max": ms(lags[len(lags)-1])}
	}
	return c
}

func (c deliveryCheck) String() string {
	s := fmt.Sprintf("%d acknowledged leads, %d delivered, %d never delivered, %d under two webhook-ids, %d duplicates with the same id (%d arrivals)",
		c.Acked, c.Delivered, c.Lost, c.MultiID, c.SameID, c.Arrivals)
	if c.Lag != nil {
		s += fmt.Sprintf("; lag from the 201: p50 %s, p90 %s, p99 %s, max %s", fmtMs(c.Lag["p50"]), fmtMs(c.Lag["p90"]),
			fmtMs(c.Lag["p99"]), fmtMs(c.Lag["max"]))
	}
	return s
}

// err reports the first broken promise: a lead lost, a lead under two ids,
// an id reused for another lead, a webhook that failed verification.
func (c deliveryCheck) err() error {
	rejected := 0
	for _, n := range c.Rejected {
		rejected += n
	}
	switch {
	case c.Acked == 0:
		return errors.New("no lead was acknowledged")
	case c.Lost > 0:
		return fmt.Errorf("%d acknowledged leads never delivered (lead ids %v…)", c.Lost, c.lostLead[:min(len(c.lostLead), 5)])
	case c.MultiID > 0:
		return fmt.Errorf("%d leads delivered under two or more webhook-ids", c.MultiID)
	case c.SharedID > 0:
		return fmt.Errorf("%d webhook-ids carried two or more leads", c.SharedID)
	case rejected > 0:
		return fmt.Errorf("%d webhooks refused by the receiver: %v", rejected, c.Rejected)
	}
	return nil
}
