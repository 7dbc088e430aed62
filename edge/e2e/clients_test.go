package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The clients people really use, each doing what an agency's site does
// through the edge: read a listing page, revalidate it with If-None-Match,
// send a lead, and read an error. Each prints one line per step: the status
// (and the ETag and the SHA-256 of the page as the client decoded it, or
// the error code). The page is large enough (with its gzip and Brotli
// forms) to leave the edge with its headers in one gathered write.
var clientScripts = map[string]struct {
	bin, file, script string
	args              []string
}{
	"php-curl": {bin: "php", file: "client.php", script: `<?php
function call($method, $url, $headers, $body = null) {
	$c = curl_init($url);
	curl_setopt_array($c, [CURLOPT_CUSTOMREQUEST => $method, CURLOPT_HTTPHEADER => $headers,
		CURLOPT_RETURNTRANSFER => true, CURLOPT_HEADER => true, CURLOPT_TIMEOUT => 10]);
	if ($body !== null) curl_setopt($c, CURLOPT_POSTFIELDS, $body);
	$raw = curl_exec($c);
	if ($raw === false) { fwrite(STDERR, curl_error($c)); exit(1); }
	$hs = curl_getinfo($c, CURLINFO_HEADER_SIZE);
	$head = substr($raw, 0, $hs);
	preg_match('/^etag:\s*(.*?)\s*$/mi', $head, $m);
	return [curl_getinfo($c, CURLINFO_RESPONSE_CODE), $m[1] ?? '', substr($raw, $hs)];
}
$u = getenv('BASE') . '/v1/sites/' . getenv('SITE') . '/listings?per_page=2';
[$s, $etag, $b] = call('GET', $u, ['Authorization: Bearer ' . getenv('KEY')]);
echo "$s $etag " . hash('sha256', $b) . "\n";
[$s] = call('GET', $u, ['Authorization: Bearer ' . getenv('KEY'), 'If-None-Match: ' . $etag]);
echo "$s\n";
[$s] = call('POST', getenv('BASE') . '/v1/leads', ['Authorization: Bearer ' . getenv('LEADKEY'), 'Content-Type: application/json'], getenv('LEAD'));
echo "$s\n";
[$s, , $b] = call('GET', $u, ['Authorization: Bearer lgk_notakey']);
echo "$s " . json_decode($b, true)['error']['code'] . "\n";
`},
	// WordPress's own HTTP library (Requests, as WordPress ships it), with
	// each of its transports: fsockopen is what a host without PHP's curl
	// extension uses.
	"wordpress-requests-fsockopen": {bin: "php", file: "wp.php", args: []string{"Requests_Transport_fsockopen"}, script: wpRequests},
	"wordpress-requests-curl":      {bin: "php", file: "wp.php", args: []string{"Requests_Transport_cURL"}, script: wpRequests},
	"python-urllib": {bin: "python3", file: "client.py", script: `
import hashlib, json, os, urllib.request, urllib.error
def call(method, url, headers, body=None):
    req = urllib.request.Request(url, data=body.encode() if body else None, headers=headers, method=method)
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.headers.get('ETag', ''), r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get('ETag', ''), e.read()
u = os.environ['BASE'] + '/v1/sites/' + os.environ['SITE'] + '/listings?per_page=2'
s, etag, b = call('GET', u, {'Authorization': 'Bearer ' + os.environ['KEY']})
print(s, etag, hashlib.sha256(b).hexdigest())
s, _, _ = call('GET', u, {'Authorization': 'Bearer ' + os.environ['KEY'], 'If-None-Match': etag})
print(s)
s, _, _ = call('POST', os.environ['BASE'] + '/v1/leads', {'Authorization': 'Bearer ' + os.environ['LEADKEY'], 'Content-Type': 'application/json'}, os.environ['LEAD'])
print(s)
s, _, b = call('GET', u, {'Authorization': 'Bearer lgk_notakey'})
print(s, json.loads(b)['error']['code'])
`},
	"node-fetch": {bin: "node", file: "client.mjs", script: `
import { createHash } from 'node:crypto';
const env = process.env;
const u = env.BASE + '/v1/sites/' + env.SITE + '/listings?per_page=2';
let r = await fetch(u, { headers: { Authorization: 'Bearer ' + env.KEY } });
const etag = r.headers.get('etag'); const page = Buffer.from(await r.arrayBuffer());
console.log(r.status + ' ' + etag + ' ' + createHash('sha256').update(page).digest('hex'));
r = await fetch(u, { headers: { Authorization: 'Bearer ' + env.KEY, 'If-None-Match': etag } }); await r.arrayBuffer();
console.log(String(r.status));
r = await fetch(env.BASE + '/v1/leads', { method: 'POST', body: env.LEAD,
  headers: { Authorization: 'Bearer ' + env.LEADKEY, 'Content-Type': 'application/json' } }); await r.arrayBuffer();
console.log(String(r.status));
r = await fetch(u, { headers: { Authorization: 'Bearer lgk_notakey' } });
console.log(r.status + ' ' + (await r.json()).error.code);
`},
}

const wpRequests = `<?php
require '/usr/share/wordpress/wp-includes/class-requests.php';
Requests::register_autoloader();
$opts = ['transport' => $argv[1], 'timeout' => 10];
$u = getenv('BASE') . '/v1/sites/' . getenv('SITE') . '/listings?per_page=2';
$r = Requests::get($u, ['Authorization' => 'Bearer ' . getenv('KEY')], $opts);
echo $r->status_code . ' ' . $r->headers['etag'] . ' ' . hash('sha256', $r->body) . "\n";
$r = Requests::get($u, ['Authorization' => 'Bearer ' . getenv('KEY'), 'If-None-Match' => $r->headers['etag']], $opts);
echo $r->status_code . "\n";
$r = Requests::post(getenv('BASE') . '/v1/leads', ['Authorization' => 'Bearer ' . getenv('LEADKEY'), 'Content-Type' => 'application/json'], getenv('LEAD'), $opts);
echo $r->status_code . "\n";
$r = Requests::get($u, ['Authorization' => 'Bearer lgk_notakey'], $opts);
echo $r->status_code . ' ' . json_decode($r->body, true)['error']['code'] . "\n";
`

func TestClientMatrix(t *testing.T) {
	s := newSystem(t)
	edge := s.startEdge(edgeOpts{})
	site := s.site("enterprise")
	key := s.key(site, "listings:read")
	leadKey := s.key(site, "leads:write")
	s.importFeed(site, largeFeed(4, 6000))
	page := do(t, "GET", edge.url()+"/v1/sites/"+site+"/listings?per_page=2", nil, bearer(key.Key))
	if page.status != 200 || len(page.body) < 8<<10 {
		t.Fatalf("page: %d, %d bytes", page.status, len(page.body))
	}
	sum := sha256.Sum256(page.body)
	pageHash := hex.EncodeToString(sum[:])
	run := func(t *testing.T, name string, cmd *exec.Cmd) {
		cmd.Env = append(os.Environ(), "BASE="+edge.url(), "SITE="+site, "KEY="+key.Key, "LEADKEY="+leadKey.Key,
			"BODY="+filepath.Join(t.TempDir(), "body"),
			`LEAD={"name":"Sam Buyer","email":"sam.`+name+`@example.com","message":"Still available?"}`)
		var stderr strings.Builder
		cmd.Stderr = &stderr // warnings (Node 18's experimental fetch) stay out of the answers
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%v: %v\n%s%s", cmd.Args, err, out, stderr.String())
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if len(lines) != 4 || !strings.HasPrefix(lines[0], "200 \"") || lines[1] != "304" || lines[2] != "201" || lines[3] != "401 UNAUTHORIZED" {
			t.Errorf("read, revalidate, lead, error: %q", lines)
		}
		if len(lines) > 0 && !strings.HasSuffix(lines[0], " "+pageHash) {
			t.Errorf("the page as %s read it is not the page (want SHA-256 %s): %q", name, pageHash, lines[0])
		}
	}
	for name, c := range clientScripts {
		t.Run(name, func(t *testing.T) {
			bin := needBinary(t, c.bin)
			if name == "php-curl" || name == "wordpress-requests-curl" {
				needPHPExtension(t, "curl")
			}
			if strings.HasPrefix(name, "wordpress") {
				if _, err := os.Stat("/usr/share/wordpress/wp-includes/class-requests.php"); err != nil {
					skipOrFail(t, "WordPress (Debian's wordpress package) is not installed")
				}
			}
			path := filepath.Join(t.TempDir(), c.file)
			if err := os.WriteFile(path, []byte(c.script), 0o600); err != nil {
				t.Fatal(err)
			}
			run(t, name, exec.Command(bin, append([]string{path}, c.args...)...))
		})
	}
	t.Run("curl", func(t *testing.T) {
		bin := needBinary(t, "curl")
		sh := `set -e
u="$BASE/v1/sites/$SITE/listings?per_page=2"
etag=$(` + bin + ` -s -o /dev/null -D - -H "Authorization: Bearer $KEY" "$u" | tr -d '\r' | sed -n 's/^[Ee][Tt][Aa][Gg]: //p')
echo "$(` + bin + ` -s -o "$BODY" -w '%{http_code}' -H "Authorization: Bearer $KEY" "$u") $etag $(sha256sum "$BODY" | cut -d' ' -f1)"
` + bin + ` -s -o /dev/null -w '%{http_code}\n' -H "Authorization: Bearer $KEY" -H "If-None-Match: $etag" "$u"
` + bin + ` -s -o /dev/null -w '%{http_code}\n' -H "Authorization: Bearer $LEADKEY" -H "Content-Type: application/json" -d "$LEAD" "$BASE/v1/leads"
echo "$(` + bin + ` -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer lgk_notakey" "$u") $(` + bin + ` -s -H "Authorization: Bearer lgk_notakey" "$u" | sed 's/.*"code":"\([A-Z_]*\)".*/\1/')"
`
		run(t, "curl", exec.Command("sh", "-c", sh))
	})
	t.Run("go-net-http", func(t *testing.T) {
		u := edge.url() + "/v1/sites/" + site + "/listings?per_page=2"
		r := do(t, "GET", u, nil, bearer(key.Key))
		nm := do(t, "GET", u, nil, map[string]string{"Authorization": "Bearer " + key.Key, "If-None-Match": r.header.Get("ETag")})
		l := do(t, "POST", edge.url()+"/v1/leads", []byte(`{"name":"Sam","email":"sam.go@example.com"}`),
			map[string]string{"Authorization": "Bearer " + leadKey.Key, "Content-Type": "application/json"})
		e := do(t, "GET", u, nil, bearer("lgk_notakey"))
		if sum := sha256.Sum256(r.body); hex.EncodeToString(sum[:]) != pageHash {
			t.Error("the page as Go's client read it is not the page")
		}
		if r.status != 200 || nm.status != 304 || l.status != 201 || e.status != 401 || e.code() != "UNAUTHORIZED" {
			t.Errorf("read %d, revalidate %d, lead %d, error %d %s", r.status, nm.status, l.status, e.status, e.code())
		}
	})
}

// needBinary returns bin's path; without it the test skips, or fails
// under CI, where .ci/run installs it.
func needBinary(t *testing.T, bin string) string {
	t.Helper()
	p, err := exec.LookPath(bin)
	if err != nil {
		skipOrFail(t, bin+" is not installed")
	}
	return p
}

func needPHPExtension(t *testing.T, ext string) {
	t.Helper()
	out, err := exec.Command("php", "-m").Output()
	if err != nil || !strings.Contains("\n"+strings.ToLower(string(out)), "\n"+ext+"\n") {
		skipOrFail(t, "PHP's "+ext+" extension is not installed")
	}
}

func skipOrFail(t *testing.T, why string) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatal(why + " (CI installs it: see .ci/run)")
	}
	t.Skip(why)
}
