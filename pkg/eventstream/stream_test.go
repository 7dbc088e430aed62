package eventstream_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	json "github.com/goccy/go-json"

	"github.com/listgate/listgate/origin/api"
	"github.com/listgate/listgate/origin/events"
	"github.com/listgate/listgate/origin/store"
	"github.com/listgate/listgate/origin/store/storetest"
	"github.com/listgate/listgate/pkg/apikey"
	"github.com/listgate/listgate/pkg/devdb/devdbtest"
	"github.com/listgate/listgate/pkg/eventstream"
	"github.com/listgate/listgate/pkg/internalapi"
	"github.com/listgate/listgate/pkg/model"
)

func TestMain(m *testing.M) { os.Exit(devdbtest.RunTests(m)) }

const token = "0123456789abcdef0123456789abcdef-stream"

// origin is the real origin handler (API, edge authentication, event hub)
// on a test database, recording the Last-Event-ID of every stream request.
type origin struct {
	db  *store.DB
	hub *events.Hub
	srv *httptest.Server

	mu      sync.Mutex
	resumes []string
}

func newOrigin(tb testing.TB) *origin {
	tb.Helper()
	db := storetest.NewDB(tb)
	log := slog.New(slog.DiscardHandler)
	hub, err := events.New(events.Config{DB: db, Log: log, Retry: 20 * time.Millisecond, PruneInterval: -1})
	if err != nil {
		tb.Fatal(err)
	}
	o := &origin{db: db, hub: hub}
	h := api.New(api.Config{Ready: db.Ping, Unavailable: store.IsUnavailable, Metrics: db.WritePoolMetrics,
		Log: log, InternalToken: token, Mounts: []api.Mounter{hub}}).Handler()
	o.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o.mu.Lock()
		o.resumes = append(o.resumes, r.Header.Get("Last-Event-ID"))
		o.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	tb.Cleanup(o.srv.Close)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); hub.Run(ctx) }()
	tb.Cleanup(func() { cancel(); <-done })
	return o
}

func (o *origin) requests() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.resumes)
}

// client is a subscription whose callbacks feed channels.
type client struct {
	stream *eventstream.Stream
	events chan eventstream.Event
	resets chan struct{}
}

func subscribe(tb testing.TB, opts eventstream.Options) *client {
	tb.Helper()
	c := &client{events: make(chan eventstream.Event, 1000), resets: make(chan struct{}, 100)}
	opts.OnEvent = func(e eventstream.Event) { c.events <- e }
	opts.OnReset = func() { c.resets <- struct{}{} }
	if opts.InternalToken == "" {
		opts.InternalToken = token
	}
	if opts.MinBackoff == 0 {
		opts.MinBackoff = 10 * time.Millisecond
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s, err := eventstream.Subscribe(ctx, opts)
	if err != nil {
		cancel()
		tb.Fatal(err)
	}
	c.stream = s
	tb.Cleanup(func() {
		cancel()
		select {
		case <-s.Done():
		case <-time.After(5 * time.Second):
			tb.Error("stream did not stop")
		}
	})
	return c
}

func (c *client) next(tb testing.TB) eventstream.Event {
	tb.Helper()
	select {
	case e := <-c.events:
		return e
	case <-time.After(5 * time.Second):
		tb.Fatal("no event within 5 s")
	}
	return eventstream.Event{}
}

func (c *client) waitReset(tb testing.TB) {
	tb.Helper()
	select {
	case <-c.resets:
	case <-time.After(5 * time.Second):
		tb.Fatal("no reset within 5 s")
	}
}

// noMore checks that nothing else was delivered: it writes one more event
// and expects exactly that one next.
func (c *client) noMore(tb testing.TB, db *store.DB, site string) string {
	tb.Helper()
	id := mustPlanChanged(tb, db, site)
	if e := c.next(tb); e.ID != id {
		tb.Fatalf("got event %s (%s), want %s: a duplicate or a stray event", e.ID, e.Type, id)
	}
	return id
}

func mustSite(tb testing.TB, db *store.DB) string {
	tb.Helper()
	s, err := db.CreateSite(context.Background(), "Stream Realty", model.Starter, "")
	if err != nil {
		tb.Fatal(err)
	}
	return s.ID
}

func mustRevokedKey(tb testing.TB, db *store.DB, site string) store.Key {
	tb.Helper()
	ctx := context.Background()
	k, _, err := db.CreateKey(ctx, store.NewKey{SiteID: site, Name: "k", Scopes: apikey.ListingsRead, Source: store.SourceCLI})
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := db.RevokeKey(ctx, k.ID); err != nil {
		tb.Fatal(err)
	}
	return k
}

// mustPlanChanged writes a site.plan_changed event and returns its id.
func mustPlanChanged(tb testing.TB, db *store.DB, site string) string {
	tb.Helper()
	if err := db.SetPlan(context.Background(), site, model.Professional); err != nil {
		tb.Fatal(err)
	}
	var id string
	if err := db.Pool.QueryRow(context.Background(), `SELECT max(id)::text FROM events`).Scan(&id); err != nil {
		tb.Fatal(err)
	}
	return id
}

func TestReconnectResumesWithoutDuplicates(t *testing.T) {
	o := newOrigin(t)
	site := mustSite(t, o.db)
	c := subscribe(t, eventstream.Options{URL: o.srv.URL + events.Path})
	c.waitReset(t) // the first connection has no continuity
	// The reset comes first, then the stream counts as connected (so that
	// Connected means the caches were purged): wait for it.
	for deadline := time.Now().Add(5 * time.Second); !c.stream.Connected(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("not Connected() after the first connection")
		}
	}

	a := mustRevokedKey(t, o.db, site)
	first := c.next(t)
	if first.Type != internalapi.EventKeyRevoked || first.ID != "1" {
		t.Fatalf("first event %+v", first)
	}
	if keyOf(t, first.Data) != a.ID {
		t.Fatalf("data %s, want key %s", first.Data, a.ID)
	}

	o.srv.CloseClientConnections() // the origin drops the stream
	b := mustRevokedKey(t, o.db, site)
	cID := mustPlanChanged(t, o.db, site)
	second, third := c.next(t), c.next(t)
	if second.ID != "2" || keyOf(t, second.Data) != b.ID || third.ID != cID || third.Type != internalapi.EventPlanChanged {
		t.Fatalf("after reconnecting: %+v, %+v", second, third)
	}
	last := c.noMore(t, o.db, site)
	reqs := o.requests()
	if len(reqs) < 2 || reqs[0] != "" || !slices.Contains(reqs[1:], "1") {
		t.Fatalf("Last-Event-ID of the stream requests: %q; want none, then 1", reqs)
	}
	if len(c.resets) != 0 {
		t.Fatalf("%d more resets after reconnecting with continuity", len(c.resets))
	}
	if got := c.stream.LastEventID(); got != last {
		t.Errorf("LastEventID %q, want %s", got, last)
	}
}

// TestReconnectWithoutEvents: a connection dropped before any event
// resumes from the position the stream opened at, not from scratch.
func TestReconnectWithoutEvents(t *testing.T) {
	o := newOrigin(t)
	site := mustSite(t, o.db)
	mustRevokedKey(t, o.db, site) // event 1, before the client
	deadline := time.Now().Add(5 * time.Second)
	for o.hub.Position() < 1 {
		if time.Now().After(deadline) {
			t.Fatal("the hub never published event 1")
		}
		time.Sleep(5 * time.Millisecond)
	}
	c := subscribe(t, eventstream.Options{URL: o.srv.URL + events.Path})
	c.waitReset(t)
	o.srv.CloseClientConnections()
	id := mustPlanChanged(t, o.db, site)
	if e := c.next(t); e.ID != id {
		t.Fatalf("got %+v, want event %s", e, id)
	}
	reqs := o.requests()
	if len(reqs) < 2 || reqs[1] != "1" {
		t.Fatalf("Last-Event-ID of the stream requests: %q; want none, then 1", reqs)
	}
	if len(c.resets) != 0 {
		t.Fatal("reset again after reconnecting with a position")
	}
}

func TestServerReset(t *testing.T) {
	o := newOrigin(t)
	site := mustSite(t, o.db)
	// Resuming from an id this outbox never issued: the origin says reset.
	c := subscribe(t, eventstream.Options{URL: o.srv.URL + events.Path, LastEventID: "999"})
	c.waitReset(t)
	if reqs := o.requests(); len(reqs) == 0 || reqs[0] != "999" {
		t.Fatalf("requests %q, want Last-Event-ID 999 first", reqs)
	}
	// Event ids now start below the old position: none is taken for a
	// duplicate.
	id := mustPlanChanged(t, o.db, site)
	if e := c.next(t); e.ID != id {
		t.Fatalf("after the reset got %+v, want %s", e, id)
	}
}

func TestRejectedAndUnreachable(t *testing.T) {
	var calls atomic.Int32
	deny := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.WriteHeader(401)
		io.WriteString(w, `{"error":{"code":"UNAUTHORIZED"}}`)
	}))
	defer deny.Close()
	c := subscribe(t, eventstream.Options{URL: deny.URL, MaxBackoff: 20 * time.Millisecond})
	deadline := time.Now().Add(5 * time.Second)
	for calls.Load() < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("%d attempts, want retries", calls.Load())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if c.stream.Connected() || len(c.resets) != 0 || len(c.events) != 0 {
		t.Fatal("a refused stream counted as connected")
	}

	var jsonCalls atomic.Int32
	notSSE := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		jsonCalls.Add(1)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, "{}")
	}))
	defer notSSE.Close()
	c = subscribe(t, eventstream.Options{URL: notSSE.URL, MaxBackoff: 20 * time.Millisecond})
	deadline = time.Now().Add(5 * time.Second)
	for jsonCalls.Load() < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("%d attempts, want retries", jsonCalls.Load())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if c.stream.Connected() || len(c.resets) != 0 {
		t.Fatal("a JSON response counted as a stream")
	}
}

// TestIdleTimeout: a stream that goes silent (no heartbeat) is dropped and
// resumed.
func TestIdleTimeout(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Last-Event-ID"))
		n := len(seen)
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "id: "+string(rune('0'+n))+"\nevent: tick\ndata: {}\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done() // then silence
	}))
	defer srv.Close()
	defer srv.CloseClientConnections()
	c := subscribe(t, eventstream.Options{URL: srv.URL, IdleTimeout: 100 * time.Millisecond})
	c.waitReset(t)
	for _, want := range []string{"1", "2"} {
		if e := c.next(t); e.ID != want || e.Type != "tick" {
			t.Fatalf("got %+v, want tick %s", e, want)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if seen[1] != "1" {
		t.Fatalf("resumed with %q, want 1", seen[1])
	}
}

func TestOptionsValidate(t *testing.T) {
	ok := eventstream.Options{URL: "http://x", InternalToken: "t", OnEvent: func(eventstream.Event) {}}
	for name, o := range map[string]eventstream.Options{
		"no URL":      {InternalToken: "t", OnEvent: ok.OnEvent},
		"no token":    {URL: "http://x", OnEvent: ok.OnEvent},
		"no OnEvent":  {URL: "http://x", InternalToken: "t"},
		"all missing": {},
	} {
		if err := o.Validate(); err == nil {
			t.Errorf("%s: Validate passed", name)
		}
		if _, err := eventstream.Subscribe(context.Background(), o); err == nil {
			t.Errorf("%s: Subscribe passed", name)
		}
	}
	if err := ok.Validate(); err != nil {
		t.Errorf("valid options: %v", err)
	}
}

// keyOf returns the key id of a key.revoked event's data.
func keyOf(tb testing.TB, data []byte) string {
	tb.Helper()
	var k internalapi.KeyRevoked
	if err := json.Unmarshal(data, &k); err != nil {
		tb.Fatalf("data %s: %v", data, err)
	}
	return k.KeyID
}

// TestScriptedServer drives the client with a hand-written stream: a
// duplicate after reconnecting is dropped; a reset rewinds the position.
func TestScriptedServer(t *testing.T) {
	script := []string{
		"retry: 5\n\nid: 5\nevent: a\ndata: 5\n\nid: 6\nevent: a\ndata: 6\n\n",
		"id: 6\nevent: a\ndata: 6 again\n\nid: 7\nevent: a\ndata: 7\n\n",
		"id: 2\nevent: reset\ndata: {}\n\nid: 3\nevent: a\ndata: 3\n\n",
	}
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Last-Event-ID"))
		n := len(seen)
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
		if n <= len(script) {
			io.WriteString(w, script[n-1])
			return // then the connection ends
		}
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer srv.Close()
	defer srv.CloseClientConnections()
	c := subscribe(t, eventstream.Options{URL: srv.URL})
	c.waitReset(t)
	var got []string
	for range 4 {
		e := c.next(t)
		got = append(got, e.ID+"="+string(e.Data))
	}
	if want := []string{"5=5", "6=6", "7=7", "3=3"}; !slices.Equal(got, want) {
		t.Fatalf("delivered %q, want %q", got, want)
	}
	c.waitReset(t) // the reset event
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		sent := slices.Clone(seen)
		mu.Unlock()
		if len(sent) >= 4 {
			if want := []string{"", "6", "7", "3"}; !slices.Equal(sent[:4], want) {
				t.Fatalf("Last-Event-ID sent %q, want %q", sent, want)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("only %d connections", len(sent))
		}
		time.Sleep(5 * time.Millisecond)
	}
}
