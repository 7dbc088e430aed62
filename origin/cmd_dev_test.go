package main

import (
	"context"
	"net"
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/listgate/listgate/origin/store/storetest"
	"github.com/listgate/listgate/pkg/devproc"
	"github.com/listgate/listgate/pkg/syncbuf"
)

// `origin dev` (make run) stops the edge before the origin on Ctrl-C, so
// the requests the edge counted since its last report still reach the
// origin's usage table (the edge reports every 10 s and once more when it
// stops).
func TestDevStopsTheEdgeFirst(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the edge")
	}
	bins, err := devproc.Build(t.TempDir(), devproc.Edge)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("LISTGATE_EDGE_ADMIN_ADDR", "127.0.0.1:0") // the edge's, inherited
	dbURL := storetest.URL(t)
	vars := map[string]string{"LISTGATE_DATABASE_URL": dbURL,
		"LISTGATE_ORIGIN_ADDR": "127.0.0.1:0", "LISTGATE_EDGE_ADDR": "127.0.0.1:0"}
	var out, logs syncbuf.Buffer
	e := &env{stdout: &out, stderr: &logs, getenv: func(k string) (string, bool) { v, ok := vars[k]; return v, ok }}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- cmdDev(ctx, []string{"--edge", bins[0]}, e) }()

	// The banner names the edge, the demo site and its read key.
	banner := regexp.MustCompile(`edge +(http://127\.0\.0\.1:\d+) [\s\S]*demo site +(\S+) [\s\S]*read key +(lgk_\w+)`)
	var m []string
	for deadline := time.Now().Add(2 * time.Minute); m == nil; {
		select {
		case err := <-done:
			t.Fatalf("origin dev ended before it was ready: %v\n%s\n%s", err, out.String(), logs.String())
		case <-time.After(50 * time.Millisecond):
		}
		m = banner.FindStringSubmatch(out.String())
		if m == nil && time.Now().After(deadline) {
			t.Fatalf("no banner within 2 minutes:\n%s\n%s", out.String(), logs.String())
		}
	}
	edgeURL, site, key := m[1], m[2], m[3]
	const reads = 3
	for range reads {
		req, _ := http.NewRequest("GET", edgeURL+"/v1/sites/"+site+"/listings?per_page=1", nil)
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("read through the edge: %d", resp.StatusCode)
		}
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("origin dev: %v\n%s", err, logs.String())
		}
	case <-time.After(time.Minute):
		t.Fatalf("origin dev did not stop within a minute:\n%s", logs.String())
	}
	conn, err := pgx.Connect(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var counted int64
	if err := conn.QueryRow(context.Background(), `SELECT coalesce(sum(requests), 0) FROM usage_minutes WHERE site_id = $1`, site).Scan(&counted); err != nil {
		t.Fatal(err)
	}
	if counted < reads {
		t.Errorf("usage counted %d requests of the %d made through the edge before Ctrl-C:\n%s", counted, reads, logs.String())
	}
}

// `make run` works at every log level: it waits for the edge's port, not
// for a log line that a quieter level leaves out.
func TestDevAtWarnLevel(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the edge")
	}
	bins, err := devproc.Build(t.TempDir(), devproc.Edge)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	edgeAddr := ln.Addr().String()
	ln.Close()
	t.Setenv("LISTGATE_LOG_LEVEL", "warn") // the edge's, inherited
	t.Setenv("LISTGATE_EDGE_ADMIN_ADDR", "127.0.0.1:0")
	vars := map[string]string{"LISTGATE_DATABASE_URL": storetest.URL(t), "LISTGATE_LOG_LEVEL": "warn",
		"LISTGATE_ORIGIN_ADDR": "127.0.0.1:0", "LISTGATE_EDGE_ADDR": edgeAddr}
	var out, logs syncbuf.Buffer
	e := &env{stdout: &out, stderr: &logs, getenv: func(k string) (string, bool) { v, ok := vars[k]; return v, ok }}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- cmdDev(ctx, []string{"--edge", bins[0]}, e) }()
	banner := regexp.MustCompile(`edge +(\S+)`)
	for deadline := time.Now().Add(2 * time.Minute); ; {
		if m := banner.FindStringSubmatch(out.String()); m != nil {
			if m[1] != "http://"+edgeAddr {
				t.Fatalf("edge %s at log level warn:\n%s", m[1], out.String())
			}
			break
		}
		select {
		case err := <-done:
			t.Fatalf("origin dev ended: %v\n%s", err, logs.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("no banner within 2 minutes:\n%s\n%s", out.String(), logs.String())
		}
	}
	if resp, err := http.Get("http://" + edgeAddr + "/healthz"); err != nil || resp.StatusCode != 200 {
		t.Fatalf("edge healthz: %v", err)
	}
	cancel()
	<-done
}
