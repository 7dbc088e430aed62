package e2e

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	json "github.com/goccy/go-json"
	"github.com/jackc/pgx/v5"

	"github.com/listgate/listgate/pkg/devdb/devdbtest"
	"github.com/listgate/listgate/pkg/devproc"
	"github.com/listgate/listgate/pkg/devproc/devproctest"
	"github.com/listgate/listgate/pkg/model"
)

// internalToken is the token the origin and edge share in this test.
const internalToken = "wp-e2e-internal-token-0123456789abcdef01234"

// listgate is the real origin and edge on a throwaway database with the
// demo site seeded. Its processes stop when the test ends.
type listgate struct {
	dbURL        string
	origin, edge *devproc.Process
	// edgeURL is the edge's address, http://127.0.0.1:PORT, which the
	// origin also knows as its public URL (pairing's base_url).
	edgeURL string
	// siteID and readKey are the demo site's and its read-only key
	// (listings, agents, stats), from `origin seed demo`.
	siteID, readKey string
}

// startListgate migrates a new database with the CLI, seeds the demo site,
// and starts the origin and then the edge on loopback.
func startListgate(t *testing.T) *listgate {
	t.Helper()
	l := &listgate{dbURL: devdbtest.NewDatabase(t, nil)}
	l.cli(t, nil, "migrate")
	var demo struct {
		Site    struct{ ID string }
		ReadKey struct{ Key string } `json:"read_key"`
	}
	l.cli(t, &demo, "seed", "demo", "--json")
	if demo.Site.ID == "" || demo.ReadKey.Key == "" {
		t.Fatalf("seed demo gave no site or key: %+v", demo)
	}
	l.siteID, l.readKey = demo.Site.ID, demo.ReadKey.Key

	// The origin must know the edge's address before the edge starts.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	edgeAddr := ln.Addr().String()
	ln.Close()
	l.edgeURL = "http://" + edgeAddr
	l.origin = devproctest.Start(t, "origin", bins.Origin, devproc.Options{Args: []string{"serve"}, Env: []string{"LISTGATE_DATABASE_URL=" + l.dbURL,
		"LISTGATE_INTERNAL_TOKEN=" + internalToken, "LISTGATE_ORIGIN_ADDR=127.0.0.1:0",
		"LISTGATE_PUBLIC_URL=" + l.edgeURL}})
	l.edge = devproctest.Start(t, "edge", bins.Edge, devproc.Options{Env: []string{"LISTGATE_INTERNAL_TOKEN=" + internalToken,
		"LISTGATE_EDGE_ADDR=" + edgeAddr, "LISTGATE_EDGE_ADMIN_ADDR=127.0.0.1:0", "LISTGATE_ORIGIN_URL=" + l.origin.URL()}})
	return l
}

// cli runs the origin's admin CLI on the test's database and decodes its
// --json output into dst, when dst is not nil.
func (l *listgate) cli(tb testing.TB, dst any, args ...string) {
	tb.Helper()
	l.cliStdin(tb, dst, "", args...)
}

// cliStdin is cli with stdin.
func (l *listgate) cliStdin(tb testing.TB, dst any, stdin string, args ...string) {
	tb.Helper()
	cmd := exec.Command(bins.Origin, args...)
	cmd.Env = append(os.Environ(), "LISTGATE_DATABASE_URL="+l.dbURL)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		tb.Fatalf("origin %s: %v\n%s", strings.Join(args, " "), err, stderr)
	}
	if dst != nil {
		if err := json.Unmarshal(out, dst); err != nil {
			tb.Fatalf("origin %s: %q: %v", strings.Join(args, " "), out, err)
		}
	}
}

// client is the Go side's HTTP client.
var client = &http.Client{Timeout: 10 * time.Second}

// get sends GET path (below /v1/sites/{site}) through the edge with the
// demo read key and returns the response with its body read.
func (l *listgate) get(tb testing.TB, path string, q url.Values) (*http.Response, []byte) {
	tb.Helper()
	return l.getWith(tb, l.readKey, path, q)
}

// pollRead reads the listings with key until done accepts the response,
// failing tb after 10 s: the edges learn of plan changes and revoked keys
// from the origin's event stream.
func (l *listgate) pollRead(tb testing.TB, what, key string, done func(*http.Response) bool) {
	tb.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, body := l.getWith(tb, key, "/listings", url.Values{"per_page": {"1"}})
		if done(resp) {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("waiting for %s: still %d %.200s", what, resp.StatusCode, body)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// getWith is get with another key.
func (l *listgate) getWith(tb testing.TB, key, path string, q url.Values) (*http.Response, []byte) {
	tb.Helper()
	u := l.edgeURL + "/v1/sites/" + l.siteID + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, _ := http.NewRequest("GET", u, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := client.Do(req)
	if err != nil {
		tb.Fatalf("GET %s: %v", u, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatalf("GET %s: %v", u, err)
	}
	return resp, body
}

// listings is GET /listings with q, which must answer 200.
func (l *listgate) listings(tb testing.TB, q url.Values) model.Collection[model.Listing] {
	tb.Helper()
	resp, body := l.get(tb, "/listings", q)
	var c model.Collection[model.Listing]
	if resp.StatusCode != 200 || json.Unmarshal(body, &c) != nil {
		tb.Fatalf("listings %v: %d %.300s", q, resp.StatusCode, body)
	}
	return c
}

// listing is GET /listings/{ref}, which must answer 200.
func (l *listgate) listing(tb testing.TB, ref string) model.Listing {
	tb.Helper()
	resp, body := l.get(tb, "/listings/"+url.PathEscape(ref), nil)
	var li model.Listing
	if resp.StatusCode != 200 || json.Unmarshal(body, &li) != nil {
		tb.Fatalf("listing %s: %d %.300s", ref, resp.StatusCode, body)
	}
	return li
}

// edgeRequests sums the edge's listgate_edge_requests_total counters of every route
// for one status (0: every status, so every API request the edge
// answered), from its /metrics.
func (l *listgate) edgeRequests(tb testing.TB, status int) int {
	tb.Helper()
	resp, err := client.Get(l.edge.AdminURL() + "/metrics")
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	label := `status="` + strconv.Itoa(status) + `"}`
	n := 0
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "listgate_edge_requests_total{") {
			continue
		}
		name, value, ok := strings.Cut(line, " ")
		if ok && (status == 0 || strings.HasSuffix(name, label)) {
			v, _ := strconv.ParseFloat(value, 64)
			n += int(v)
		}
	}
	return n
}

// query runs sql on the test's database and scans its one row into dst.
func (l *listgate) query(tb testing.TB, sql string, args []any, dst ...any) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, l.dbURL)
	if err != nil {
		tb.Fatal(err)
	}
	defer conn.Close(ctx)
	if err := conn.QueryRow(ctx, sql, args...).Scan(dst...); err != nil {
		tb.Fatalf("%s: %v", sql, err)
	}
}
