package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// TestOfficialGoLibrary checks our signatures against the Standard Webhooks
// Go library (github.com/standard-webhooks/standard-webhooks/libraries/go)
// both ways: it verifies what we sign, with one secret or during a
// rotation, refuses what was tampered with, signs what we sign, and we
// verify what it signs. It checks timestamps against the real clock, so
// the messages are signed now.
func TestOfficialGoLibrary(t *testing.T) {
	current, previous := DeriveSecret(testMaster, testEndpoint, 2), DeriveSecret(testMaster, testEndpoint, 1)
	now := time.Now()
	body := []byte(testBody)
	h := http.Header{}
	if err := SetHeaders(h, []string{current, previous}, "msg_1234", now, body); err != nil {
		t.Fatal(err)
	}
	for name, secret := range map[string]string{"current": current, "previous": previous} {
		wh, err := standardwebhooks.NewWebhook(secret)
		if err != nil {
			t.Fatalf("%s: NewWebhook: %v", name, err)
		}
		if err := wh.Verify(body, h); err != nil {
			t.Errorf("%s: the official library refuses our signature: %v", name, err)
		}
		tampered := append([]byte(nil), body...)
		tampered[len(tampered)-2] ^= 1
		if err := wh.Verify(tampered, h); !errors.Is(err, standardwebhooks.ErrNoMatchingSignature) {
			t.Errorf("%s: the official library accepts a tampered body: %v", name, err)
		}
		theirs, err := wh.Sign("msg_1234", now, body)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(h.Get(HeaderSignature), theirs) {
			t.Errorf("%s: the official library signs %s, we sent %s", name, theirs, h.Get(HeaderSignature))
		}
		mine := h.Clone()
		mine.Set(HeaderSignature, theirs)
		if err := Verify(secret, mine, body, 0, now); err != nil {
			t.Errorf("%s: we refuse the official library's signature: %v", name, err)
		}
	}
	other, _ := standardwebhooks.NewWebhook(DeriveSecret(testMaster, testEndpoint, 3))
	if err := other.Verify(body, h); err == nil {
		t.Error("the official library accepts our signature with another secret")
	}
	stale := h.Clone()
	if err := SetHeaders(stale, []string{current}, "msg_1234", now.Add(-DefaultTolerance-time.Minute), body); err != nil {
		t.Fatal(err)
	}
	wh, _ := standardwebhooks.NewWebhook(current)
	if err := wh.Verify(body, stale); !errors.Is(err, standardwebhooks.ErrMessageTooOld) {
		t.Errorf("the official library accepts a stale message: %v", err)
	}
}

// TestOfficialGoLibraryVector checks the official library against our
// known answer (the specification's test vector), so that a change in
// either shows.
func TestOfficialGoLibraryVector(t *testing.T) {
	wh, err := standardwebhooks.NewWebhook(specSecret)
	if err != nil {
		t.Fatal(err)
	}
	got, err := wh.Sign(specMsgID, time.Unix(specTimestamp, 0), []byte(specPayload))
	if err != nil || got != specSignature {
		t.Fatalf("official Sign = %q, %v; want %q", got, err, specSignature)
	}
}

// crossCase is a message for another language's library to verify.
type crossCase struct {
	Name    string            `json:"name"`
	Secret  string            `json:"secret"`
	Body    string            `json:"body"`
	Headers map[string]string `json:"headers"`
	valid   bool
}

// crossSign is a message for another language's library to sign.
type crossSign struct {
	Secret    string `json:"secret"`
	ID        string `json:"id"`
	Timestamp int64  `json:"timestamp"`
	Body      string `json:"body"`
	want      string
}

// crossInput is a library script's standard input; crossOutput its
// standard output: for each case "ok" or the library's error, and for each
// crossSign its signature.
type (
	crossInput struct {
		Cases []crossCase `json:"cases"`
		Signs []crossSign `json:"signs"`
	}
	crossOutput struct {
		Verified   []string `json:"verified"`
		Signatures []string `json:"signatures"`
	}
)

// crossCheck gives run the messages we sign (signed now: the libraries
// check timestamps against the real clock) and checks what it says.
func crossCheck(t *testing.T, run func(input []byte) []byte) {
	current, previous := DeriveSecret(testMaster, testEndpoint, 2), DeriveSecret(testMaster, testEndpoint, 1)
	now := time.Now()
	signed := func(secrets []string, at time.Time) map[string]string {
		h := http.Header{}
		if err := SetHeaders(h, secrets, "msg_1843", at, []byte(testBody)); err != nil {
			t.Fatal(err)
		}
		m := map[string]string{}
		for k := range h {
			m[strings.ToLower(k)] = h.Get(k)
		}
		return m
	}
	rotation := signed([]string{current, previous}, now)
	in := crossInput{
		Cases: []crossCase{
			{"one secret", current, testBody, signed([]string{current}, now), true},
			{"rotation, new secret", current, testBody, rotation, true},
			{"rotation, previous secret", previous, testBody, rotation, true},
			{"4 minutes old", current, testBody, signed([]string{current}, now.Add(-4*time.Minute)), true},
			{"tampered body", current, strings.Replace(testBody, "Sam", "Sal", 1), rotation, false},
			{"another secret", DeriveSecret(testMaster, testEndpoint, 3), testBody, rotation, false},
			{"stale", current, testBody, signed([]string{current}, now.Add(-DefaultTolerance-time.Minute)), false},
			{"from the future", current, testBody, signed([]string{current}, now.Add(DefaultTolerance+time.Minute)), false},
		},
		Signs: []crossSign{
			{specSecret, specMsgID, specTimestamp, specPayload, specSignature},
			{current, "msg_1843", now.Unix(), testBody, ""},
		},
	}
	in.Signs[1].want, _ = Sign(current, "msg_1843", now, []byte(testBody))
	input, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var out crossOutput
	if raw := run(input); json.Unmarshal(raw, &out) != nil || len(out.Verified) != len(in.Cases) || len(out.Signatures) != len(in.Signs) {
		t.Fatalf("the script's output is not %d results and %d signatures: %s", len(in.Cases), len(in.Signs), raw)
	}
	for i, c := range in.Cases {
		if (out.Verified[i] == "ok") != c.valid {
			t.Errorf("%s: the library says %q, want valid %v", c.Name, out.Verified[i], c.valid)
		}
	}
	for i, s := range in.Signs {
		if out.Signatures[i] != s.want {
			t.Errorf("the library signs %s's message %s, we sign %s", s.ID, out.Signatures[i], s.want)
		}
	}
}

// jsLibraryScript runs the npm package standardwebhooks on a crossInput.
const jsLibraryScript = `const { Webhook } = require("standardwebhooks");
const input = JSON.parse(require("fs").readFileSync(0, "utf8"));
const verified = input.cases.map((c) => {
  try {
    new Webhook(c.secret).verify(c.body, c.headers);
    return "ok";
  } catch (e) {
    return String((e && e.message) || e);
  }
});
const signatures = input.signs.map((s) => new Webhook(s.secret).sign(s.id, new Date(s.timestamp * 1000), s.body));
process.stdout.write(JSON.stringify({ verified, signatures }));
`

// TestOfficialJavaScriptLibrary installs the Standard Webhooks npm package
// (standardwebhooks, the newest) into a temporary directory and has it
// verify and sign our messages. Without node and npm, or when the install
// fails (no registry), it is skipped, unless CI is set.
func TestOfficialJavaScriptLibrary(t *testing.T) {
	node, npm := mustTool(t, "node"), mustTool(t, "npm")
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	install := exec.CommandContext(ctx, npm, "install", "--no-audit", "--no-fund", "--no-update-notifier", "standardwebhooks")
	install.Dir = dir
	if out, err := install.CombinedOutput(); err != nil {
		unavailable(t, "npm install standardwebhooks: %v\n%s", err, out)
	}
	if pkg, err := os.ReadFile(filepath.Join(dir, "node_modules", "standardwebhooks", "package.json")); err == nil {
		var meta struct{ Version string }
		json.Unmarshal(pkg, &meta)
		t.Logf("standardwebhooks %s from npm", meta.Version)
	}
	mustWrite(t, filepath.Join(dir, "check.js"), jsLibraryScript)
	crossCheck(t, func(input []byte) []byte {
		cmd := exec.CommandContext(ctx, node, "check.js")
		cmd.Dir, cmd.Stdin = dir, bytes.NewReader(input)
		return mustRun(t, cmd)
	})
}

// phpLibraryScript runs the Standard Webhooks PHP library, whose source
// directory is in SW_PHP_SRC, on a crossInput.
const phpLibraryScript = `<?php
$src = getenv('SW_PHP_SRC');
require $src . '/Exception/WebhookVerificationException.php';
require $src . '/Exception/WebhookSigningException.php';
require $src . '/Webhook.php';
$input = json_decode(stream_get_contents(STDIN), true);
$verified = [];
foreach ($input['cases'] as $c) {
    try {
        (new \StandardWebhooks\Webhook($c['secret']))->verify($c['body'], $c['headers']);
        $verified[] = 'ok';
    } catch (\Throwable $e) {
        $verified[] = $e->getMessage();
    }
}
$signatures = [];
foreach ($input['signs'] as $s) {
    $signatures[] = (new \StandardWebhooks\Webhook($s['secret']))->sign($s['id'], $s['timestamp'], $s['body']);
}
echo json_encode(['verified' => $verified, 'signatures' => $signatures]);
`

// TestOfficialPHPLibrary has the Standard Webhooks PHP library verify and
// sign our messages: the same source as the Packagist package
// standard-webhooks/standard-webhooks, taken from the Go module's copy of
// the repository's libraries directory (so no Composer or network is
// needed). Without php it is skipped, unless CI is set.
func TestOfficialPHPLibrary(t *testing.T) {
	php := mustTool(t, "php")
	src := filepath.Join(moduleDir(t, "github.com/standard-webhooks/standard-webhooks/libraries"), "php", "src")
	if _, err := os.Stat(filepath.Join(src, "Webhook.php")); err != nil {
		t.Fatalf("the module has no PHP library: %v", err)
	}
	script := filepath.Join(t.TempDir(), "check.php")
	mustWrite(t, script, phpLibraryScript)
	crossCheck(t, func(input []byte) []byte {
		cmd := exec.CommandContext(t.Context(), php, "-d", "display_errors=stderr", script)
		cmd.Env = append(os.Environ(), "SW_PHP_SRC="+src)
		cmd.Stdin = bytes.NewReader(input)
		return mustRun(t, cmd)
	})
}
