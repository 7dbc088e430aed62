package e2e

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	json "github.com/goccy/go-json"
)

// The edge's read paths as the HTTP clients agencies' sites really use
// read them: curl (plain and --compressed), Python's http.client (one
// kept-alive connection) and urllib.request, Node's fetch (undici) and
// http.get (llhttp, which refuses malformed headers) on a keep-alive
// agent, and PHP with and without its curl extension (WordPress). Each
// client sends the same sequence — large cached pages (whose own header
// lines are spliced into fasthttp's headers and sent with writev) and a
// small one, with an allowed Origin, another Origin and none, HEAD, a 304,
// gzip, an unknown key, another site's path, a rate-limited site's 429 and
// CORS preflights — on one connection where the client keeps connections
// alive, and every answer is held to what it must be: the status, each
// header once with its exact value, Content-Length the body's, the body
// byte for byte, and the connection still in use for the next request.
// Pipelined requests and hostile header values are sent on raw
// connections and the answers read by Go's and Python's parsers.

// clientStep is one request of the sequence, as the client scripts read it.
type clientStep struct {
	Name    string      `json:"name"`
	Method  string      `json:"method"`
	Path    string      `json:"path"`
	Headers [][2]string `json:"headers"`
	want    stepWant
}

// stepWant is what the answer to a step must be.
type stepWant struct {
	status int
	page   string // "large", "small": the body is that page (as asked: plain or gzip)
	code   string // the error envelope's code, for an error
	gzip   bool   // the step asks for gzip
	origin string // the Access-Control-Allow-Origin wanted; "" none
	limit  int    // X-RateLimit-Limit wanted; 0 none
	cached bool   // a cached answer: ETag, Cache-Control, Vary, X-Cache HIT
	head   bool   // HEAD: no body, Content-Length the GET's
	// preflight: a preflight's answer.
	preflight bool
	// requestID is the X-Request-Id the step sends, which comes back.
	requestID string
}

// clientAnswer is one answer as a client read it.
type clientAnswer struct {
	Name    string      `json:"name"`
	Status  int         `json:"status"`
	Lines   []string    `json:"lines"`   // the header lines as received, when the client gives them
	Headers [][2]string `json:"headers"` // else the headers as (name, value) pairs
	Body    string      `json:"body"`    // base64
	Reused  *bool       `json:"reused"`  // whether the request went on an earlier request's connection
	Error   string      `json:"error"`
	// Decoded: the client decodes Content-Encoding itself (fetch, curl
	// --compressed). (fetch also joins a repeated header's values into
	// one: a repeat shows as a value that is not the one wanted.)
	Decoded bool
	body    []byte
}

// writeBuffer is the edge's write buffer (write_buffer_bytes, its default).
const writeBuffer = 32 << 10

const (
	allowedCORS = "https://agency.example"
	otherCORS   = "https://elsewhere.example"
	cacheCtl    = "private, max-age=600, stale-while-revalidate=60"
	corsExpose  = "ETag, X-Request-Id, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, RateLimit-Policy, RateLimit, Retry-After, X-Cache"
)

// realWorld is the system the clients talk to and the answers they must
// get, read first by Go's client.
type realWorld struct {
	edge               *proc
	site, other, small string // the professional site, another site, the starter site
	key, smallKey      key
	otherKey           key // the other site's
	largePath          string
	smallPath          string
	etag               map[string]string            // page → ETag
	ref                map[string]map[string][]byte // page → Content-Encoding ("", gzip, br) → body
}

func newRealWorld(t *testing.T) *realWorld {
	t.Helper()
	s := newSystem(t, "cache_control_listings: "+cacheCtl)
	w := &realWorld{}
	w.site, w.other, w.small = s.site("professional"), s.site("enterprise"), s.site("starter")
	w.key, w.smallKey, w.otherKey = s.key(w.site, "listings:read"), s.key(w.small, "listings:read"), s.key(w.other, "listings:read")
	s.cli(nil, "sites", "set-cors", w.site, allowedCORS)
	s.importFeed(w.site, largeFeed(4, 6000))
	s.importFeed(w.other, largeFeed(2, 2600))
	// Started after the imports: an import's event reaching the edge after
	// a page was cached would drop it, and an expected hit be a miss.
	w.edge = s.startEdge(edgeOpts{yaml: fmt.Sprintf("write_buffer_bytes: %d\n", writeBuffer)})
	w.largePath = "/v1/sites/" + w.site + "/listings?per_page=4"
	w.smallPath = "/v1/sites/" + w.site + "/listings?per_page=4&page=50"
	w.etag, w.ref = map[string]string{}, map[string]map[string][]byte{}
	for page, path := range map[string]string{"large": w.largePath, "small": w.smallPath} {
		w.ref[page] = map[string][]byte{}
		for _, enc := range []string{"", "gzip", "br"} {
			r := rawGet(t, w.edge.addr, path, w.key.Key, enc)
			w.ref[page][enc] = r.body
			if r.status != 200 || (enc != "" && page == "large" && r.header.Get("Content-Encoding") != enc) {
				t.Fatalf("%s page, %q: %d %q", page, enc, r.status, r.header.Get("Content-Encoding"))
			}
			w.etag[page] = r.header.Get("ETag")
		}
	}
	if n := len(w.ref["large"][""]); n < 16<<10 || len(w.ref["large"]["gzip"]) < 8<<10 || len(w.ref["large"]["br"]) < 8<<10 {
		t.Fatalf("the large page (%d bytes, gzip %d, br %d) is not large enough to be spliced in each form", n, len(w.ref["large"]["gzip"]), len(w.ref["large"]["br"]))
	}
	if n := len(w.ref["small"][""]); n >= 4<<10 || n == 0 {
		t.Fatalf("the small page is %d bytes", n)
	}
	return w
}

// rawGet is a GET read by Go's client with Accept-Encoding as given
// (identity when empty) and the body left as sent.
func rawGet(tb testing.TB, addr, path, key, enc string) response {
	tb.Helper()
	if enc == "" {
		enc = "identity"
	}
	req, _ := http.NewRequest("GET", "http://"+addr+path, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Accept-Encoding", enc)
	resp, err := rawClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return response{status: resp.StatusCode, header: resp.Header, body: b}
}

var rawClient = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableCompression: true}}

// steps is the sequence each client sends; tag tells the clients' request
// ids apart.
func (w *realWorld) steps(tb testing.TB, tag string) []clientStep {
	auth := func(k string) [2]string { return [2]string{"Authorization", "Bearer " + k} }
	identity := [2]string{"Accept-Encoding", "identity"}
	origin := func(o string) [2]string { return [2]string{"Origin", o} }
	large := stepWant{status: 200, page: "large", limit: 600, cached: true}
	with := func(sw stepWant, f func(*stepWant)) stepWant { f(&sw); return sw }
	allowed := func(sw *stepWant) { sw.origin = allowedCORS }
	id := "rc-" + tag + "-1"
	return []clientStep{
		{"large", "GET", w.largePath, [][2]string{auth(w.key.Key), identity, {"X-Request-Id", id}}, with(large, func(sw *stepWant) { sw.requestID = id })},
		{"large, allowed Origin", "GET", w.largePath, [][2]string{auth(w.key.Key), identity, origin(allowedCORS)}, with(large, allowed)},
		{"large, other Origin", "GET", w.largePath, [][2]string{auth(w.key.Key), identity, origin(otherCORS)}, large},
		{"small, allowed Origin", "GET", w.smallPath, [][2]string{auth(w.key.Key), identity, origin(allowedCORS)}, with(large, func(sw *stepWant) { sw.page, sw.origin = "small", allowedCORS })},
		{"HEAD", "HEAD", w.largePath, [][2]string{auth(w.key.Key), identity, origin(allowedCORS)}, with(large, func(sw *stepWant) { sw.head, sw.origin = true, allowedCORS })},
		{"If-None-Match", "GET", w.largePath, [][2]string{auth(w.key.Key), identity, origin(allowedCORS), {"If-None-Match", w.etag["large"]}},
			with(large, func(sw *stepWant) { sw.status, sw.origin = 304, allowedCORS })},
		{"gzip", "GET", w.largePath, [][2]string{auth(w.key.Key), {"Accept-Encoding", "gzip"}, origin(allowedCORS)}, with(large, func(sw *stepWant) { sw.gzip, sw.origin = true, allowedCORS })},
		{"unknown key", "GET", w.largePath, [][2]string{auth(validUnknown(tb)), identity, origin(allowedCORS)}, stepWant{status: 401, code: "UNAUTHORIZED"}},
		{"other site", "GET", "/v1/sites/" + w.other + "/listings", [][2]string{auth(w.key.Key), identity, origin(allowedCORS)},
			stepWant{status: 403, code: "FORBIDDEN", origin: allowedCORS}},
		{"rate-limited site", "GET", "/v1/sites/" + w.small + "/listings", [][2]string{auth(w.smallKey.Key), identity}, stepWant{status: 429, code: "RATE_LIMIT_EXCEEDED", limit: 60}},
		{"preflight", "OPTIONS", w.largePath, [][2]string{origin(allowedCORS), {"Access-Control-Request-Method", "GET"}, {"Access-Control-Request-Headers", "authorization"}},
			stepWant{status: 204, preflight: true, origin: allowedCORS}},
		{"preflight, other Origin", "OPTIONS", w.largePath, [][2]string{origin(otherCORS), {"Access-Control-Request-Method", "GET"}}, stepWant{status: 403, code: "FORBIDDEN"}},
		{"large again", "GET", w.largePath, [][2]string{auth(w.key.Key), identity, origin(allowedCORS)}, with(large, allowed)},
	}
}

// exhaust spends the starter site's minute, so its next request is a 429,
// in a window with at least need left.
func (w *realWorld) exhaust(tb testing.TB, need time.Duration) {
	tb.Helper()
	awaitFreshWindow(tb, need)
	for i := 0; i <= 60; i++ {
		if r := do(tb, "GET", w.edge.url()+"/v1/sites/"+w.small+"/listings", nil, bearer(w.smallKey.Key)); r.status == 429 {
			return
		} else if r.status != 200 {
			tb.Fatalf("starter site: %d %s", r.status, r.body)
		}
	}
	tb.Fatal("the starter site was never limited")
}

// headerName is a header field's name (RFC 9110 token).
var headerName = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")

// parseLines reads header lines as the edge must write them: "Name: value",
// one space, the value without CR, LF, NUL or space at either end. ending
// is the line ending each must carry ("" when the client stripped it).
func parseLines(lines []string, ending string) (status int, hdr [][2]string, err error) {
	if len(lines) == 0 {
		return 0, nil, fmt.Errorf("no status line")
	}
	var proto string
	if n, _ := fmt.Sscanf(lines[0], "%s %d", &proto, &status); n != 2 || proto != "HTTP/1.1" {
		return 0, nil, fmt.Errorf("status line %q", lines[0])
	}
	for i, l := range lines {
		if !strings.HasSuffix(l, ending) {
			return 0, nil, fmt.Errorf("line %q does not end in %q", l, ending)
		}
		l = strings.TrimSuffix(l, ending)
		if i == 0 || l == "" && i == len(lines)-1 {
			continue
		}
		name, value, ok := strings.Cut(l, ": ")
		if !ok || !headerName.MatchString(name) || strings.ContainsAny(value, "\r\n\x00") || strings.TrimSpace(value) != value {
			return 0, nil, fmt.Errorf("malformed header line %q", l)
		}
		hdr = append(hdr, [2]string{name, value})
	}
	return status, hdr, nil
}

// check holds one client's answer to what the step wants; w's references
// are the pages' bytes.
func (w *realWorld) check(t *testing.T, client string, s clientStep, a clientAnswer) {
	t.Helper()
	fail := func(format string, args ...any) {
		t.Helper()
		t.Errorf("%s, %s: "+format, append([]any{client, s.Name}, args...)...)
	}
	if a.Error != "" {
		fail("the client failed: %s", a.Error)
		return
	}
	hdr := a.Headers
	if a.Lines != nil {
		ending := "\r\n"
		if client == "php-streams" {
			ending = "" // $http_response_header strips the line ends
		}
		var err error
		var status int
		if status, hdr, err = parseLines(a.Lines, ending); err != nil {
			fail("%v", err)
			return
		}
		if a.Status == 0 {
			a.Status = status
		}
	}
	if a.Status != s.want.status {
		fail("status %d, want %d (%q)", a.Status, s.want.status, a.body)
		return
	}
	got := map[string][]string{}
	for _, h := range hdr {
		k := http.CanonicalHeaderKey(h[0])
		got[k] = append(got[k], h[1])
	}
	for k, v := range got {
		if len(v) > 1 {
			fail("%s %d times: %q", k, len(v), v)
		}
	}
	one := func(name string) string {
		if v := got[http.CanonicalHeaderKey(name)]; len(v) > 0 {
			return v[0]
		}
		return ""
	}
	has := func(name string) bool { return len(got[http.CanonicalHeaderKey(name)]) > 0 }
	exact := func(name, want string) {
		t.Helper()
		if v := got[http.CanonicalHeaderKey(name)]; want == "" && len(v) > 0 || want != "" && (len(v) != 1 || v[0] != want) {
			fail("%s %q, want %q", name, v, want)
		}
	}
	want := s.want

	// The body, and Content-Length its length as sent.
	var body []byte
	enc := "" // the Content-Encoding the answer must have
	if want.page == "large" && want.status == 200 && want.gzip {
		enc = "gzip"
	}
	if want.page == "large" && want.status == 200 && client == "curl --compressed" {
		// curl asks for gzip, and br when it was built with Brotli; the
		// edge prefers br.
		if enc = one("Content-Encoding"); enc != "br" && enc != "gzip" {
			fail("Content-Encoding %q to curl --compressed", enc)
			return
		}
	}
	exact("Content-Encoding", enc)
	switch {
	case want.head || want.status == 304 || want.status == 204:
		if len(a.body) != 0 {
			fail("a body of %d bytes", len(a.body))
		}
	case want.page != "":
		body = w.ref[want.page][enc]
		if a.Decoded {
			body = w.ref[want.page][""]
		}
		if !bytes.Equal(a.body, body) {
			fail("the body (%d bytes) is not the page (%d bytes, %q)", len(a.body), len(body), enc)
		}
		body = w.ref[want.page][enc]
	default:
		var e struct{ Error struct{ Code string } }
		if err := json.Unmarshal(a.body, &e); err != nil || e.Error.Code != want.code {
			fail("body %q, want the error %s", a.body, want.code)
		}
		body = a.body
	}
	switch {
	case want.status == 304 || want.status == 204:
		if v := one("Content-Length"); v != "" && v != "0" {
			fail("Content-Length %q", v)
		}
	case want.head:
		exact("Content-Length", strconv.Itoa(len(w.ref[want.page][enc])))
	case a.Decoded && enc != "":
		exact("Content-Length", strconv.Itoa(len(w.ref[want.page][enc])))
	default:
		exact("Content-Length", strconv.Itoa(len(body)))
	}

	// The headers of a cached answer and of the errors.
	switch {
	case want.cached:
		exact("ETag", w.etag[want.page])
		exact("Cache-Control", cacheCtl)
		exact("Vary", "Accept-Encoding, Origin")
		exact("X-Cache", "HIT")
		if want.status != 304 {
			exact("Content-Type", "application/json; charset=utf-8")
		}
	case want.preflight:
		exact("Vary", "Origin, Access-Control-Request-Method, Access-Control-Request-Headers")
		exact("Cache-Control", "no-store")
		exact("Access-Control-Allow-Methods", "GET, HEAD")
		exact("Access-Control-Allow-Headers", "Authorization, X-API-Key, Content-Type, Idempotency-Key, If-None-Match, X-Request-Id")
		exact("Access-Control-Max-Age", "600")
	default:
		exact("ETag", "")
		exact("X-Cache", "")
		exact("Cache-Control", "no-store")
		exact("Content-Type", "application/json; charset=utf-8")
		if !strings.Contains(one("Vary"), "Origin") {
			fail("Vary %q lacks Origin", one("Vary"))
		}
	}
	if !has("Date") {
		fail("no Date")
	}
	if id := one("X-Request-Id"); id == "" || want.requestID != "" && id != want.requestID {
		fail("X-Request-Id %q, want %q", got["X-Request-Id"], want.requestID)
	}

	// CORS: the origin only when the site allows it.
	exact("Access-Control-Allow-Origin", want.origin)
	if !want.preflight {
		exact("Access-Control-Expose-Headers", map[bool]string{true: corsExpose, false: ""}[want.origin != ""])
	}

	// The rate limit: one decision in both forms, RateLimit's t the
	// seconds to X-RateLimit-Reset from the answer's Date, and a 429's
	// Retry-After that t.
	if want.limit == 0 {
		for _, h := range []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "RateLimit-Policy", "RateLimit", "Retry-After"} {
			exact(h, "")
		}
		return
	}
	exact("X-RateLimit-Limit", strconv.Itoa(want.limit))
	exact("RateLimit-Policy", fmt.Sprintf(`"site";q=%d;w=60`, want.limit))
	rem, err1 := strconv.Atoi(one("X-RateLimit-Remaining"))
	reset, err2 := strconv.ParseInt(one("X-RateLimit-Reset"), 10, 64)
	date, err3 := http.ParseTime(one("Date"))
	if err1 != nil || err2 != nil || err3 != nil || rem < 0 || rem >= want.limit {
		fail("X-RateLimit-Remaining %q, X-RateLimit-Reset %q, Date %q", one("X-RateLimit-Remaining"), one("X-RateLimit-Reset"), one("Date"))
		return
	}
	var r, tsec int64
	if n, _ := fmt.Sscanf(one("RateLimit"), `"site";r=%d;t=%d`, &r, &tsec); n != 2 || fmt.Sprintf(`"site";r=%d;t=%d`, r, tsec) != one("RateLimit") ||
		r != int64(rem) || tsec < 0 || tsec > 60 || tsec < reset-date.Unix()-1 || tsec > reset-date.Unix()+1 {
		fail("RateLimit %q against X-RateLimit-Remaining %d, X-RateLimit-Reset %d, Date %s", one("RateLimit"), rem, reset, date)
	}
	if want.status == 429 {
		if rem != 0 || one("Retry-After") != strconv.FormatInt(tsec, 10) || tsec < 1 {
			fail("a 429 with X-RateLimit-Remaining %d, Retry-After %q, RateLimit %q", rem, one("Retry-After"), one("RateLimit"))
		}
	} else {
		exact("Retry-After", "")
	}
}

// clientDriver runs a plan of steps through one client and returns its
// answers in order.
type clientDriver struct {
	name         string
	bin          string // the binary it needs
	phpExtension string
	// keepAlive: the client sends the whole sequence on one connection
	// (Reused reported).
	keepAlive bool
	run       func(t *testing.T, w *realWorld, bin, plan string, steps []clientStep) []clientAnswer
}

// script runs a client script that reads the plan (PLAN) and prints its
// answers as JSON.
func script(ext, src string) func(t *testing.T, w *realWorld, bin, plan string, steps []clientStep) []clientAnswer {
	return func(t *testing.T, w *realWorld, bin, plan string, steps []clientStep) []clientAnswer {
		t.Helper()
		path := filepath.Join(t.TempDir(), "client."+ext)
		if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, path)
		cmd.Env = append(os.Environ(), "PLAN="+plan, "BASE="+w.edge.url(), "ADDR="+w.edge.addr)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: %v\n%s%s", bin, err, out, stderr.String())
		}
		var answers []clientAnswer
		if err := json.Unmarshal(out, &answers); err != nil {
			t.Fatalf("%s: %v\n%s%s", bin, err, out, stderr.String())
		}
		return answers
	}
}

const pythonHTTPClient = `
import base64, http.client, json, os
plan = json.load(open(os.environ['PLAN']))
host, port = os.environ['ADDR'].rsplit(':', 1)
conn = http.client.HTTPConnection(host, int(port), timeout=10)
out = []
for s in plan:
    try:
        before = conn.sock
        conn.request(s['method'], s['path'], headers=dict(s['headers']))
        reused = before is not None and conn.sock is before
        r = conn.getresponse()
        body = r.read()
        if r.msg.defects:
            raise ValueError('header defects: %r' % (r.msg.defects,))
        out.append({'name': s['name'], 'status': r.status, 'headers': r.getheaders(),
                    'body': base64.b64encode(body).decode(), 'reused': reused})
    except Exception as e:
        out.append({'name': s['name'], 'error': '%s: %s' % (type(e).__name__, e)})
        conn.close()
print(json.dumps(out))
`

const pythonURLLib = `
import base64, json, os, urllib.error, urllib.request
plan = json.load(open(os.environ['PLAN']))
class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *a): return None
opener = urllib.request.build_opener(NoRedirect)
out = []
for s in plan:
    req = urllib.request.Request(os.environ['BASE'] + s['path'], headers=dict(s['headers']), method=s['method'])
    try:
        try:
            r = opener.open(req, timeout=10)
        except urllib.error.HTTPError as e:
            r = e
        body = r.read()
        if r.headers.defects:
            raise ValueError('header defects: %r' % (r.headers.defects,))
        out.append({'name': s['name'], 'status': r.status, 'headers': r.headers.items(),
                    'body': base64.b64encode(body).decode()})
    except Exception as e:
        out.append({'name': s['name'], 'error': '%s: %s' % (type(e).__name__, e)})
print(json.dumps(out))
`

const nodeFetch = `
import fs from 'node:fs';
const plan = JSON.parse(fs.readFileSync(process.env.PLAN));
const out = [];
for (const s of plan) {
  try {
    const r = await fetch(process.env.BASE + s.path, { method: s.method, headers: s.headers, redirect: 'manual' });
    const body = Buffer.from(await r.arrayBuffer());
    out.push({ name: s.name, status: r.status, headers: [...r.headers], body: body.toString('base64'), Decoded: true });
  } catch (e) {
    out.push({ name: s.name, error: String(e) + (e.cause ? ': ' + e.cause : '') });
  }
}
console.log(JSON.stringify(out));
`

const nodeHTTP = `
import fs from 'node:fs';
import http from 'node:http';
const plan = JSON.parse(fs.readFileSync(process.env.PLAN));
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
const call = (s) => new Promise((resolve) => {
  const req = http.request(process.env.BASE + s.path, { method: s.method, headers: Object.fromEntries(s.headers), agent }, (res) => {
    const chunks = [];
    res.on('data', (c) => chunks.push(c));
    res.on('end', () => {
      const headers = [];
      for (let i = 0; i < res.rawHeaders.length; i += 2) headers.push([res.rawHeaders[i], res.rawHeaders[i + 1]]);
      resolve({ name: s.name, status: res.statusCode, headers, body: Buffer.concat(chunks).toString('base64'), reused: req.reusedSocket });
    });
    res.on('error', (e) => resolve({ name: s.name, error: String(e) }));
  });
  req.on('error', (e) => resolve({ name: s.name, error: String(e) + ' ' + (e.code || '') }));
  req.end();
});
const out = [];
for (const s of plan) out.push(await call(s));
agent.destroy();
console.log(JSON.stringify(out));
`

const phpStreams = `<?php
$plan = json_decode(file_get_contents(getenv('PLAN')), true);
$out = [];
foreach ($plan as $s) {
	$h = array_map(fn($p) => $p[0] . ': ' . $p[1], $s['headers']);
	$ctx = stream_context_create(['http' => ['method' => $s['method'], 'header' => $h, 'ignore_errors' => true,
		'protocol_version' => 1.1, 'timeout' => 10, 'follow_location' => 0]]);
	$body = @file_get_contents(getenv('BASE') . $s['path'], false, $ctx);
	if ($body === false) {
		$out[] = ['name' => $s['name'], 'error' => error_get_last()['message'] ?? 'failed'];
		continue;
	}
	$out[] = ['name' => $s['name'], 'lines' => $http_response_header, 'body' => base64_encode($body)];
}
echo json_encode($out);
`

const phpCurl = `<?php
$plan = json_decode(file_get_contents(getenv('PLAN')), true);
$c = curl_init();
$out = [];
foreach ($plan as $s) {
	$lines = [];
	curl_setopt($c, CURLOPT_HTTPGET, true);
	curl_setopt($c, CURLOPT_CUSTOMREQUEST, null);
	if ($s['method'] === 'HEAD') curl_setopt($c, CURLOPT_NOBODY, true);
	elseif ($s['method'] !== 'GET') curl_setopt($c, CURLOPT_CUSTOMREQUEST, $s['method']);
	curl_setopt_array($c, [CURLOPT_URL => getenv('BASE') . $s['path'], CURLOPT_RETURNTRANSFER => true,
		CURLOPT_HTTPHEADER => array_map(fn($p) => $p[0] . ': ' . $p[1], $s['headers']),
		CURLOPT_HTTP_VERSION => CURL_HTTP_VERSION_1_1, CURLOPT_TIMEOUT => 10,
		CURLOPT_HEADERFUNCTION => function ($c, $l) use (&$lines) { $lines[] = $l; return strlen($l); }]);
	$body = curl_exec($c);
	if ($body === false) {
		$out[] = ['name' => $s['name'], 'error' => curl_error($c)];
		continue;
	}
	$out[] = ['name' => $s['name'], 'lines' => $lines, 'body' => base64_encode($body),
		'reused' => curl_getinfo($c, CURLINFO_NUM_CONNECTS) === 0];
}
echo json_encode($out);
`

// curlRun sends the steps with one curl, each after --next, so that curl
// keeps one connection for them; compressed adds --compressed (and lets
// curl choose Accept-Encoding).
func curlRun(compressed bool) func(t *testing.T, w *realWorld, bin, plan string, steps []clientStep) []clientAnswer {
	return func(t *testing.T, w *realWorld, bin, plan string, steps []clientStep) []clientAnswer {
		t.Helper()
		dir := t.TempDir()
		var args []string
		for i, s := range steps {
			if i > 0 {
				args = append(args, "--next")
			}
			args = append(args, "-sS", "--http1.1", "-D", filepath.Join(dir, fmt.Sprint(i, ".head")), "-w", "%{num_connects}\\n")
			switch s.Method {
			case "HEAD":
				args = append(args, "--head", "-o", os.DevNull)
			case "GET":
				args = append(args, "-o", filepath.Join(dir, fmt.Sprint(i, ".body")))
			default:
				args = append(args, "-X", s.Method, "-o", filepath.Join(dir, fmt.Sprint(i, ".body")))
			}
			if compressed {
				args = append(args, "--compressed")
			}
			for _, h := range s.Headers {
				if compressed && h[0] == "Accept-Encoding" {
					continue
				}
				args = append(args, "-H", h[0]+": "+h[1])
			}
			args = append(args, w.edge.url()+s.Path)
		}
		var stderr strings.Builder
		cmd := exec.Command(bin, args...)
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("curl: %v\n%s%s", err, out, stderr.String())
		}
		connects := strings.Fields(string(out))
		answers := make([]clientAnswer, len(steps))
		for i, s := range steps {
			a := clientAnswer{Name: s.Name, Decoded: compressed}
			head, err := os.ReadFile(filepath.Join(dir, fmt.Sprint(i, ".head")))
			if err != nil {
				t.Fatal(err)
			}
			a.Lines = strings.SplitAfter(string(head), "\r\n")
			if n := len(a.Lines); n > 0 && a.Lines[n-1] == "" {
				a.Lines = a.Lines[:n-1]
			}
			body, _ := os.ReadFile(filepath.Join(dir, fmt.Sprint(i, ".body")))
			a.Body = base64.StdEncoding.EncodeToString(body)
			if i < len(connects) {
				reused := connects[i] == "0"
				a.Reused = &reused
			}
			answers[i] = a
		}
		return answers
	}
}

var clientDrivers = []clientDriver{
	{name: "curl", bin: "curl", keepAlive: true, run: curlRun(false)},
	{name: "curl --compressed", bin: "curl", keepAlive: true, run: curlRun(true)},
	{name: "python-http.client", bin: "python3", keepAlive: true, run: script("py", pythonHTTPClient)},
	{name: "python-urllib", bin: "python3", run: script("py", pythonURLLib)},
	{name: "node-fetch", bin: "node", run: script("mjs", nodeFetch)},
	{name: "node-http", bin: "node", keepAlive: true, run: script("mjs", nodeHTTP)},
	{name: "php-streams", bin: "php", run: script("php", phpStreams)},
	{name: "php-curl", bin: "php", phpExtension: "curl", keepAlive: true, run: script("php", phpCurl)},
}

func TestRealClients(t *testing.T) {
	w := newRealWorld(t)
	t.Run("clients", w.testClients)
	t.Run("pipelined", w.testPipelined)
	t.Run("write buffer's end", w.testWriteBufferEnd)
	t.Run("hostile headers", w.testHostileHeaders)
}

func (w *realWorld) testClients(t *testing.T) {
	for _, d := range clientDrivers {
		t.Run(d.name, func(t *testing.T) {
			bin := needBinary(t, d.bin)
			if d.phpExtension != "" {
				needPHPExtension(t, d.phpExtension)
			}
			steps := w.steps(t, strings.NewReplacer(" ", "", "-", "", ".", "").Replace(d.name))
			plan := filepath.Join(t.TempDir(), "plan.json")
			b, _ := json.Marshal(steps)
			if err := os.WriteFile(plan, b, 0o600); err != nil {
				t.Fatal(err)
			}
			w.exhaust(t, 5*time.Second)
			answers := d.run(t, w, bin, plan, steps)
			if len(answers) != len(steps) {
				t.Fatalf("%d answers to %d requests: %+v", len(answers), len(steps), answers)
			}
			for i, s := range steps {
				a := answers[i]
				var err error
				if a.body, err = base64.StdEncoding.DecodeString(a.Body); err != nil {
					t.Fatal(err)
				}
				if d.name == "node-fetch" {
					a.Decoded = true
				}
				w.check(t, d.name, s, a)
				if d.keepAlive && i > 0 && (a.Reused == nil || !*a.Reused) {
					t.Errorf("%s, %s: sent on a new connection (the connection was not kept after %q)", d.name, s.Name, steps[i-1].Name)
				}
			}
		})
	}
}

// wireAnswer is one answer read off a connection exactly as sent.
type wireAnswer struct {
	clientAnswer
	headBytes, size int // the header block's bytes, and the answer's
}

// readWire reads one answer to method strictly: every line ends in CRLF,
// each header line is "Name: value" (parseLines), and the body is
// Content-Length bytes (none for HEAD, 204 and 304).
func readWire(br *bufio.Reader, method string) (wireAnswer, error) {
	var a wireAnswer
	for {
		l, err := br.ReadString('\n')
		a.headBytes += len(l)
		if err != nil {
			return a, fmt.Errorf("after %d header lines: %w (%q)", len(a.Lines), err, l)
		}
		if !strings.HasSuffix(l, "\r\n") || strings.Contains(l[:len(l)-2], "\r") {
			return a, fmt.Errorf("line %q is not ended by CRLF alone", l)
		}
		if l == "\r\n" {
			break
		}
		a.Lines = append(a.Lines, l)
	}
	status, hdr, err := parseLines(a.Lines, "\r\n")
	if err != nil {
		return a, err
	}
	a.Status = status
	n := 0
	for _, h := range hdr {
		if strings.EqualFold(h[0], "Content-Length") {
			if n, err = strconv.Atoi(h[1]); err != nil {
				return a, fmt.Errorf("Content-Length %q", h[1])
			}
		}
	}
	if method == "HEAD" || status == 204 || status == 304 {
		n = 0
	}
	a.body = make([]byte, n)
	if _, err := io.ReadFull(br, a.body); err != nil {
		return a, fmt.Errorf("body: %w", err)
	}
	a.size = a.headBytes + n
	return a, nil
}

// rawRequest is a step as raw bytes.
func (s clientStep) raw() string {
	var b strings.Builder
	b.WriteString(s.Method + " " + s.Path + " HTTP/1.1\r\nHost: edge\r\n")
	for _, h := range s.Headers {
		b.WriteString(h[0] + ": " + h[1] + "\r\n")
	}
	b.WriteString("\r\n")
	return b.String()
}

// pipeline writes requests at once on a new connection and reads an answer
// to each method. err is the first answer that could not be read, or a
// byte after the last answer (within 100 ms: the edge writes nothing
// unasked); closed, whether the edge closed the connection after them.
func pipeline(tb testing.TB, addr, requests string, methods []string) (answers []wireAnswer, err error, closed bool) {
	tb.Helper()
	c, br := dialWrite(tb, addr, requests, 10*time.Second)
	defer c.Close()
	for _, m := range methods {
		a, err := readWire(br, m)
		if err != nil {
			_, eof := br.ReadByte()
			return answers, err, eof == io.EOF
		}
		answers = append(answers, a)
	}
	c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	if b, err := br.ReadByte(); err == nil {
		return answers, fmt.Errorf("a byte (%q) after the last answer", b), false
	} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
		return answers, nil, false
	}
	return answers, nil, true
}

const pythonPipeline = `
import base64, http.client, json, os, socket
raw = open(os.environ['RAW'], 'rb').read()
methods = json.loads(os.environ['METHODS'])
host, port = os.environ['ADDR'].rsplit(':', 1)
s = socket.create_connection((host, int(port)), timeout=10)
s.sendall(raw)
f = s.makefile('rb')
class Shared:
    # the connection's one reader, for each answer in turn
    def __getattr__(self, n): return getattr(f, n)
    def close(self): pass
class Sock:
    def makefile(self, *a, **k): return Shared()
out = []
for m in methods:
    try:
        r = http.client.HTTPResponse(Sock(), method=m)
        r.begin()
        body = r.read()
        if r.msg.defects:
            raise ValueError('header defects: %r' % (r.msg.defects,))
        out.append({'name': m, 'status': r.status, 'headers': r.getheaders(), 'body': base64.b64encode(body).decode()})
    except Exception as e:
        out.append({'name': m, 'error': '%s: %s' % (type(e).__name__, e)})
        break
print(json.dumps(out))
`

// The same sequence pipelined on one connection, all requests in one
// write, read by a strict reader of the wire and by Python's http.client:
// the edge answers each in order, the spliced answers' lines in their own
// answer, nothing between or after the answers.
func (w *realWorld) testPipelined(t *testing.T) {
	steps := w.steps(t, "pipelined")
	var raw strings.Builder
	var methods []string
	for _, s := range steps {
		raw.WriteString(s.raw())
		methods = append(methods, s.Method)
	}
	w.exhaust(t, 5*time.Second)
	answers, err, closed := pipeline(t, w.edge.addr, raw.String(), methods)
	if err != nil || closed {
		t.Fatalf("after %d answers: %v (closed %v)", len(answers), err, closed)
	}
	for i, s := range steps {
		w.check(t, "pipelined", s, answers[i].clientAnswer)
	}

	bin := needBinary(t, "python3")
	dir := t.TempDir()
	rawPath, src := filepath.Join(dir, "raw"), filepath.Join(dir, "pipeline.py")
	ms, _ := json.Marshal(methods)
	if os.WriteFile(rawPath, []byte(raw.String()), 0o600) != nil || os.WriteFile(src, []byte(pythonPipeline), 0o600) != nil {
		t.Fatal("writing the script")
	}
	cmd := exec.Command(bin, src)
	cmd.Env = append(os.Environ(), "RAW="+rawPath, "METHODS="+string(ms), "ADDR="+w.edge.addr)
	w.exhaust(t, 5*time.Second)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python: %v %s", err, out)
	}
	var pyAnswers []clientAnswer
	if err := json.Unmarshal(out, &pyAnswers); err != nil || len(pyAnswers) != len(steps) {
		t.Fatalf("python: %v, %d answers: %s", err, len(pyAnswers), out)
	}
	for i, s := range steps {
		a := pyAnswers[i]
		a.body, _ = base64.StdEncoding.DecodeString(a.Body)
		w.check(t, "python pipelined", s, a)
	}

	// HTTP/1.0: a spliced answer, then the connection closed; with
	// keep-alive asked for, the next answer on the same connection.
	large := steps[1] // an allowed Origin
	one := strings.Replace(large.raw(), " HTTP/1.1\r\n", " HTTP/1.0\r\n", 1)
	answers, err, closed = pipeline(t, w.edge.addr, one, []string{"GET"})
	if err != nil || !closed || len(answers) != 1 {
		t.Fatalf("HTTP/1.0: %d answers, %v, closed %v", len(answers), err, closed)
	}
	w.check(t, "HTTP/1.0", large, answers[0].clientAnswer)
	kept := strings.Replace(one, "\r\n\r\n", "\r\nConnection: keep-alive\r\n\r\n", 1)
	answers, err, closed = pipeline(t, w.edge.addr, kept+kept, []string{"GET", "GET"})
	if err != nil || closed || len(answers) != 2 {
		t.Fatalf("HTTP/1.0 keep-alive: %d answers, %v, closed %v", len(answers), err, closed)
	}
	for _, a := range answers {
		if !slices.Contains(a.Lines, "Connection: keep-alive\r\n") {
			t.Errorf("HTTP/1.0 keep-alive: the answer lacks Connection: keep-alive: %q", a.Lines)
		}
		w.check(t, "HTTP/1.0 keep-alive", large, a.clientAnswer)
	}
}

// A spliced answer whose headers reach the end of the write buffer, behind
// pipelined answers that filled it: the buffer is sent when full, and
// every way the headers can be cut there (the last 1, 2, 3… bytes of the
// blank line left behind) still leaves one whole answer, its lines
// spliced into its own headers, and the connection in step.
func (w *realWorld) testWriteBufferEnd(t *testing.T) {
	base := "/v1/sites/" + w.other + "/listings"
	get := func(path string, idLen int) string {
		return "GET " + path + " HTTP/1.1\r\nHost: edge\r\nAuthorization: Bearer " + w.otherKey.Key +
			"\r\nAccept-Encoding: identity\r\nX-Request-Id: " + strings.Repeat("r", idLen) + "\r\n\r\n"
	}
	big, small, target := base+"?per_page=1", base+"?per_page=1&page=50", base+"?per_page=2"
	// Sizes with one-character request ids, each a character longer per
	// character of its id. Twice: the first fills the cache (X-Cache: MISS is a byte longer).
	var first []wireAnswer
	for range 2 {
		var err error
		if first, err, _ = pipeline(t, w.edge.addr, get(big, 1)+get(small, 1)+get(target, 1), []string{"GET", "GET", "GET"}); err != nil {
			t.Fatal(err)
		}
	}
	fill, tiny, head := first[0].size, first[1].size, first[2].headBytes
	if len(first[0].body) >= 4<<10 || len(first[2].body) < 4<<10 || first[2].Status != 200 {
		t.Fatalf("the filler (%d bytes) must be below the splice threshold and the target (%d bytes, %d) above", len(first[0].body), len(first[2].body), first[2].Status)
	}
	targetBody := first[2].body
	// The buffer holds fasthttp's headers of the answer when it fills; the
	// lines spliced in (X-Cache, Vary, ETag, Cache-Control) come after, so
	// the cuts are counted from the end of the headers without them, and,
	// should the lines spliced ever be others, with them.
	spliced := 0
	for _, l := range first[2].Lines {
		for _, name := range []string{"X-Cache:", "Vary:", "Etag:", "Cache-Control:"} {
			if strings.HasPrefix(l, name) {
				spliced += len(l)
			}
		}
	}
	if spliced == 0 {
		t.Fatalf("the target's headers lack its lines: %q", first[2].Lines)
	}
	var cuts [][2]int // headers' length, cut
	for _, h := range []int{head - spliced, head} {
		for _, cut := range []int{1, 2, 3, 4, 5, h / 2, h - 1, h} {
			cuts = append(cuts, [2]int{h, cut})
		}
	}
	for _, hc := range cuts {
		// The answers before the target end cut bytes before the target's
		// headers (of h bytes) reach the buffer's end.
		h, cut := hc[0], hc[1]
		before := writeBuffer + cut - h
		n := before / fill
		m := (before - n*fill) / tiny
		extra := before - n*fill - m*tiny
		var raw strings.Builder
		var methods []string
		for i := range n + m {
			add := min(extra, 63)
			extra -= add
			if i < n {
				raw.WriteString(get(big, 1+add))
			} else {
				raw.WriteString(get(small, 1+add))
			}
			methods = append(methods, "GET")
		}
		if extra > 0 {
			t.Fatalf("headers %d, cut %d: %d bytes left over", h, cut, extra)
		}
		raw.WriteString(get(target, 1) + get(small, 1) + get(target, 1))
		methods = append(methods, "GET", "GET", "GET")
		answers, err, closed := pipeline(t, w.edge.addr, raw.String(), methods)
		if err != nil || closed {
			t.Errorf("headers %d, cut %d: after %d of %d answers: %v (closed %v)", h, cut, len(answers), len(methods), err, closed)
			continue
		}
		sum := 0
		for i, a := range answers {
			if i < n+m {
				sum += a.size
			}
			if a.Status != 200 {
				t.Errorf("headers %d, cut %d: answer %d: %d", h, cut, i, a.Status)
			}
		}
		if sum != before {
			t.Errorf("headers %d, cut %d: the answers before the target are %d bytes, want %d", h, cut, sum, before)
		}
		for _, i := range []int{n + m, n + m + 2} {
			if a := answers[i]; !bytes.Equal(a.body, targetBody) || a.headBytes != head || !slices.Contains(a.Lines, "X-Cache: HIT\r\n") {
				t.Errorf("headers %d, cut %d: the target (answer %d): %d body bytes, %d header bytes (want %d): %q", h, cut, i, len(a.body), a.headBytes, head, a.Lines)
			}
		}
	}
}

// Hostile header values — CR, LF, NUL, folding, very long, not ASCII, in
// the Origin (echoed in a spliced line when allowed) and the request id
// (echoed when sane) — each pipelined before a plain request: no answer
// gains a header, Access-Control-Allow-Origin is never anything but the
// allowed origin, and the request after it is answered as it must be
// unless the edge refused the request and closed the connection.
func (w *realWorld) testHostileHeaders(t *testing.T) {
	next := w.steps(t, "hostile")[len(w.steps(t, "hostile"))-1] // "large again", allowed Origin
	long := "https://" + strings.Repeat("a", 8000) + ".example"
	for name, hdr := range map[string]string{
		"CR in Origin":               "Origin: " + allowedCORS + "\rX-Injected: 1\r\n",
		"LF in Origin":               "Origin: " + allowedCORS + "\nX-Injected: 1\r\n",
		"CRLF in Origin":             "Origin: " + allowedCORS + "\r\nX-Injected: 1\r\n",
		"NUL in Origin":              "Origin: " + allowedCORS + "\x00X-Injected: 1\r\n",
		"folded Origin":              "Origin: " + allowedCORS + "\r\n X-Injected: 1\r\n",
		"long Origin":                "Origin: " + long + "\r\n",
		"Origin over the limit":      "Origin: " + strings.Repeat(long, 3) + "\r\n",
		"UTF-8 Origin":               "Origin: https://agénce.example\r\n",
		"Latin-1 Origin":             "Origin: https://ag\xe9nce.example\r\n",
		"Origin list":                "Origin: " + allowedCORS + ", " + otherCORS + "\r\n",
		"Origin with spaces":         "Origin: \t " + allowedCORS + " \t\r\n",
		"two Origins":                "Origin: " + otherCORS + "\r\nOrigin: " + allowedCORS + "\r\n",
		"CR in X-Request-Id":         "X-Request-Id: abc\rX-Injected: 1\r\n",
		"long X-Request-Id":          "X-Request-Id: " + strings.Repeat("a", 5000) + "\r\n",
		"CR in If-None-Match":        "If-None-Match: " + w.etag["large"] + "\rX-Injected: 1\r\n",
		"CR in Accept-Encoding":      "Accept-Encoding: gzip\rX-Injected: 1\r\n",
		"gzip, CR in Origin":         "Accept-Encoding: gzip\r\nOrigin: " + allowedCORS + "\rX-Injected: 1\r\n",
		"Origin in another's case":   "Origin: HTTPS://AGENCY.EXAMPLE\r\n",
		"NUL-ended allowed Origin":   "Origin: " + allowedCORS + "\x00\r\n",
		"space-ended allowed Origin": "Origin: " + allowedCORS + " x\r\n",
	} {
		req := "GET " + w.largePath + " HTTP/1.1\r\nHost: edge\r\nAuthorization: Bearer " + w.key.Key + "\r\n" + hdr + "\r\n"
		answers, err, closed := pipeline(t, w.edge.addr, req+next.raw(), []string{"GET", "GET"})
		if len(answers) == 0 {
			t.Errorf("%s: no answer: %v", name, err)
			continue
		}
		first := answers[0]
		for _, l := range first.Lines {
			if strings.Contains(strings.ToLower(l), "injected") || strings.HasPrefix(l, "Access-Control-Allow-Origin:") && l != "Access-Control-Allow-Origin: "+allowedCORS+"\r\n" {
				t.Errorf("%s: the answer has %q", name, l)
			}
		}
		switch {
		case first.Status == 200 || first.Status == 304:
			if first.Status == 200 && !bytes.Equal(first.body, w.ref["large"][""]) && !bytes.Equal(first.body, w.ref["large"]["gzip"]) {
				t.Errorf("%s: the body (%d bytes) is not the page", name, len(first.body))
			}
		case first.Status >= 400 && first.Status < 500:
			if len(answers) == 1 && err == nil && !closed {
				t.Errorf("%s: %d and the next request unanswered on an open connection", name, first.Status)
			}
		default:
			t.Errorf("%s: %d %q", name, first.Status, first.body)
		}
		if len(answers) == 2 {
			w.check(t, "after "+name, next, answers[1].clientAnswer)
		} else if err != nil && !closed {
			t.Errorf("%s: the next answer: %v", name, err)
		}
		t.Logf("%s: %d, then %d answers, closed %v", name, first.Status, len(answers), closed)
	}

	// A response smuggled in the Origin ends the request where the blank
	// line is: the request is answered, and the "response" after it is a
	// malformed request, refused (400) before the connection is closed.
	req := "GET " + w.largePath + " HTTP/1.1\r\nHost: edge\r\nAuthorization: Bearer " + w.key.Key + "\r\nAccept-Encoding: identity\r\nOrigin: " +
		allowedCORS + "\r\n\r\nHTTP/1.1 200 OK\r\nX-Injected: 1\r\n\r\n"
	answers, err, closed := pipeline(t, w.edge.addr, req+next.raw(), []string{"GET", "GET"})
	if len(answers) != 2 || answers[1].Status != 400 || !closed {
		t.Fatalf("a response in an Origin: %d answers, %v, closed %v", len(answers), err, closed)
	}
	w.check(t, "smuggled", next, answers[0].clientAnswer)
}
