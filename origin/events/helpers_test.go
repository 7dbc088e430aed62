package events

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/listgate/listgate/origin/api"
	"github.com/listgate/listgate/origin/store"
	"github.com/listgate/listgate/origin/store/storetest"
	"github.com/listgate/listgate/pkg/apikey"
	"github.com/listgate/listgate/pkg/devdb/devdbtest"
	"github.com/listgate/listgate/pkg/model"
	"github.com/listgate/listgate/pkg/syncbuf"
)

func TestMain(m *testing.M) { os.Exit(devdbtest.RunTests(m)) }

const token = "0123456789abcdef0123456789abcdef-events"

// origin is one origin process: its own pool, hub and HTTP server, on a
// database possibly shared with other origins.
type origin struct {
	db   *store.DB
	hub  *Hub
	srv  *httptest.Server
	logs *syncbuf.Buffer
	stop func() // stops the hub and waits for Run to return
}

// newOrigin starts an origin on the database at url. cfg.DB and cfg.Log are
// filled in; tune is applied to the hub before it runs, and to the server
// before it starts.
func newOrigin(tb testing.TB, url string, cfg Config, tune ...func(*Hub, *httptest.Server)) *origin {
	tb.Helper()
	db, err := store.Open(context.Background(), url, store.Options{MaxConns: 10})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(db.Close)
	o := &origin{db: db, logs: &syncbuf.Buffer{}}
	tb.Cleanup(func() {
		if tb.Failed() {
			tb.Logf("origin log:\n%s", o.logs.String())
		}
	})
	cfg.DB = db
	cfg.Log = slog.New(slog.NewJSONHandler(o.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	o.hub, err = New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	srv := api.New(api.Config{Ready: db.Ping, Unavailable: store.IsUnavailable, Metrics: db.WritePoolMetrics,
		Log: cfg.Log, InternalToken: token, Mounts: []api.Mounter{o.hub}})
	o.srv = httptest.NewUnstartedServer(srv.Handler())
	for _, f := range tune {
		f(o.hub, o.srv)
	}
	o.srv.Start()
	tb.Cleanup(o.srv.Close)

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := o.hub.Run(ctx); err != nil {
			tb.Errorf("hub: %v", err)
		}
	}()
	o.stop = func() { cancel(); <-done }
	tb.Cleanup(o.stop)
	select {
	case <-o.hub.ready:
	case <-time.After(10 * time.Second):
		tb.Fatal("hub not ready after 10 s")
	}
	return o
}

// newTestOrigin starts an origin on a new database, with test timings.
func newTestOrigin(tb testing.TB, cfg Config) *origin {
	tb.Helper()
	return newOrigin(tb, storetest.URL(tb), cfg)
}

// frame is one blank-line-terminated block of a stream, as sent.
type frame struct {
	ID, Event, Data, Retry string
	HasID                  bool
	Comments               []string
}

// isEvent reports whether the frame dispatches an event.
func (f frame) isEvent() bool { return f.Event != "" || f.Data != "" }

// sse is an open stream read in the background.
type sse struct {
	resp   *http.Response
	frames chan frame
	done   chan error // the read error, once the stream ends
	cancel context.CancelFunc
}

// dial opens the stream with Last-Event-ID lastID ("" for none).
func (o *origin) dial(tb testing.TB, lastID string) *sse {
	tb.Helper()
	hdr := http.Header{api.HeaderInternalToken: {token}}
	if lastID != "" {
		hdr.Set("Last-Event-ID", lastID)
	}
	return dialURL(tb, o.srv.URL+Path, hdr)
}

func dialURL(tb testing.TB, url string, hdr http.Header) *sse {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	req.Header = hdr
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		tb.Fatal(err)
	}
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		cancel()
		tb.Fatalf("GET %s = %d %s: %s", url, resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	s := &sse{resp: resp, frames: make(chan frame, 100000), done: make(chan error, 1), cancel: cancel}
	go s.read()
	tb.Cleanup(s.close)
	return s
}

func (s *sse) close() {
	s.cancel()
	s.resp.Body.Close()
}

func (s *sse) read() {
	sc := bufio.NewScanner(s.resp.Body)
	sc.Buffer(nil, 1<<20)
	var f frame
	empty := true
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			if !empty {
				s.frames <- f
			}
			f, empty = frame{}, true
			continue
		}
		empty = false
		name, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch name {
		case "":
			f.Comments = append(f.Comments, value)
		case "id":
			f.ID, f.HasID = value, true
		case "event":
			f.Event = value
		case "data":
			if f.Data != "" {
				f.Data += "\n"
			}
			f.Data += value
		case "retry":
			f.Retry = value
		}
	}
	err := sc.Err()
	if err == nil {
		err = io.EOF
	}
	s.done <- err
	close(s.frames)
}

// next returns the next frame within d.
func (s *sse) next(tb testing.TB, d time.Duration) frame {
	tb.Helper()
	select {
	case f, ok := <-s.frames:
		if !ok {
			tb.Fatalf("stream ended: %v", <-s.done)
		}
		return f
	case <-time.After(d):
		tb.Fatalf("no frame within %s", d)
	}
	return frame{}
}

// nextEvent returns the next frame that dispatches an event within d,
// skipping heartbeats and position markers.
func (s *sse) nextEvent(tb testing.TB, d time.Duration) frame {
	tb.Helper()
	deadline := time.Now().Add(d)
	for {
		f := s.next(tb, time.Until(deadline))
		if f.isEvent() {
			return f
		}
	}
}

// opening reads the opening retry: block and returns its value.
func (s *sse) opening(tb testing.TB) string {
	tb.Helper()
	f := s.next(tb, 5*time.Second)
	if f.Retry == "" || f.isEvent() || f.HasID || len(f.Comments) > 0 {
		tb.Fatalf("first frame %+v, want retry: alone", f)
	}
	return f.Retry
}

// position reads the opening of a stream without Last-Event-ID, the retry:
// block and the position marker, and returns the position.
func (s *sse) position(tb testing.TB) string {
	tb.Helper()
	s.opening(tb)
	f := s.next(tb, 5*time.Second)
	if f.isEvent() || !f.HasID || f.Retry != "" {
		tb.Fatalf("second frame %+v, want a position marker", f)
	}
	return f.ID
}

// waitEnd waits for the stream to end within d.
func (s *sse) waitEnd(tb testing.TB, d time.Duration) {
	tb.Helper()
	deadline := time.After(d)
	for {
		select {
		case _, ok := <-s.frames:
			if !ok {
				return
			}
		case <-deadline:
			tb.Fatalf("stream still open after %s", d)
		}
	}
}

// mustSite creates a site.
func mustSite(tb testing.TB, db *store.DB, plan model.Plan) store.Site {
	tb.Helper()
	s, err := db.CreateSite(context.Background(), "Events Realty", plan, "")
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// mustKey creates a key on site and returns it with its secret.
func mustKey(tb testing.TB, db *store.DB, site string) (store.Key, string) {
	tb.Helper()
	k, secret, err := db.CreateKey(context.Background(), store.NewKey{SiteID: site, Name: "test key",
		Scopes: apikey.ListingsRead, Source: store.SourceCLI})
	if err != nil {
		tb.Fatal(err)
	}
	return k, secret
}

// mustRevoke revokes a key.
func mustRevoke(tb testing.TB, db *store.DB, keyID string) {
	tb.Helper()
	if _, err := db.RevokeKey(context.Background(), keyID); err != nil {
		tb.Fatal(err)
	}
}

// mustEvents writes n site.content_changed events of site, each in its own
// transaction, and returns their ids.
func mustEvents(tb testing.TB, db *store.DB, site string, n int) []string {
	tb.Helper()
	var ids []string
	for i := 0; i < n; i++ {
		ctx := context.Background()
		var id string
		err := db.InTx(ctx, func(tx pgx.Tx) error {
			if err := store.InsertEvent(ctx, tx, site, store.EventContentChanged, map[string]any{
				"site_id": site, "reason": "test", "n": i}); err != nil {
				return err
			}
			return tx.QueryRow(ctx, `SELECT currval(pg_get_serial_sequence('events', 'id'))::text`).Scan(&id)
		})
		if err != nil {
			tb.Fatal(err)
		}
		ids = append(ids, id)
	}
	return ids
}

// fast is a configuration with test timings.
func fast() Config {
	return Config{Heartbeat: time.Hour, PollInterval: time.Second, Retry: 10 * time.Millisecond,
		PruneInterval: -1, WriteTimeout: 5 * time.Second}
}
