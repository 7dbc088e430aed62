package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	json "github.com/goccy/go-json"

	"github.com/listgate/listgate/origin/store/storetest"
	"github.com/listgate/listgate/pkg/config"
	"github.com/listgate/listgate/pkg/syncbuf"
)

const testToken = "0123456789abcdef0123456789abcdef-test"

// testServeConfig is the origin's default config on a free loopback port,
// a new test database and the test token.
func testServeConfig(t *testing.T) config.Origin {
	cfg := config.DefaultOrigin()
	cfg.Addr = "127.0.0.1:0"
	cfg.DatabaseURL = storetest.URL(t)
	cfg.InternalToken = testToken
	return cfg
}

// serveInProcess runs serve with cfg in this process, its logs to stderr,
// until the test ends or stop is called; it returns the address serve
// listens on. stop cancels serve and returns what serve returned, or an
// error if it has not returned within 30 s; it runs once (at the test's
// end if not before).
func serveInProcess(t *testing.T, cfg config.Origin, stderr io.Writer) (addr string, stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	addrc := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- serve(ctx, cfg, false, &env{stdout: io.Discard, stderr: stderr}, func(a string) { addrc <- a })
	}()
	var (
		once    sync.Once
		stopErr error
	)
	stop = func() error {
		once.Do(func() {
			cancel()
			select {
			case stopErr = <-done:
			case <-time.After(30 * time.Second):
				stopErr = errors.New("serve did not stop within 30 s")
			}
		})
		return stopErr
	}
	t.Cleanup(func() { stop() })
	select {
	case addr = <-addrc:
	case err := <-done:
		once.Do(cancel)
		t.Fatalf("serve ended early: %v", err)
	}
	return addr, stop
}

func TestServeInProcessShutsDownOnCancel(t *testing.T) {
	var logs syncbuf.Buffer
	addr, stop := serveInProcess(t, testServeConfig(t), &logs)
	for path, want := range map[string]int{"/healthz": 200, "/readyz": 200, "/metrics": 200, "/v1/nope": 404} {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("GET %s = %d, want %d", path, resp.StatusCode, want)
		}
	}
	if err := stop(); err != nil {
		t.Fatalf("serve returned %v after cancel", err)
	}
	if _, err := net.Dial("tcp", addr); err == nil {
		t.Error("still listening after shutdown")
	}
}

// mustBuildOrigin builds this binary for a test; tests that call it skip
// in -short mode.
func mustBuildOrigin(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "origin")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	return bin
}

// startServeProcess runs `bin serve` on the database at dbURL and returns
// it once its first JSON log line says where it listens, with its address
// and its next log lines. It is killed when the test ends.
func startServeProcess(t *testing.T, bin, dbURL string) (*exec.Cmd, string, *bufio.Scanner) {
	t.Helper()
	cmd := exec.Command(bin, "serve")
	cmd.Env = append(os.Environ(), "LISTGATE_DATABASE_URL="+dbURL,
		"LISTGATE_INTERNAL_TOKEN="+testToken, "LISTGATE_ORIGIN_ADDR=127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	lines := bufio.NewScanner(stderr)
	for lines.Scan() {
		var first map[string]any
		if json.Unmarshal(lines.Bytes(), &first) != nil {
			t.Errorf("log line is not JSON: %s", lines.Text())
			continue
		}
		addr, _ := first["addr"].(string)
		if first["msg"] != "origin listening" || addr == "" {
			t.Fatalf("first log line %v", first)
		}
		return cmd, addr, lines
	}
	t.Fatalf("log ended: %v", lines.Err())
	return nil, "", nil
}

// TestServeProcessSIGTERM runs the real binary and stops it with SIGTERM,
// reading its JSON log lines for the address and the clean stop.
func TestServeProcessSIGTERM(t *testing.T) {
	cmd, addr, lines := startServeProcess(t, mustBuildOrigin(t), storetest.URL(t))
	req, _ := http.NewRequest("GET", "http://"+addr+"/readyz", nil)
	req.Header.Set("X-Request-Id", "trace-123")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("X-Request-Id") != "trace-123" {
		t.Fatalf("readyz %d, request id %q", resp.StatusCode, resp.Header.Get("X-Request-Id"))
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	var msgs []string
	for lines.Scan() {
		var m map[string]any
		json.Unmarshal(lines.Bytes(), &m)
		msgs = append(msgs, m["msg"].(string))
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	select {
	case err := <-waited:
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no exit within 20 s of SIGTERM")
	}
	if got := strings.Join(msgs, ","); !strings.Contains(got, "shutting down") || !strings.HasSuffix(got, "stopped") {
		t.Errorf("log after SIGTERM: %s", got)
	}
}
