package e2e

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	json "github.com/goccy/go-json"

	"github.com/listgate/listgate/origin/openapi/contract"
	"github.com/listgate/listgate/origin/store/storetest"
	"github.com/listgate/listgate/pkg/devdb/devdbtest"
	"github.com/listgate/listgate/pkg/devproc"
	"github.com/listgate/listgate/pkg/devproc/devproctest"
)

// bins are the origin and edge binaries TestMain builds.
var bins *devproctest.Binaries

// TestMain builds the origin and edge, runs the tests, and stops the
// throwaway Postgres they used.
func TestMain(m *testing.M) {
	var err error
	if bins, err = devproctest.BuildBinaries(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := devdbtest.RunTests(m)
	bins.Remove()
	os.Exit(code)
}

const token = "e2e-internal-token-0123456789abcdef0123456789"

// proc is a running edge or origin process, stopped when the test ends.
type proc struct {
	*devproc.Process
	name string
	addr string
}

// start runs bin with env and waits for it to listen; the process is
// stopped when the test ends, and its log is printed if the test failed.
func start(tb testing.TB, name, bin string, env []string, args ...string) *proc {
	tb.Helper()
	p := devproctest.Start(tb, name, bin, devproc.Options{Env: env, Args: args})
	return &proc{Process: p, name: name, addr: p.Addr}
}

func (p *proc) stop()       { p.Stop() }
func (p *proc) kill()       { p.Kill() }
func (p *proc) url() string { return p.URL() }

// metricsURL is where p serves /metrics: an edge's admin listener, or the
// origin's own port (which answers it to loopback).
func (p *proc) metricsURL() string {
	if a := p.AdminURL(); a != "" {
		return a + "/metrics"
	}
	return p.URL() + "/metrics"
}

// system is an origin with its database and any number of edges.
type system struct {
	tb     testing.TB
	dbURL  string
	config string // the origin's YAML config file, if any
	public string // the origin's LISTGATE_PUBLIC_URL, if set
	origin *proc
}

func newSystem(tb testing.TB, originYAML ...string) *system {
	tb.Helper()
	s := &system{tb: tb, dbURL: storetest.URL(tb)}
	if len(originYAML) > 0 {
		s.config = filepath.Join(tb.TempDir(), "origin.yaml")
		if err := os.WriteFile(s.config, []byte(strings.Join(originYAML, "\n")+"\n"), 0o600); err != nil {
			tb.Fatal(err)
		}
	}
	s.origin = s.startOrigin()
	return s
}

func (s *system) startOrigin() *proc {
	s.tb.Helper()
	return s.startOriginAt("127.0.0.1:0")
}

// startOriginAt starts one more origin on the system's database, on addr.
func (s *system) startOriginAt(addr string) *proc {
	s.tb.Helper()
	args := []string{"serve"}
	if s.config != "" {
		args = append(args, "--config", s.config)
	}
	env := []string{"LISTGATE_DATABASE_URL=" + s.dbURL,
		"LISTGATE_INTERNAL_TOKEN=" + token, "LISTGATE_ORIGIN_ADDR=" + addr}
	if s.public != "" {
		env = append(env, "LISTGATE_PUBLIC_URL="+s.public)
	}
	return start(s.tb, "origin", bins.Origin, env, args...)
}

// edgeOpts are the environment of one edge.
type edgeOpts struct {
	redisURL string
	edges    int
	yaml     string // the edge's config file, if any
	addr     string // the listen address; default 127.0.0.1:0
	origins  string // LISTGATE_ORIGIN_URL; default the system's origin
}

func (s *system) startEdge(o edgeOpts) *proc {
	s.tb.Helper()
	env, args := s.edgeCommand(o)
	p := start(s.tb, "edge", bins.Edge, env, args...)
	awaitReady(s.tb, p)
	return p
}

// edgeCommand is the environment and arguments of an edge with o.
func (s *system) edgeCommand(o edgeOpts) (env, args []string) {
	s.tb.Helper()
	addr := o.addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	origins := o.origins
	if origins == "" {
		origins = s.origin.url()
	}
	env = []string{"LISTGATE_INTERNAL_TOKEN=" + token, "LISTGATE_EDGE_ADDR=" + addr,
		"LISTGATE_EDGE_ADMIN_ADDR=127.0.0.1:0", "LISTGATE_ORIGIN_URL=" + origins}
	if o.redisURL != "" {
		env = append(env, "LISTGATE_REDIS_URL="+o.redisURL)
	}
	if o.edges > 0 {
		env = append(env, fmt.Sprintf("LISTGATE_EXPECTED_EDGES=%d", o.edges))
	}
	if o.yaml != "" {
		path := filepath.Join(s.tb.TempDir(), "edge.yaml")
		if err := os.WriteFile(path, []byte(o.yaml), 0o600); err != nil {
			s.tb.Fatal(err)
		}
		args = append(args, "--config", path)
	}
	return env, args
}

// awaitReady waits, as a load balancer would, until the edge's /readyz
// says it follows the origin's event stream: its first connection purges
// the caches, and a test's burst should not race that.
func awaitReady(tb testing.TB, p *proc) {
	tb.Helper()
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		resp, err := client.Get(p.url() + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		if time.Now().After(deadline) {
			tb.Fatalf("edge not ready after 15 s: %v", err)
		}
	}
}

// newPublicSystem is newSystem with an edge at a fixed loopback address
// that the origin knows as its public URL (where pairing's
// verification_uri points), and that edge started.
//
// The address is free when chosen, but another socket may take it before
// the edge binds it (the origin's connections to Postgres draw their local
// ports from the same range): then both start again on another address,
// as pkg/devdb does for its servers.
func newPublicSystem(tb testing.TB) (*system, *proc) {
	tb.Helper()
	dbURL := storetest.URL(tb)
	var err error
	for range 5 {
		l, lerr := net.Listen("tcp", "127.0.0.1:0")
		if lerr != nil {
			tb.Fatal(lerr)
		}
		addr := l.Addr().String()
		l.Close()
		s := &system{tb: tb, dbURL: dbURL, public: "http://" + addr}
		s.origin = s.startOrigin()
		env, args := s.edgeCommand(edgeOpts{addr: addr})
		var p *devproc.Process
		if p, err = devproc.Start(bins.Edge, devproc.Options{Env: env, Args: args}); err == nil {
			tb.Cleanup(func() {
				p.Stop()
				if tb.Failed() {
					tb.Logf("--- edge log ---\n%s", p.Logs())
				}
			})
			edge := &proc{Process: p, name: "edge", addr: p.Addr}
			awaitReady(tb, edge)
			return s, edge
		}
		s.origin.stop()
		if !strings.Contains(err.Error(), "address already in use") {
			break
		}
	}
	tb.Fatalf("edge: %v", err)
	return nil, nil
}

// cliStdin runs the origin's admin CLI like cli, with stdin.
func (s *system) cliStdin(dst any, stdin string, args ...string) {
	s.tb.Helper()
	cmd := exec.Command(bins.Origin, args...)
	cmd.Env = append(os.Environ(), "LISTGATE_DATABASE_URL="+s.dbURL)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		s.tb.Fatalf("origin %s: %v\n%s", strings.Join(args, " "), err, stderr)
	}
	if dst != nil {
		if err := json.Unmarshal(out, dst); err != nil {
			s.tb.Fatalf("origin %s: %q: %v", strings.Join(args, " "), out, err)
		}
	}
}

// cli runs the origin's admin CLI on the system's database and decodes its
// --json output into dst (when not nil).
func (s *system) cli(dst any, args ...string) {
	s.tb.Helper()
	s.cliStdin(dst, "", args...)
}

func (s *system) site(plan string) string {
	s.tb.Helper()
	var site struct{ ID string }
	s.cli(&site, "sites", "create", "--name", "E2E "+plan, "--plan", plan, "--json")
	return site.ID
}

type key struct{ ID, Key string }

func (s *system) key(site, scopes string) key {
	s.tb.Helper()
	var k key
	s.cli(&k, "keys", "create", "--site", site, "--name", "e2e", "--scopes", scopes, "--json")
	return k
}

// client sends requests with a short timeout and no keep-alive surprises.
var client = &http.Client{Timeout: 10 * time.Second}

type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) code() string {
	var e struct {
		Error struct{ Code, Message string }
	}
	json.Unmarshal(r.body, &e)
	return e.Error.Code
}

func (r response) message() string {
	var e struct {
		Error struct{ Code, Message string }
	}
	json.Unmarshal(r.body, &e)
	return e.Error.Message
}

// do sends one request; hdr values may be empty to skip a header.
func do(tb testing.TB, method, url string, body []byte, hdr map[string]string) response {
	tb.Helper()
	req, err := http.NewRequestWithContext(context.Background(), method, url, bytes.NewReader(body))
	if err != nil {
		tb.Fatal(err)
	}
	for k, v := range hdr {
		if v != "" {
			req.Header.Set(k, v)
		}
	}
	resp, err := client.Do(req)
	if err != nil {
		tb.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	// Every answer of the system, the edge's own included (rate limits,
	// refused keys, limits on sizes), is checked against the document.
	contract.CheckExchange(tb, req, body, resp.StatusCode, resp.Header, b)
	return response{status: resp.StatusCode, header: resp.Header, body: b}
}

func bearer(k string) map[string]string { return map[string]string{"Authorization": "Bearer " + k} }

// dialWrite opens a connection to addr with a deadline of d for the whole
// exchange, writes requests to it exactly as written (no client
// normalises them) and returns it with a reader of it: the caller reads
// the answers and closes it.
func dialWrite(tb testing.TB, addr, requests string, d time.Duration) (net.Conn, *bufio.Reader) {
	tb.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		tb.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(d))
	if _, err := io.WriteString(c, requests); err != nil {
		c.Close()
		tb.Fatal(err)
	}
	return c, bufio.NewReader(c)
}
