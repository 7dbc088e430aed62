package upload

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	json "github.com/goccy/go-json"

	"github.com/listgate/listgate/origin/api"
	"github.com/listgate/listgate/origin/ingest"
	"github.com/listgate/listgate/origin/openapi/contract"
	"github.com/listgate/listgate/origin/store"
	"github.com/listgate/listgate/origin/store/storetest"
	"github.com/listgate/listgate/pkg/devdb/devdbtest"
	"github.com/listgate/listgate/pkg/model"
	"github.com/listgate/listgate/pkg/syncbuf"
)

func TestMain(m *testing.M) { os.Exit(devdbtest.RunTests(m)) }

// samplesDir holds the shared REAXML sample feeds; they are read in place,
// never copied into the repository.
const samplesDir = "../../../shared/testdata/reaxml"

// clock is a settable clock for Config.Now.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// harness is an upload Service mounted on the origin's API server, over
// HTTP, on a database of the test's own.
type harness struct {
	tb  testing.TB
	db  *store.DB
	svc *Service
	url string
	// handler is the API server's, for servers of other settings.
	handler http.Handler
	clock   *clock
	logs    *syncbuf.Buffer
}

// newHarness builds a service on a new database; tune adjusts the test
// defaults (fast polling and retries, a settable clock, the real importer).
func newHarness(tb testing.TB, tune func(*Config)) *harness {
	tb.Helper()
	return newHarnessOn(tb, storetest.NewDB(tb), tune)
}

// newHarnessOn builds a service on db, as a second origin would.
func newHarnessOn(tb testing.TB, db *store.DB, tune func(*Config)) *harness {
	tb.Helper()
	h := &harness{tb: tb, db: db, clock: &clock{t: time.Now()}, logs: &syncbuf.Buffer{}}
	log := slog.New(slog.NewJSONHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	cfg := Config{DB: db, Importer: ingest.New(db, log), Log: log, Now: h.clock.now,
		PollInterval: 50 * time.Millisecond, Lease: 3 * time.Second, RetryDelay: 10 * time.Millisecond}
	if tune != nil {
		tune(&cfg)
	}
	svc, err := New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	h.svc = svc
	h.handler = contract.Wrap(tb, api.New(api.Config{Ready: db.Ping, Unavailable: store.IsUnavailable, Metrics: db.WritePoolMetrics,
		Log: log, Mounts: []api.Mounter{svc}}).Handler())
	srv := httptest.NewServer(h.handler)
	tb.Cleanup(srv.Close)
	h.url = srv.URL
	return h
}

// slowServer serves the harness's API with a server read timeout, as
// `origin serve` does, and returns its base URL.
func (h *harness) slowServer(readTimeout time.Duration) string {
	srv := httptest.NewUnstartedServer(h.handler)
	srv.Config.ReadTimeout = readTimeout
	srv.Start()
	h.tb.Cleanup(srv.Close)
	return srv.URL
}

// run starts the service's workers until the test ends.
func (h *harness) run() {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.svc.Run(ctx)
	}()
	h.tb.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			h.tb.Error("workers did not stop within 10 s")
		}
	})
}

func mustSite(tb testing.TB, db *store.DB) store.Site {
	tb.Helper()
	s, err := db.CreateSite(context.Background(), "Upload Realty", model.Professional, "")
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// mustClient creates an upload client of site and returns its id and secret.
func mustClient(tb testing.TB, db *store.DB, siteID string) (string, string) {
	tb.Helper()
	c, secret, err := CreateClient(context.Background(), db, siteID, "CRM")
	if err != nil {
		tb.Fatal(err)
	}
	return c.ClientID, secret
}

// response is a response with its body read.
type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) json(tb testing.TB, dst any) {
	tb.Helper()
	if err := json.Unmarshal(r.body, dst); err != nil {
		tb.Fatalf("response %d %q: %v", r.status, r.body, err)
	}
}

// errorCode returns the code of the API's error envelope.
func (r response) errorCode(tb testing.TB) string {
	tb.Helper()
	var env struct {
		Error struct{ Code string } `json:"error"`
	}
	r.json(tb, &env)
	return env.Error.Code
}

func (h *harness) do(req *http.Request) response {
	h.tb.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.tb.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		h.tb.Fatal(err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: body}
}

func (h *harness) newRequest(method, path string, body io.Reader) *http.Request {
	h.tb.Helper()
	req, err := http.NewRequest(method, h.url+path, body)
	if err != nil {
		h.tb.Fatal(err)
	}
	return req
}

// postToken posts form to the token endpoint, with HTTP Basic credentials
// when basic holds an id and a secret.
func (h *harness) postToken(form url.Values, basic ...string) response {
	h.tb.Helper()
	req := h.newRequest("POST", "/v1/oauth/token", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if len(basic) == 2 {
		req.Header.Set("Authorization", basicHeader(basic[0], basic[1]))
	}
	return h.do(req)
}

// basicHeader encodes client credentials as RFC 6749 §2.3.1 says.
func basicHeader(id, secret string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(url.QueryEscape(id)+":"+url.QueryEscape(secret)))
}

// mustToken gets an access token with the client's credentials.
func (h *harness) mustToken(id, secret string) string {
	h.tb.Helper()
	r := h.postToken(url.Values{"grant_type": {"client_credentials"}}, id, secret)
	var tok tokenResponse
	r.json(h.tb, &tok)
	if r.status != http.StatusOK || tok.AccessToken == "" {
		h.tb.Fatalf("token: %d %s", r.status, r.body)
	}
	return tok.AccessToken
}

// mustSiteToken creates a site, a client and a token of it.
func (h *harness) mustSiteToken() (store.Site, string) {
	h.tb.Helper()
	site := mustSite(h.tb, h.db)
	return site, h.mustToken(mustClient(h.tb, h.db, site.ID))
}

// upload posts a feed with the given token, content type and encoding
// (empty: no header).
func (h *harness) upload(token string, body io.Reader, contentType, encoding string) response {
	h.tb.Helper()
	req := h.newRequest("POST", "/v1/feeds", body)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if encoding != "" {
		req.Header.Set("Content-Encoding", encoding)
	}
	return h.do(req)
}

// mustUpload uploads a feed that must be accepted and returns its id.
func (h *harness) mustUpload(token string, feed []byte, gzipped bool) string {
	h.tb.Helper()
	body, enc := feed, ""
	if gzipped {
		body, enc = gzipBytes(h.tb, feed), "gzip"
	}
	r := h.upload(token, bytes.NewReader(body), "application/xml", enc)
	var q feedQueued
	r.json(h.tb, &q)
	if r.status != http.StatusAccepted || q.FeedID == "" || q.Status != "queued" {
		h.tb.Fatalf("upload: %d %s", r.status, r.body)
	}
	return q.FeedID
}

func (h *harness) getFeed(token, id string) response {
	h.tb.Helper()
	req := h.newRequest("GET", "/v1/feeds/"+id, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return h.do(req)
}

// mustAwaitFeed polls the feed's status until it is done or failed, for at
// most 30 s.
func (h *harness) mustAwaitFeed(token, id string) feedStatus {
	h.tb.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		r := h.getFeed(token, id)
		var st feedStatus
		r.json(h.tb, &st)
		if r.status != http.StatusOK {
			h.tb.Fatalf("feed status: %d %s", r.status, r.body)
		}
		if st.Status == store.FeedDone || st.Status == store.FeedFailed {
			return st
		}
		if time.Now().After(deadline) {
			h.tb.Fatalf("feed %s still %s after 30 s", id, st.Status)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func gzipBytes(tb testing.TB, b []byte) []byte {
	tb.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		tb.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

func gunzipBytes(tb testing.TB, b []byte) []byte {
	tb.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		tb.Fatal(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// mustSamples returns the sample feeds by file name.
func mustSamples(tb testing.TB) map[string][]byte {
	tb.Helper()
	paths, err := filepath.Glob(filepath.Join(samplesDir, "*.xml"))
	if err != nil || len(paths) == 0 {
		tb.Fatalf("no sample feeds in %s (%v)", samplesDir, err)
	}
	feeds := map[string][]byte{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			tb.Fatal(err)
		}
		feeds[filepath.Base(p)] = b
	}
	return feeds
}

func mustSample(tb testing.TB, name string) []byte {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join(samplesDir, name))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// storedBody returns a feed job's stored body, decompressed.
func mustStoredBody(tb testing.TB, db *store.DB, id string) []byte {
	tb.Helper()
	var body []byte
	if err := db.Pool.QueryRow(context.Background(), `SELECT body FROM feed_jobs WHERE id = $1`, id).Scan(&body); err != nil {
		tb.Fatal(err)
	}
	return gunzipBytes(tb, body)
}

// fakeImporter records what it is given and answers as told. The real
// importer is used wherever the outcome of an import matters; this one
// tests the worker machinery on its own.
type fakeImporter struct {
	result ingest.Result
	err    error
	// delay makes each import take this long (or until ctx ends).
	delay time.Duration
	// started, when not nil, receives a value as each import starts.
	started chan struct{}

	mu    sync.Mutex
	feeds [][]byte
}

func (f *fakeImporter) Import(ctx context.Context, siteID string, feed io.Reader, opts ingest.Options) (ingest.Result, error) {
	b, err := io.ReadAll(feed)
	if err != nil {
		return ingest.Result{}, err
	}
	f.mu.Lock()
	f.feeds = append(f.feeds, b)
	f.mu.Unlock()
	if f.started != nil {
		f.started <- struct{}{}
	}
	if f.delay > 0 {
		select {
		case <-ctx.Done():
			return ingest.Result{}, ctx.Err()
		case <-time.After(f.delay):
		}
	}
	return f.result, f.err
}

func (f *fakeImporter) calls() [][]byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([][]byte(nil), f.feeds...)
}

// withImporter is a harness tuning that uses imp.
func withImporter(imp Importer, more ...func(*Config)) func(*Config) {
	return func(c *Config) {
		c.Importer = imp
		for _, f := range more {
			f(c)
		}
	}
}
