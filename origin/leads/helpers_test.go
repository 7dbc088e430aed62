package leads_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/listgate/listgate/origin/api"
	"github.com/listgate/listgate/origin/ingest"
	"github.com/listgate/listgate/origin/leads"
	"github.com/listgate/listgate/origin/openapi/contract"
	"github.com/listgate/listgate/origin/store"
	"github.com/listgate/listgate/origin/store/storetest"
	"github.com/listgate/listgate/pkg/apikey"
	"github.com/listgate/listgate/pkg/devdb/devdbtest"
	"github.com/listgate/listgate/pkg/model"
)

func TestMain(m *testing.M) { os.Exit(devdbtest.RunTests(m)) }

const internalToken = "0123456789abcdef0123456789abcdef-leads"

// fixture is a site with a leads:write key on a database of the test's own,
// served through the origin's real handler chain.
type fixture struct {
	db      *store.DB
	site    string
	keyID   string
	handler http.Handler
}

// newFixture makes a migrated database, a site and a key, and the handler
// with the leads service mounted, configured by cfg (its DB is set here).
func newFixture(tb testing.TB, cfg leads.Config) *fixture {
	tb.Helper()
	return newFixtureOn(tb, storetest.NewDB(tb), cfg)
}

func newFixtureOn(tb testing.TB, db *store.DB, cfg leads.Config) *fixture {
	tb.Helper()
	f := &fixture{db: db}
	f.site, f.keyID = mustSiteAndKey(tb, db)
	if cfg.DB == nil {
		cfg.DB = db
	}
	f.handler = mustHandler(tb, db, cfg)
	return f
}

func mustHandler(tb testing.TB, db *store.DB, cfg leads.Config) http.Handler {
	tb.Helper()
	log := slog.New(slog.DiscardHandler)
	if os.Getenv("LEADS_TEST_LOG") != "" { // see what the server logs
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	if cfg.Log == nil {
		cfg.Log = log
	}
	return contract.Wrap(tb, api.New(api.Config{Ready: db.Ping, Unavailable: store.IsUnavailable, Metrics: db.WritePoolMetrics,
		Log: log, InternalToken: internalToken,
		Mounts: []api.Mounter{leads.New(cfg)}}).Handler())
}

func mustSiteAndKey(tb testing.TB, db *store.DB) (site, keyID string) {
	tb.Helper()
	ctx := context.Background()
	s, err := db.CreateSite(ctx, "Leads Realty", model.Professional, "")
	if err != nil {
		tb.Fatal(err)
	}
	k, _, err := db.CreateKey(ctx, store.NewKey{SiteID: s.ID, Name: "forms", Scopes: apikey.LeadsWrite, Source: store.SourceCLI})
	if err != nil {
		tb.Fatal(err)
	}
	return s.ID, k.ID
}

// identity returns the headers the edge adds for this fixture's key.
func (f *fixture) identity() map[string]string {
	return map[string]string{
		api.HeaderInternalToken: internalToken,
		api.HeaderSite:          f.site,
		api.HeaderKeyID:         f.keyID,
		api.HeaderScopes:        "leads:write",
		"Content-Type":          "application/json",
	}
}

// reply is a response, read whole.
type reply struct {
	status int
	header http.Header
	body   []byte
}

// post sends body to POST /v1/leads with the fixture's identity, with hdr
// overriding headers (an empty value removes one).
func (f *fixture) post(tb testing.TB, body string, hdr map[string]string) reply {
	tb.Helper()
	h := f.identity()
	for k, v := range hdr {
		h[k] = v
	}
	return send(f.handler, "POST", "/v1/leads", strings.NewReader(body), h)
}

func send(handler http.Handler, method, path string, body io.Reader, hdr map[string]string) reply {
	req := httptest.NewRequest(method, path, body)
	for k, v := range hdr {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	rec := httptest.NewRecorder()
	handler.ServeHTTP(rec, req)
	resp := rec.Result()
	b, _ := io.ReadAll(resp.Body)
	return reply{status: resp.StatusCode, header: resp.Header, body: b}
}

// created is the body of a 201.
type created struct {
	LeadID     int64   `json:"lead_id"`
	Status     string  `json:"status"`
	Duplicate  bool    `json:"duplicate"`
	AssignedTo *string `json:"assigned_to"`
}

// mustCreate posts body and fails unless the answer is a 201.
func (f *fixture) mustCreate(tb testing.TB, body string, hdr map[string]string) created {
	tb.Helper()
	r := f.post(tb, body, hdr)
	if r.status != http.StatusCreated {
		tb.Fatalf("POST %s: %d %s", body, r.status, r.body)
	}
	return mustCreated(tb, r.body)
}

// mustCreated decodes a 201 body, checking that it has exactly the four
// fields of the contract.
func mustCreated(tb testing.TB, body []byte) created {
	tb.Helper()
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil {
		tb.Fatalf("201 body %q: %v", body, err)
	}
	if len(fields) != 4 {
		tb.Errorf("201 body has fields %v, want exactly lead_id, status, duplicate, assigned_to", fields)
	}
	for _, k := range []string{"lead_id", "status", "duplicate", "assigned_to"} {
		if _, ok := fields[k]; !ok {
			tb.Errorf("201 body %s lacks %s", body, k)
		}
	}
	var c created
	if err := json.Unmarshal(body, &c); err != nil {
		tb.Fatal(err)
	}
	return c
}

// envelope is an error response.
type envelope struct {
	Error struct {
		Code      string            `json:"code"`
		Message   string            `json:"message"`
		Details   map[string]string `json:"details"`
		RequestID string            `json:"request_id"`
	} `json:"error"`
}

func mustEnvelope(tb testing.TB, r reply) envelope {
	tb.Helper()
	var e envelope
	if err := json.Unmarshal(r.body, &e); err != nil || e.Error.Code == "" {
		tb.Fatalf("%d %q is not an error envelope (%v)", r.status, r.body, err)
	}
	return e
}

// scalar runs a query returning one value.
func (f *fixture) scalar(tb testing.TB, dst any, q string, args ...any) {
	tb.Helper()
	if err := f.db.Pool.QueryRow(context.Background(), q, args...).Scan(dst); err != nil {
		tb.Fatalf("%s: %v", q, err)
	}
}

func (f *fixture) count(tb testing.TB, q string, args ...any) int {
	tb.Helper()
	var n int
	f.scalar(tb, &n, q, args...)
	return n
}

func (f *fixture) mustExec(tb testing.TB, q string, args ...any) {
	tb.Helper()
	if _, err := f.db.Pool.Exec(context.Background(), q, args...); err != nil {
		tb.Fatalf("%s: %v", q, err)
	}
}

// mustAgent adds an agent to the site and returns its id.
func (f *fixture) mustAgent(tb testing.TB, name, email string) int64 {
	tb.Helper()
	var id int64
	f.scalar(tb, &id, `INSERT INTO agents (site_id, name, email) VALUES ($1, $2, $3) RETURNING id`, f.site, name, email)
	return id
}

const feedHead = `<?xml version="1.0" encoding="UTF-8"?><propertyList date="2024-01-01-10:00:00" username="u" password="p">`

// listingFeed has, for agency AG: L1 (two agents, Al first), L2 (no agent),
// GONE (deleted after import); and uniqueID SHARED under both AG and BG.
const listingFeed = feedHead + `
<residential modTime="2024-02-01-10:00:00" status="current"><agentID>AG</agentID><uniqueID>L1</uniqueID>
	<listingAgent id="2"><name>Bea Second</name><email>bea@agency.example</email></listingAgent>
	<listingAgent id="1"><name>Al First</name><email>Al@Agency.example</email></listingAgent>
</residential>
<residential modTime="2024-02-01-10:00:00" status="current"><agentID>AG</agentID><uniqueID>L2</uniqueID></residential>
<residential modTime="2024-02-01-10:00:00" status="current"><agentID>AG</agentID><uniqueID>GONE</uniqueID></residential>
<residential modTime="2024-02-01-10:00:00" status="current"><agentID>AG</agentID><uniqueID>SHARED</uniqueID></residential>
<rental modTime="2024-02-01-10:00:00" status="current"><agentID>BG</agentID><uniqueID>SHARED</uniqueID></rental>
</propertyList>`

const deleteGone = feedHead + `<residential modTime="2024-02-02-10:00:00" status="deleted"><agentID>AG</agentID><uniqueID>GONE</uniqueID></residential></propertyList>`

// mustListings imports listingFeed and deletes GONE; it returns the refs by
// "AGENCY:UNIQUE".
func (f *fixture) mustListings(tb testing.TB) map[string]int64 {
	tb.Helper()
	im := ingest.New(f.db, slog.New(slog.DiscardHandler))
	for _, feed := range []string{listingFeed, deleteGone} {
		if _, err := im.Import(context.Background(), f.site, strings.NewReader(feed), ingest.Options{}); err != nil {
			tb.Fatalf("import: %v", err)
		}
	}
	rows, err := f.db.Pool.Query(context.Background(), `SELECT agency_id || ':' || unique_id, ref FROM listings WHERE site_id = $1`, f.site)
	if err != nil {
		tb.Fatal(err)
	}
	defer rows.Close()
	refs := map[string]int64{}
	for rows.Next() {
		var k string
		var ref int64
		if err := rows.Scan(&k, &ref); err != nil {
			tb.Fatal(err)
		}
		refs[k] = ref
	}
	if len(refs) != 5 {
		tb.Fatalf("imported listings %v", refs)
	}
	return refs
}

// waitFor polls cond for up to 10 seconds.
func waitFor(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return
		}
	}
	tb.Fatalf("timed out waiting for %s", what)
}
