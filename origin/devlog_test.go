package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/listgate/listgate/origin/store/storetest"
	"github.com/listgate/listgate/pkg/devproc"
	"github.com/listgate/listgate/pkg/syncbuf"
)

// LISTGATE_LOG_FORMAT selects serve's log format: JSON by default, text
// lines when asked; anything else is refused.
func TestServeLoggerFormat(t *testing.T) {
	for _, tc := range []struct {
		value string
		text  bool
	}{{"", false}, {"json", false}, {"text", true}} {
		var buf bytes.Buffer
		e := &env{stderr: &buf, getenv: func(k string) (string, bool) {
			if k == "LISTGATE_LOG_FORMAT" && tc.value != "" {
				return tc.value, true
			}
			return "", false
		}}
		log, err := serveLogger(e, "info")
		if err != nil {
			t.Fatal(err)
		}
		log.Info("origin listening", "addr", "127.0.0.1:8081")
		line := buf.String()
		if got := !strings.HasPrefix(line, "{"); got != tc.text || !strings.Contains(line, "service=origin") && tc.text {
			t.Errorf("LISTGATE_LOG_FORMAT=%q: %q", tc.value, line)
		}
	}
	e := &env{stderr: io.Discard, getenv: func(k string) (string, bool) { return "yaml", k == "LISTGATE_LOG_FORMAT" }}
	if _, err := serveLogger(e, "info"); err == nil || !strings.Contains(err.Error(), "must be json or text") {
		t.Errorf("LISTGATE_LOG_FORMAT=yaml: %v", err)
	}
}

// In dev, the line of a request answered below 400 is left out unless the
// level is debug; failed requests and other records stay.
func TestQuietRequests(t *testing.T) {
	for _, level := range []string{"info", "debug"} {
		var buf bytes.Buffer
		e := &env{stderr: &buf, quietRequests: true, getenv: func(string) (string, bool) { return "", false }}
		log, err := serveLogger(e, level)
		if err != nil {
			t.Fatal(err)
		}
		for _, status := range []int{200, 304, 404, 500} {
			log.LogAttrs(context.Background(), slog.LevelInfo, "request", slog.String("path", "/x"), slog.Int("status", status))
		}
		log.Info("origin listening")
		out := buf.String()
		quiet := level == "info"
		if strings.Contains(out, `"status":200`) == quiet || strings.Contains(out, `"status":304`) == quiet ||
			!strings.Contains(out, `"status":404`) || !strings.Contains(out, `"status":500`) || !strings.Contains(out, "origin listening") {
			t.Errorf("level %s:\n%s", level, out)
		}
	}
}

// `origin dev` logs text lines without a line for each successful
// request, never logs its keys, and prints its banner again on Enter, on
// SIGUSR1 and for `origin dev --banner` from another terminal.
func TestDevBannerAndLogs(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the edge")
	}
	bins, err := devproc.Build(t.TempDir(), devproc.Edge)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("LISTGATE_EDGE_ADMIN_ADDR", "127.0.0.1:0") // the edge's, inherited: not another edge's 9091
	bannerPath := filepath.Join(t.TempDir(), "dev.banner")
	vars := map[string]string{"LISTGATE_DATABASE_URL": storetest.URL(t), "LISTGATE_DEV_BANNER_FILE": bannerPath,
		"LISTGATE_ORIGIN_ADDR": "127.0.0.1:0", "LISTGATE_EDGE_ADDR": "127.0.0.1:0"}
	getenv := func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
	stdin, typed := io.Pipe()
	defer typed.Close()
	var out, logs syncbuf.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- cmdDev(ctx, []string{"--edge", bins[0]}, &env{stdin: stdin, stdout: &out, stderr: &logs, getenv: getenv})
		close(done)
	}()
	// A test that fails half way still waits for origin dev to end: its
	// goroutines must not outlive the test (the next one changes
	// bannerSettle).
	t.Cleanup(func() {
		cancel()
		for range done {
		}
	})

	banners := func() int { return strings.Count(out.String(), bannerMark) }
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(2 * time.Minute); !cond(); {
			select {
			case err := <-done:
				t.Fatalf("origin dev ended waiting for %s: %v\n%s\n%s", what, err, out.String(), logs.String())
			case <-time.After(20 * time.Millisecond):
			}
			if time.Now().After(deadline) {
				t.Fatalf("no %s within 2 minutes:\n%s\n%s", what, out.String(), logs.String())
			}
		}
	}
	waitFor("banner", func() bool { return banners() > 0 })
	m := regexp.MustCompile(`edge +(http://127\.0\.0\.1:\d+) [\s\S]*demo site +(\S+) [\s\S]*read key +(lgk_\w+)`).FindStringSubmatch(out.String())
	if m == nil || !strings.Contains(out.String(), "Press Enter here") {
		t.Fatalf("banner:\n%s", out.String())
	}
	edgeURL, site, key := m[1], m[2], m[3]

	// From a second terminal.
	var second bytes.Buffer
	if code := run(ctx, []string{"dev", "--banner"}, &env{stdout: &second, stderr: &second, getenv: getenv}); code != 0 ||
		!strings.Contains(second.String(), key) || !strings.Contains(second.String(), edgeURL) {
		t.Fatalf("origin dev --banner: exit %d\n%s", code, second.String())
	}
	if fi, err := os.Stat(bannerPath); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("banner file: %v %v", fi, err)
	}
	// Enter, then SIGUSR1.
	n := banners()
	typed.Write([]byte("\n"))
	waitFor("banner after Enter", func() bool { return banners() > n })
	n = banners()
	syscall.Kill(os.Getpid(), syscall.SIGUSR1)
	waitFor("banner after SIGUSR1", func() bool { return banners() > n })

	get := func(path string) int {
		req, _ := http.NewRequest("GET", edgeURL+path, nil)
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := get("/v1/sites/" + site + "/listings?per_page=1"); code != 200 {
		t.Fatalf("a read: %d", code)
	}
	if code := get("/v1/sites/" + site + "/listings/99999999"); code != 404 {
		t.Fatalf("a missing listing: %d", code)
	}
	// The origin logs in order: once the 404 is there, the 200 would be.
	waitFor("the 404's log line", func() bool { return strings.Contains(logs.String(), "status=404") })
	text := logs.String()
	if strings.Contains(text, "/listings status=200") || strings.Contains(text, "per_page") {
		t.Errorf("a successful request logged at info:\n%s", text)
	}
	line := regexp.MustCompile(`^\d\d:\d\d:\d\d\.\d{3} (DEBUG|INFO |WARN |ERROR) `)
	for _, l := range strings.Split(strings.TrimSpace(text), "\n") {
		if !line.MatchString(l) {
			t.Errorf("not a text log line: %q", l)
		}
	}
	if !strings.Contains(text, "service=edge") || !strings.Contains(text, "service=origin") {
		t.Errorf("the edge's or the origin's lines missing:\n%s", text)
	}
	if strings.Contains(text, key[4:]) {
		t.Errorf("the read key is in the log:\n%s", text)
	}

	cancel()
	if err := <-done; err != nil {
		t.Fatalf("origin dev: %v", err)
	}
	if _, err := os.Stat(bannerPath); !os.IsNotExist(err) {
		t.Errorf("the banner file is left: %v", err)
	}
	if code := run(context.Background(), []string{"dev", "--banner"}, &env{stdout: io.Discard, stderr: &second, getenv: getenv}); code != 1 ||
		!strings.Contains(second.String(), "no origin dev is running") {
		t.Errorf("origin dev --banner after it stopped: exit %d %q", code, second.String())
	}
}

// The banner is printed once more when the logs that followed it have
// settled, and not when none did.
func TestDevBannerAfterLogsSettle(t *testing.T) {
	defer func(d time.Duration) { bannerSettle = d }(bannerSettle)
	bannerSettle = 50 * time.Millisecond
	for _, logged := range []bool{true, false} {
		var out, logs syncbuf.Buffer
		s, err := newDevSession(&env{stdout: &out, stderr: &logs}, func(k string) (string, bool) {
			if k == "LISTGATE_DEV_BANNER_FILE" {
				return filepath.Join(t.TempDir(), "b"), true
			}
			return "", false
		})
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(s.env.stdout, "\n"+bannerMark+" Ctrl-C stops everything.\n")
		if logged {
			io.WriteString(s.env.stderr, `{"time":"2026-11-26T10:00:00Z","level":"INFO","msg":"edge listening","addr":"127.0.0.1:8080"}`+"\n")
			for deadline := time.Now().Add(10 * time.Second); strings.Count(out.String(), bannerMark) < 2; {
				if time.Now().After(deadline) {
					t.Fatalf("the banner was not printed again:\n%s", out.String())
				}
				time.Sleep(10 * time.Millisecond)
			}
			if !strings.Contains(logs.String(), "INFO  edge listening addr=127.0.0.1:8080") {
				t.Errorf("the edge's JSON line not shown as text: %q", logs.String())
			}
		} else {
			// Nothing to wait for but time: the banner stays single.
			time.Sleep(4 * bannerSettle)
			if n := strings.Count(out.String(), bannerMark); n != 1 {
				t.Errorf("%d banners without logs after the first", n)
			}
		}
		s.close()
	}
}
