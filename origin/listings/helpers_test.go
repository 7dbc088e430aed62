package listings

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	json "github.com/goccy/go-json"
	"github.com/jackc/pgx/v5"

	"github.com/listgate/listgate/origin/api"
	"github.com/listgate/listgate/origin/ingest"
	"github.com/listgate/listgate/origin/openapi/contract"
	"github.com/listgate/listgate/origin/store"
	"github.com/listgate/listgate/origin/store/storetest"
	"github.com/listgate/listgate/pkg/devdb/devdbtest"
	"github.com/listgate/listgate/pkg/model"
	"github.com/listgate/listgate/pkg/reaxml/reaxmlgen"
	"github.com/listgate/listgate/pkg/syncbuf"
)

func TestMain(m *testing.M) { os.Exit(devdbtest.RunTests(m)) }

const token = "0123456789abcdef0123456789abcdef-test"

// testEnv is a read API on a database of its own with one site.
type testEnv struct {
	db *store.DB
	h  http.Handler // server behind the contract check, reporting to the env's test
	// server is the API's handler alone, for a fuzz target to put behind a
	// contract check of each input's own test (forInput).
	server http.Handler
	site   string
}

// forInput is e with its server behind a contract check that reports to
// t: a fuzz target's input, whose failures cannot go to the fuzz test.
func (e *testEnv) forInput(t *testing.T) *testEnv {
	in := *e
	in.h = contract.Wrap(t, e.server)
	return &in
}

// bare is e with its server alone, for requests the document cannot
// describe: values the server takes in any case or with spaces around
// them (status=CURRENT), which the document's enums list in one.
func (e *testEnv) bare() *testEnv {
	in := *e
	in.h = e.server
	return &in
}

func newEnv(tb testing.TB) *testEnv {
	tb.Helper()
	db := storetest.NewDB(tb)
	return newEnvOn(tb, db)
}

func newEnvOn(tb testing.TB, db *store.DB) *testEnv {
	tb.Helper()
	return newEnvWith(tb, db, Config{})
}

// newEnvWith is newEnvOn with the service's configuration (its DB is db).
func newEnvWith(tb testing.TB, db *store.DB, cfg Config) *testEnv {
	tb.Helper()
	cfg.DB = db
	s, err := db.CreateSite(context.Background(), "Read Realty", model.Professional, "")
	if err != nil {
		tb.Fatal(err)
	}
	var logs syncbuf.Buffer
	tb.Cleanup(func() {
		if tb.Failed() {
			tb.Logf("server log:\n%s", logs.String())
		}
	})
	srv := api.New(api.Config{Ready: db.Ping, Unavailable: store.IsUnavailable, Metrics: db.WritePoolMetrics,
		InternalToken: token, Log: slog.New(slog.NewJSONHandler(&logs, nil)),
		Mounts: []api.Mounter{New(cfg)}})
	return &testEnv{db: db, h: contract.Wrap(tb, srv.Handler()), server: srv.Handler(), site: s.ID}
}

// mustImportGenerated imports a feed of n listings from the feed
// generator with seed.
func (e *testEnv) mustImportGenerated(tb testing.TB, seed uint64, n int) {
	tb.Helper()
	var feed bytes.Buffer
	if err := reaxmlgen.Generate(&feed, reaxmlgen.Options{Seed: seed, Listings: n}); err != nil {
		tb.Fatal(err)
	}
	e.mustImport(tb, feed.String())
}

// siteWords are the words of at least minLen characters in the site's
// headlines, descriptions and addresses, the most common first: at most
// most of them, and at least least.
func (e *testEnv) siteWords(tb testing.TB, minLen, least, most int) []string {
	tb.Helper()
	rows, _ := e.db.Pool.Query(context.Background(), `SELECT word FROM ts_stat(format('SELECT to_tsvector(''simple'',
		coalesce(headline, '''') || '' '' || coalesce(description, '''') || '' '' || coalesce(search_address, ''''))
		FROM listings WHERE site_id = %L', $1::text)) WHERE length(word) >= $2 ORDER BY ndoc DESC, word LIMIT $3`, e.site, minLen, most)
	words, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil || len(words) < least {
		tb.Fatalf("words: %d, %v", len(words), err)
	}
	return words
}

// ranksApart counts the listings a search's conditions (b) match, and of
// them those its rank query ranks otherwise than its whole query does
// (listingWhere), with the size of each query.
func (e *testEnv) ranksApart(b *sqlBuilder, tsq, rankq string) (matches, differ, whole, ranked int, err error) {
	err = e.db.Pool.QueryRow(context.Background(), `SELECT count(*),
			count(*) FILTER (WHERE ts_rank_cd(l.search, `+tsq+`) <> ts_rank_cd(l.search, `+rankq+`)),
			numnode(`+tsq+`), numnode(`+rankq+`) FROM listings l WHERE `+b.where(), b.args...).Scan(&matches, &differ, &whole, &ranked)
	return matches, differ, whole, ranked, err
}

func (e *testEnv) mustImport(tb testing.TB, feed string) {
	tb.Helper()
	e.mustImportSkipping(tb, feed, 0)
}

// mustImportSkipping imports feed, which must have no problem but skipped
// media: mediaSkips listings stored without some of their media.
func (e *testEnv) mustImportSkipping(tb testing.TB, feed string, mediaSkips int) {
	tb.Helper()
	res, err := ingest.New(e.db, slog.New(slog.DiscardHandler)).Import(context.Background(), e.site, strings.NewReader(feed), ingest.Options{})
	skips := 0
	for _, le := range res.Errors {
		if strings.HasPrefix(le.Message, "listing imported without ") {
			skips++
		}
	}
	if err != nil || res.Counts.Errors != 0 || skips != mediaSkips || len(res.Errors) != mediaSkips {
		tb.Fatalf("import: %v %+v", err, res)
	}
}

func (e *testEnv) mustImportFile(tb testing.TB, name string) {
	tb.Helper()
	// The one real-world sample that names images by file (shipped beside
	// the feed, not hosted here) has two listings stored without them.
	skips := map[string]int{"i4ucode_AABBCC_2015-02-15_11-03-51.xml": 2}[name]
	b, err := os.ReadFile("../../../shared/testdata/reaxml/" + name)
	if err != nil {
		tb.Fatal(err)
	}
	e.mustImportSkipping(tb, string(b), skips)
}

// req is one request as the edge would forward it.
type req struct {
	path   string
	site   string // default: the env's site
	scopes string // default: listings:read,agents:read,stats:read
	anon   bool   // no identity at all
	header map[string]string
}

func (e *testEnv) do(tb testing.TB, r req) (*http.Response, []byte) {
	tb.Helper()
	hr := httptest.NewRequest("GET", r.path, nil)
	if !r.anon {
		site, scopes := r.site, r.scopes
		if site == "" {
			site = e.site
		}
		if scopes == "" {
			scopes = "listings:read,agents:read,stats:read"
		}
		hr.Header.Set(api.HeaderInternalToken, token)
		hr.Header.Set(api.HeaderSite, site)
		hr.Header.Set(api.HeaderKeyID, "key-1")
		hr.Header.Set(api.HeaderScopes, scopes)
	}
	for k, v := range r.header {
		hr.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	e.h.ServeHTTP(rec, hr)
	resp := rec.Result()
	body, _ := io.ReadAll(resp.Body)
	return resp, body
}

// get requests path on the env's site and decodes a 200 into dst.
func (e *testEnv) get(tb testing.TB, path string, dst any) {
	tb.Helper()
	resp, body := e.do(tb, req{path: strings.ReplaceAll(path, "{site}", e.site)})
	if resp.StatusCode != 200 {
		tb.Fatalf("GET %s = %d %s", path, resp.StatusCode, body)
	}
	if err := json.Unmarshal(body, dst); err != nil {
		tb.Fatalf("GET %s: %v\n%s", path, err, body)
	}
}

type errorBody struct {
	Error struct {
		Code    string
		Message string
		Details map[string]string
	}
}

func (e *testEnv) getError(tb testing.TB, r req) (int, errorBody) {
	tb.Helper()
	r.path = strings.ReplaceAll(r.path, "{site}", e.site)
	resp, body := e.do(tb, r)
	var eb errorBody
	if err := json.Unmarshal(body, &eb); err != nil || eb.Error.Code == "" {
		tb.Fatalf("GET %s = %d, not an error envelope: %s", r.path, resp.StatusCode, body)
	}
	return resp.StatusCode, eb
}

type listingPage struct {
	Data []model.Listing
	Meta model.Meta
}
