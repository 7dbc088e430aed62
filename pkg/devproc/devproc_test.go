package devproc

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// script writes a shell script standing in for a Listgate binary.
func script(tb testing.TB, body string) string {
	tb.Helper()
	p := filepath.Join(tb.TempDir(), "prog")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		tb.Fatal(err)
	}
	return p
}

func TestStartWaitsForTheListeningLine(t *testing.T) {
	bin := script(t, `trap 'echo "{\"msg\":\"stopped\"}" >&2; exit 0' TERM
echo '{"msg":"warming up"}' >&2
echo '{"msg":"edge listening","addr":"127.0.0.1:4321"}' >&2
while true; do sleep 0.05; done
`)
	var tee strings.Builder
	p, err := Start(bin, Options{Log: &tee})
	if err != nil {
		t.Fatal(err)
	}
	if p.Addr != "127.0.0.1:4321" || p.URL() != "http://127.0.0.1:4321" {
		t.Fatalf("addr %q", p.Addr)
	}
	p.Stop()
	if !strings.Contains(p.Logs(), "warming up") || !strings.Contains(p.Logs(), "stopped") {
		t.Errorf("logs %q", p.Logs())
	}
	if !strings.Contains(tee.String(), "edge listening") {
		t.Errorf("tee %q", tee.String())
	}
}

func TestStartFailures(t *testing.T) {
	if _, err := Start(script(t, "echo '{\"msg\":\"bad config\"}' >&2; exit 1\n"), Options{}); err == nil ||
		!strings.Contains(err.Error(), "bad config") {
		t.Errorf("exit at start: %v", err)
	}
	start := time.Now()
	if _, err := Start(script(t, "exec sleep 5\n"), Options{StartTimeout: 200 * time.Millisecond}); err == nil || time.Since(start) > 4*time.Second {
		t.Errorf("silent program: %v after %v", err, time.Since(start))
	}
}
