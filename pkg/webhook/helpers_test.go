package webhook

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// docPath is the receivers' documentation, whose examples the tests run.
var docPath = filepath.Join("..", "..", "docs", "webhooks.md")

// mustTool returns the path of a program a test needs. Without it the test
// is skipped, or fails when CI is set (as `make test` in CI runs).
func mustTool(tb testing.TB, name string) string {
	tb.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		unavailable(tb, "%s is not installed: %v", name, err)
	}
	return path
}

// unavailable skips a test whose outside requirement (a program, the npm
// registry) is missing, or fails it when CI is set.
func unavailable(tb testing.TB, format string, args ...any) {
	tb.Helper()
	if os.Getenv("CI") != "" {
		tb.Fatalf("CI is set and "+format, args...)
	}
	tb.Skipf(format, args...)
}

// mustRun runs a command and returns its standard output; a failure fails
// the test with the command's standard error.
func mustRun(tb testing.TB, cmd *exec.Cmd) []byte {
	tb.Helper()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		tb.Fatalf("%s: %v\n%s\n%s", strings.Join(cmd.Args, " "), err, stderr.Bytes(), out)
	}
	return out
}

// docBlock returns the fenced code block that follows the line
// "<!-- tested: name -->" in docs/webhooks.md, without its fences. There
// must be exactly one such marker.
func docBlock(tb testing.TB, name string) string {
	tb.Helper()
	doc, err := os.ReadFile(docPath)
	if err != nil {
		tb.Fatal(err)
	}
	marker := "<!-- tested: " + name + " -->\n"
	if n := bytes.Count(doc, []byte(marker)); n != 1 {
		tb.Fatalf("%s has %d markers %q, want 1", docPath, n, strings.TrimSpace(marker))
	}
	_, rest, _ := strings.Cut(string(doc), marker)
	sc := bufio.NewScanner(strings.NewReader(rest))
	if !sc.Scan() || !strings.HasPrefix(sc.Text(), "```") {
		tb.Fatalf("%s: the marker %q is not followed by a ``` line", docPath, strings.TrimSpace(marker))
	}
	var b strings.Builder
	for sc.Scan() {
		if sc.Text() == "```" {
			return b.String()
		}
		b.WriteString(sc.Text())
		b.WriteByte('\n')
	}
	tb.Fatalf("%s: the block after %q does not end", docPath, strings.TrimSpace(marker))
	return ""
}

// freeAddr returns a loopback address with a port that was free a moment
// ago, for a program that takes its address as an argument.
func freeAddr(tb testing.TB) string {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// startServer starts a server program and waits until addr accepts
// connections; the program is killed when the test ends. Its output is
// logged if the test fails.
func startServer(tb testing.TB, addr string, cmd *exec.Cmd) {
	tb.Helper()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	tb.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
		if tb.Failed() {
			tb.Logf("%s said:\n%s", filepath.Base(cmd.Path), out.String())
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			return
		}
		select {
		case err := <-exited:
			exited <- err
			tb.Fatalf("%s exited: %v\n%s", cmd.Path, err, out.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			tb.Fatalf("%s does not listen on %s after 30 s", cmd.Path, addr)
		}
	}
}

// receiverCase is a request to a receiver and the status it must answer.
type receiverCase struct {
	name   string
	header func(now time.Time) http.Header
	body   string
	status int
}

// receiverCases are what every receiver example must get right, signed
// with secret, at the receiver's clock (now).
func receiverCases(tb testing.TB, secret string) []receiverCase {
	other := DeriveSecret(testMaster, testEndpoint, 99)
	signed := func(secrets []string, id string, age time.Duration, body string) func(time.Time) http.Header {
		return func(now time.Time) http.Header {
			h := http.Header{}
			if err := SetHeaders(h, secrets, id, now.Add(-age), []byte(body)); err != nil {
				tb.Fatal(err)
			}
			h.Set("Content-Type", "application/json")
			return h
		}
	}
	without := func(f func(time.Time) http.Header, name string) func(time.Time) http.Header {
		return func(now time.Time) http.Header { h := f(now); h.Del(name); return h }
	}
	with := func(f func(time.Time) http.Header, name, value string) func(time.Time) http.Header {
		return func(now time.Time) http.Header { h := f(now); h.Set(name, value); return h }
	}
	good := signed([]string{secret}, "msg_1", 0, testBody)
	return []receiverCase{
		{"valid", good, testBody, http.StatusNoContent},
		{"the same message again", good, testBody, http.StatusNoContent},
		{"the same message signed again", signed([]string{secret}, "msg_1", 30*time.Second, testBody), testBody, http.StatusNoContent},
		{"during a rotation, new secret first", signed([]string{other, secret}, "msg_2", 0, testBody), testBody, http.StatusNoContent},
		{"during a rotation, old secret first", signed([]string{secret, other}, "msg_3", 0, testBody), testBody, http.StatusNoContent},
		{"4 minutes old", signed([]string{secret}, "msg_4", 4*time.Minute, testBody), testBody, http.StatusNoContent},
		{"another secret", signed([]string{other}, "msg_5", 0, testBody), testBody, http.StatusUnauthorized},
		{"tampered body", good, strings.Replace(testBody, "Sam", "Sal", 1), http.StatusUnauthorized},
		{"tampered id", with(good, HeaderID, "msg_6"), testBody, http.StatusUnauthorized},
		{"6 minutes old", signed([]string{secret}, "msg_7", 6*time.Minute, testBody), testBody, http.StatusUnauthorized},
		{"6 minutes ahead", signed([]string{secret}, "msg_8", -6*time.Minute, testBody), testBody, http.StatusUnauthorized},
		{"bad timestamp", with(good, HeaderTimestamp, "soon"), testBody, http.StatusUnauthorized},
		{"no id", without(good, HeaderID), testBody, http.StatusUnauthorized},
		{"no timestamp", without(good, HeaderTimestamp), testBody, http.StatusUnauthorized},
		{"no signature", without(good, HeaderSignature), testBody, http.StatusUnauthorized},
		{"other version only", func(now time.Time) http.Header {
			h := good(now)
			h.Set(HeaderSignature, "v2,"+strings.TrimPrefix(h.Get(HeaderSignature), "v1,"))
			return h
		}, testBody, http.StatusUnauthorized},
	}
}

// checkReceiver sends receiverCases to a receiver at url, through the
// client the delivery worker uses, and checks its answers.
func checkReceiver(t *testing.T, url, secret string) {
	client := NewClient(ClientOptions{AllowLoopback: true, Timeout: 10 * time.Second})
	for _, tc := range receiverCases(t, secret) {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header = tc.header(time.Now())
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.status)
			}
		})
	}
	t.Run("GET", func(t *testing.T) {
		resp, err := client.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed {
			t.Fatalf("status %d, want 405", resp.StatusCode)
		}
	})
}

// moduleDir returns the directory of a module in the module cache.
func moduleDir(tb testing.TB, module string) string {
	tb.Helper()
	ctx, cancel := context.WithTimeout(tb.Context(), time.Minute)
	defer cancel()
	out := mustRun(tb, exec.CommandContext(ctx, mustTool(tb, "go"), "list", "-m", "-f", "{{.Dir}}", module))
	dir := strings.TrimSpace(string(out))
	if dir == "" {
		tb.Fatal(errors.New("go list: no directory for " + module))
	}
	return dir
}
