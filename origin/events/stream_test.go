package events

import (
	"context"
	"encoding/hex"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	json "github.com/goccy/go-json"
	"github.com/jackc/pgx/v5"

	"github.com/listgate/listgate/origin/api"
	"github.com/listgate/listgate/origin/store"
	"github.com/listgate/listgate/origin/store/storetest"
	"github.com/listgate/listgate/pkg/apikey"
	"github.com/listgate/listgate/pkg/internalapi"
	"github.com/listgate/listgate/pkg/model"
)

func TestStreamRequests(t *testing.T) {
	o := newTestOrigin(t, fast())
	// An origin that holds another token refuses this one.
	bare := api.New(api.Config{Ready: o.db.Ping, Unavailable: store.IsUnavailable, Metrics: o.db.WritePoolMetrics,
		InternalToken: "another-origin-token-0123456789abcdef", Log: slog.New(slog.DiscardHandler),
		Mounts: []api.Mounter{o.hub}}).Handler()
	for name, tc := range map[string]struct {
		h      http.Handler
		method string
		url    string
		header map[string]string
		status int
		code   string
	}{
		"no token":               {nil, "GET", Path, nil, 401, "UNAUTHORIZED"},
		"wrong token":            {nil, "GET", Path, map[string]string{api.HeaderInternalToken: token + "x"}, 401, "UNAUTHORIZED"},
		"another origin's token": {bare, "GET", Path, map[string]string{api.HeaderInternalToken: token}, 401, "UNAUTHORIZED"},
		"malformed header":       {nil, "GET", Path, map[string]string{api.HeaderInternalToken: token, "Last-Event-ID": "abc"}, 422, "VALIDATION_ERROR"},
		"negative header":        {nil, "GET", Path, map[string]string{api.HeaderInternalToken: token, "Last-Event-ID": "-1"}, 422, "VALIDATION_ERROR"},
		"huge header":            {nil, "GET", Path, map[string]string{api.HeaderInternalToken: token, "Last-Event-ID": "99999999999999999999"}, 422, "VALIDATION_ERROR"},
		"malformed query":        {nil, "GET", Path + "?last_event_id=1.5", map[string]string{api.HeaderInternalToken: token}, 422, "VALIDATION_ERROR"},
		"unparseable query":      {nil, "HEAD", Path + "?last_event_id=1;x=1", map[string]string{api.HeaderInternalToken: token}, 422, ""},
		"bad query escape":       {nil, "HEAD", Path + "?last_event_id=%zz", map[string]string{api.HeaderInternalToken: token}, 422, ""},
		"wrong method":           {nil, "POST", Path, map[string]string{api.HeaderInternalToken: token}, 405, "METHOD_NOT_ALLOWED"},
		"head":                   {nil, "HEAD", Path, map[string]string{api.HeaderInternalToken: token}, 200, ""},
		"head without a token":   {nil, "HEAD", Path, nil, 401, ""},
		"wrong method no token":  {nil, "DELETE", Path, nil, 405, "METHOD_NOT_ALLOWED"},
	} {
		t.Run(name, func(t *testing.T) {
			h := tc.h
			if h == nil {
				h = o.srv.Config.Handler
			}
			req := httptest.NewRequest(tc.method, tc.url, nil)
			for k, v := range tc.header {
				req.Header.Set(k, v)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tc.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, tc.status, rec.Body)
			}
			if tc.code != "" {
				var env struct {
					Error struct{ Code string } `json:"error"`
				}
				if err := json.Unmarshal(rec.Body.Bytes(), &env); err != nil || env.Error.Code != tc.code {
					t.Fatalf("body %s, want code %s", rec.Body, tc.code)
				}
			}
			if tc.method == "HEAD" && tc.status == 200 && rec.Header().Get("Content-Type") != "text/event-stream" {
				t.Errorf("HEAD Content-Type %q", rec.Header().Get("Content-Type"))
			}
		})
	}
}

func TestStreamWireFormat(t *testing.T) {
	o := newTestOrigin(t, fast())
	site := mustSite(t, o.db, model.Starter)
	key, secret := mustKey(t, o.db, site.ID)
	s := o.dial(t, "")
	if got := s.resp.Header.Get("Cache-Control"); got != "no-store" {
		t.Errorf("Cache-Control %q", got)
	}
	if retry := s.opening(t); retry != "10" {
		t.Errorf("retry: %s, want 10", retry)
	}
	if pos := s.next(t, 5*time.Second); !pos.HasID || pos.ID != "0" || pos.isEvent() {
		t.Fatalf("position frame %+v, want position 0 on an empty outbox", pos)
	}
	mustRevoke(t, o.db, key.ID)
	f := s.nextEvent(t, 5*time.Second)
	if f.Event != internalapi.EventKeyRevoked || f.ID != "1" {
		t.Fatalf("frame %+v, want key.revoked id 1", f)
	}
	var data internalapi.KeyRevoked
	if err := json.Unmarshal([]byte(f.Data), &data); err != nil {
		t.Fatal(err)
	}
	hash := apikey.Hash(secret)
	want := internalapi.KeyRevoked{KeyID: key.ID, SiteID: site.ID, KeyHash: hex.EncodeToString(hash[:])}
	if data != want {
		t.Errorf("data %+v, want %+v", data, want)
	}
	if strings.Contains(f.Data, ": ") || strings.Contains(f.Data, ", ") {
		t.Errorf("data is not compact JSON: %s", f.Data)
	}

	if err := o.db.SetPlan(context.Background(), site.ID, model.Professional); err != nil {
		t.Fatal(err)
	}
	f = s.nextEvent(t, 5*time.Second)
	var plan internalapi.PlanChanged
	if err := json.Unmarshal([]byte(f.Data), &plan); err != nil {
		t.Fatal(err)
	}
	if f.Event != internalapi.EventPlanChanged || f.ID != "2" || plan != (internalapi.PlanChanged{SiteID: site.ID, Plan: model.Professional, Limit: 600}) {
		t.Errorf("frame %+v data %+v", f, plan)
	}

	// An event whose payload lacks site_id gets it from the column.
	if _, err := o.db.Pool.Exec(context.Background(), `WITH e AS (INSERT INTO events (site_id, type, payload)
		VALUES ($1, 'site.content_changed', '{"reason": "dashboard"}') RETURNING id)
		SELECT pg_notify('listgate_events', id::text) FROM e`, site.ID); err != nil {
		t.Fatal(err)
	}
	f = s.nextEvent(t, 5*time.Second)
	if f.Data != `{"reason":"dashboard","site_id":"`+site.ID+`"}` {
		t.Errorf("data %s, want site_id added", f.Data)
	}
}

// TestRevokeReachesStreamWithinASecond measures store.RevokeKey returning
// → the subscriber holding the key.revoked event, over several keys.
func TestRevokeReachesStreamWithinASecond(t *testing.T) {
	o := newTestOrigin(t, Config{})
	site := mustSite(t, o.db, model.Starter)
	s := o.dial(t, "")
	s.position(t)
	var lat []time.Duration
	for i := 0; i < 20; i++ {
		key, _ := mustKey(t, o.db, site.ID)
		start := time.Now()
		mustRevoke(t, o.db, key.ID)
		f := s.nextEvent(t, time.Second)
		d := time.Since(start)
		if f.Event != internalapi.EventKeyRevoked || !strings.Contains(f.Data, key.ID) {
			t.Fatalf("got %+v, want key.revoked for %s", f, key.ID)
		}
		if d >= time.Second {
			t.Fatalf("revoke → delivery took %s, want < 1 s", d)
		}
		lat = append(lat, d)
	}
	slices.Sort(lat)
	t.Logf("revoke → stream delivery over %d revocations: min %s, median %s, max %s",
		len(lat), lat[0], lat[len(lat)/2], lat[len(lat)-1])
}

func TestTwoOriginsShareEvents(t *testing.T) {
	url := storetest.URL(t)
	a := newOrigin(t, url, fast())
	b := newOrigin(t, url, fast())
	site := mustSite(t, a.db, model.Starter)
	onA, onB := a.dial(t, ""), b.dial(t, "")
	onA.position(t)
	onB.position(t)

	key, _ := mustKey(t, a.db, site.ID)
	mustRevoke(t, a.db, key.ID) // written through origin A
	if err := b.db.SetPlan(context.Background(), site.ID, model.Enterprise); err != nil {
		t.Fatal(err) // written through origin B
	}
	for name, s := range map[string]*sse{"A": onA, "B": onB} {
		first, second := s.nextEvent(t, 5*time.Second), s.nextEvent(t, 5*time.Second)
		if first.Event != internalapi.EventKeyRevoked || second.Event != internalapi.EventPlanChanged ||
			first.ID != "1" || second.ID != "2" {
			t.Errorf("origin %s streamed %+v, %+v; want key.revoked 1, site.plan_changed 2", name, first, second)
		}
	}
}

func TestResume(t *testing.T) {
	o := newTestOrigin(t, fast())
	site := mustSite(t, o.db, model.Starter)
	s := o.dial(t, "")
	s.position(t)
	ids := mustEvents(t, o.db, site.ID, 5)
	for _, id := range ids {
		if f := s.nextEvent(t, 5*time.Second); f.ID != id {
			t.Fatalf("live event %s, want %s", f.ID, id)
		}
	}
	s.close()
	// Missed while away.
	ids = append(ids, mustEvents(t, o.db, site.ID, 3)...)

	for name, dial := range map[string]func(last string) *sse{
		"header": func(last string) *sse { return o.dial(t, last) },
		"query": func(last string) *sse {
			return dialURL(t, o.srv.URL+Path+"?last_event_id="+last, http.Header{api.HeaderInternalToken: {token}})
		},
	} {
		t.Run(name, func(t *testing.T) {
			r := dial(ids[1])
			var got []string
			for range ids[2:] {
				f := r.nextEvent(t, 5*time.Second)
				if f.Event != internalapi.EventContentChanged {
					t.Fatalf("frame %+v", f)
				}
				got = append(got, f.ID)
			}
			if !slices.Equal(got, ids[2:]) {
				t.Fatalf("resumed with %v, want %v", got, ids[2:])
			}
			// Then live, with nothing repeated.
			live := mustEvents(t, o.db, site.ID, 1)[0]
			if f := r.nextEvent(t, 5*time.Second); f.ID != live {
				t.Fatalf("after the backlog got %+v, want live event %s", f, live)
			}
			ids = append(ids, live)
		})
	}

	t.Run("at the head", func(t *testing.T) {
		r := o.dial(t, ids[len(ids)-1])
		r.opening(t)
		live := mustEvents(t, o.db, site.ID, 1)[0]
		if f := r.next(t, 5*time.Second); f.ID != live {
			t.Fatalf("got %+v, want the live event %s first", f, live)
		}
	})
}

// TestResumeUnderLoad resumes while events are being written: the backlog
// and the live events must join with no gap and no duplicate.
func TestResumeUnderLoad(t *testing.T) {
	o := newTestOrigin(t, fast())
	site := mustSite(t, o.db, model.Starter)
	first := mustEvents(t, o.db, site.ID, 1)[0]
	done := make(chan []string)
	go func() { done <- mustEvents(t, o.db, site.ID, 60) }()
	r := o.dial(t, first)
	written := <-done
	var got []string
	for range written {
		got = append(got, r.nextEvent(t, 5*time.Second).ID)
	}
	if !slices.Equal(got, written) {
		t.Fatalf("got %v\nwant %v", got, written)
	}
}

func TestResumeFromPrunedOrUnknownID(t *testing.T) {
	o := newTestOrigin(t, Config{Retention: time.Hour, PruneInterval: -1, Retry: time.Second})
	ctx := context.Background()
	site := mustSite(t, o.db, model.Starter)
	ids := mustEvents(t, o.db, site.ID, 4)
	// The first three are two hours old: pruned.
	if _, err := o.db.Pool.Exec(ctx, `UPDATE events SET created_at = now() - interval '2 hours' WHERE id <= $1`, ids[2]); err != nil {
		t.Fatal(err)
	}
	if n, err := o.hub.Prune(ctx); err != nil || n != 3 {
		t.Fatalf("Prune = %d, %v; want 3", n, err)
	}
	head := ids[3]
	awaitPosition(t, o.hub, head)
	for name, tc := range map[string]struct {
		last   string
		reset  string // reason, "" for none
		replay []string
	}{
		"older than the outbox":   {ids[0], "expired", nil},
		"from before any event":   {"0", "expired", nil},
		"the last pruned event":   {ids[2], "", []string{ids[3]}},
		"never issued":            {"999999", "unknown", nil},
		"the head, nothing after": {"head", "", nil}, // the head when the case runs
	} {
		t.Run(name, func(t *testing.T) {
			last := tc.last
			if last == "head" {
				last = head
			}
			awaitPosition(t, o.hub, head)
			s := o.dial(t, last)
			s.opening(t)
			live := mustEvents(t, o.db, site.ID, 1)[0]
			f := s.next(t, 5*time.Second)
			switch {
			case tc.reset != "":
				if f.Event != internalapi.EventReset || f.ID != head || f.Data != `{"reason":"`+tc.reset+`"}` {
					t.Fatalf("first frame %+v, want reset (%s) at %s", f, tc.reset, head)
				}
			case len(tc.replay) > 0:
				if f.ID != tc.replay[0] || f.Event != internalapi.EventContentChanged {
					t.Fatalf("first frame %+v, want event %s", f, tc.replay[0])
				}
			default:
				if f.ID != live {
					t.Fatalf("first frame %+v, want live event %s", f, live)
				}
				head = live
				return
			}
			// The rest of the backlog (events of earlier cases), then the
			// live event.
			for {
				g := s.nextEvent(t, 5*time.Second)
				if g.ID == live {
					break
				}
				if tc.reset != "" || g.ID > head && len(g.ID) >= len(head) {
					t.Fatalf("then %+v, want live event %s", g, live)
				}
			}
			head = live
		})
	}
}

func TestHeartbeat(t *testing.T) {
	cfg := fast()
	cfg.Heartbeat = 20 * time.Millisecond
	o := newTestOrigin(t, cfg)
	s := o.dial(t, "")
	s.position(t)
	for i := 0; i < 3; i++ {
		f := s.next(t, 2*time.Second)
		if !slices.Equal(f.Comments, []string{"heartbeat"}) || f.isEvent() || f.HasID {
			t.Fatalf("frame %+v, want a heartbeat comment", f)
		}
	}
}

// TestServerTimeoutsDoNotCutStream runs the stream on a server whose
// ReadTimeout and WriteTimeout are far shorter than the stream lives.
func TestServerTimeoutsDoNotCutStream(t *testing.T) {
	cfg := fast()
	cfg.Heartbeat = 25 * time.Millisecond
	o := newOrigin(t, storetest.URL(t), cfg, func(_ *Hub, srv *httptest.Server) {
		srv.Config.ReadTimeout = 150 * time.Millisecond
		srv.Config.WriteTimeout = 150 * time.Millisecond
	})
	site := mustSite(t, o.db, model.Starter)
	s := o.dial(t, "")
	s.position(t)
	start := time.Now()
	for time.Since(start) < 600*time.Millisecond {
		s.next(t, time.Second)
	}
	id := mustEvents(t, o.db, site.ID, 1)[0]
	if f := s.nextEvent(t, 2*time.Second); f.ID != id {
		t.Fatalf("after %s got %+v, want event %s", time.Since(start), f, id)
	}
}

func TestShutdownEndsStreams(t *testing.T) {
	o := newTestOrigin(t, fast())
	s := o.dial(t, "")
	s.position(t)
	o.stop()
	s.waitEnd(t, 5*time.Second)
	resp, err := http.Get(o.srv.URL + Path) // no token: still 401
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	req, _ := http.NewRequest("GET", o.srv.URL+Path, nil)
	req.Header.Set(api.HeaderInternalToken, token)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("after shutdown: %d %s, want 503 with Retry-After", resp.StatusCode, b)
	}
}

// idsOf returns the ids of frames.
func idsOf(fs []frame) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.ID)
	}
	return out
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// awaitPosition waits until the hub has published the event with id.
func awaitPosition(tb testing.TB, h *Hub, id string) {
	tb.Helper()
	want, _ := strconv.ParseInt(id, 10, 64)
	deadline := time.Now().Add(10 * time.Second)
	for h.Position() < want {
		if time.Now().After(deadline) {
			tb.Fatalf("hub at %d, never reached %d", h.Position(), want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Lead events share the outbox but are the delivery workers': streams skip
// them, live and when resuming, and still move past them.
func TestLeadEventsNotStreamed(t *testing.T) {
	o := newTestOrigin(t, fast())
	site := mustSite(t, o.db, model.Starter)
	s := o.dial(t, "")
	s.position(t)
	before := mustEvents(t, o.db, site.ID, 1)[0]
	if f := s.nextEvent(t, 5*time.Second); f.ID != before {
		t.Fatalf("live event %+v, want %s", f, before)
	}
	ctx := context.Background()
	for range 3 {
		err := o.db.InTx(ctx, func(tx pgx.Tx) error {
			return store.InsertEvent(ctx, tx, site.ID, store.EventLeadCreated, map[string]any{"lead_id": 1})
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	after := mustEvents(t, o.db, site.ID, 1)[0]
	if f := s.nextEvent(t, 5*time.Second); f.ID != after {
		t.Fatalf("live: got %+v after the lead events, want %s", f, after)
	}
	r := o.dial(t, before)
	if f := r.nextEvent(t, 5*time.Second); f.ID != after {
		t.Fatalf("resumed: got %+v, want %s", f, after)
	}
}
