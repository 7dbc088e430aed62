package webhook

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The examples in docs/webhooks.md are the ones these tests run, so the
// documentation cannot drift from what Listgate sends.

// TestDocGoReceiver builds the Go receiver of docs/webhooks.md, with
// nothing but the standard library, runs it, and sends it webhooks.
func TestDocGoReceiver(t *testing.T) {
	goCmd := mustTool(t, "go")
	dir := t.TempDir()
	mustWrite(t, filepath.Join(dir, "receiver.go"), docBlock(t, "receiver.go"))
	mustWrite(t, filepath.Join(dir, "go.mod"), "module receiver\n\ngo 1.22\n")
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	env := append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local", "GOPROXY=off")
	for _, args := range [][]string{{"vet", "."}, {"build", "-o", "receiver", "."}} {
		cmd := exec.CommandContext(ctx, goCmd, args...)
		cmd.Dir, cmd.Env = dir, env
		mustRun(t, cmd)
	}
	secret := DeriveSecret(testMaster, testEndpoint, 1)
	addr := freeAddr(t)
	cmd := exec.CommandContext(ctx, filepath.Join(dir, "receiver"))
	cmd.Env = append(os.Environ(), "ADDR="+addr, "WEBHOOK_SECRET="+secret)
	startServer(t, addr, cmd)
	checkReceiver(t, "http://"+addr+"/listgate/webhooks", secret)
}

// TestDocPHPReceiver runs the PHP receiver of docs/webhooks.md in PHP's
// built-in server and sends it webhooks.
func TestDocPHPReceiver(t *testing.T) {
	php := mustTool(t, "php")
	dir := t.TempDir()
	script := filepath.Join(dir, "receiver.php")
	mustWrite(t, script, docBlock(t, "receiver.php"))
	mustRun(t, exec.CommandContext(t.Context(), php, "-l", script))
	secret := DeriveSecret(testMaster, testEndpoint, 1)
	addr := freeAddr(t)
	cmd := exec.CommandContext(t.Context(), php, "-S", addr, script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "WEBHOOK_SECRET="+secret)
	startServer(t, addr, cmd)
	checkReceiver(t, "http://"+addr+"/receiver.php", secret)
}

// TestDocRetryTable checks the retry table of docs/webhooks.md against
// Backoff's constants.
func TestDocRetryTable(t *testing.T) {
	doc, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatal(err)
	}
	const marker = "<!-- generated: retry-table (pkg/webhook TestDocRetryTable) -->\n"
	_, rest, ok := strings.Cut(string(doc), marker)
	if !ok {
		t.Fatalf("%s has no line %q", docPath, strings.TrimSpace(marker))
	}
	got, _, _ := strings.Cut(rest, "\n\n")
	if want := retryTable(); strings.TrimSpace(got) != strings.TrimSpace(want) {
		t.Fatalf("%s: the retry table is not Backoff's; it should be:\n%s", docPath, want)
	}
}

// TestDocConstants checks the numbers docs/webhooks.md states in prose.
func TestDocConstants(t *testing.T) {
	doc, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		fmt.Sprintf("within %d seconds", int(DefaultTimeout.Seconds())),
		fmt.Sprintf("%d hours after the event", int(RetryFor.Hours())),
		fmt.Sprintf("at most %d hours", int(MaxRetryAfter.Hours())),
		fmt.Sprintf("%d minutes either way", int(DefaultTolerance.Minutes())),
		fmt.Sprintf("%d to %d attempts", attemptsWithin(RetryFor, 1), attemptsWithin(RetryFor, 0.5)),
		fmt.Sprintf("at most %d characters", MaxURLLen),
	} {
		if !strings.Contains(string(doc), want) {
			t.Errorf("%s does not say %q", docPath, want)
		}
	}
}

// retryTable renders the retry schedule as docs/webhooks.md shows it: for
// each failed attempt, the range of the wait before the next and of when
// the next starts, counted from the first.
func retryTable() string {
	var b strings.Builder
	b.WriteString("| failed attempt | the next waits | the next starts, after the first |\n|---|---|---|\n")
	var sum time.Duration // the sum of the longest waits so far
	for n := 1; ; n++ {
		d := backoff(n, func(n int64) int64 { return n - 1 })
		sum += d
		label := strconv.Itoa(n)
		if d == MaxDelay {
			label += " and later"
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", label, durationRange(d/2, d), durationRange(sum/2, sum))
		if d == MaxDelay {
			break
		}
	}
	return b.String()
}

// attemptsWithin counts the attempts that start within window of the first
// when every wait is its longest times share (1 or 0.5).
func attemptsWithin(window time.Duration, share float64) int {
	var at time.Duration
	n := 1
	for ; ; n++ {
		at += time.Duration(share * float64(backoff(n, func(n int64) int64 { return n - 1 })))
		if at > window {
			return n
		}
	}
}

// durationRange writes "lo–hi unit" with the unit that suits hi.
func durationRange(lo, hi time.Duration) string {
	unit, name := time.Second, "s"
	switch {
	case hi >= 2*time.Hour:
		unit, name = time.Hour, "h"
	case hi >= 2*time.Minute:
		unit, name = time.Minute, "min"
	}
	f := func(d time.Duration) string {
		x := float64(d) / float64(unit)
		if x < 10 {
			return strconv.FormatFloat(math.Round(x*10)/10, 'f', -1, 64)
		}
		return strconv.FormatFloat(math.Round(x), 'f', -1, 64)
	}
	return f(lo) + "–" + f(hi) + " " + name
}

// mustWrite writes a file or fails the test.
func mustWrite(tb testing.TB, path, content string) {
	tb.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		tb.Fatal(err)
	}
}
