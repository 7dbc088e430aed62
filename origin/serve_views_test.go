package main

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/listgate/listgate/origin/store/storetest"
	"github.com/listgate/listgate/pkg/config"
	"github.com/listgate/listgate/pkg/internalapi"
)

// serve mounts the edges' view reports: without them every edge's report
// is a 404 and the listing views it counted are dropped.
func TestServeTakesViewReports(t *testing.T) {
	cfg := config.DefaultOrigin()
	cfg.Addr = "127.0.0.1:0"
	cfg.DatabaseURL = storetest.URL(t)
	cfg.InternalToken = testToken
	ctx, cancel := context.WithCancel(context.Background())
	addrc := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- serve(ctx, cfg, false, &env{stdout: io.Discard, stderr: io.Discard, getenv: func(string) (string, bool) { return "", false }}, func(a string) { addrc <- a })
	}()
	defer func() { cancel(); <-done }()
	var addr string
	select {
	case addr = <-addrc:
	case err := <-done:
		t.Fatalf("serve ended early: %v", err)
	}
	req, _ := http.NewRequest("POST", "http://"+addr+internalapi.PathViews,
		strings.NewReader(`{"batch_id": "6f1c2a8e-0000-4000-8000-0000000000f1", "edge_id": "t", "counts": []}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(internalapi.HeaderInternalToken, testToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Errorf("POST %s = %d, want 204", internalapi.PathViews, resp.StatusCode)
	}
}
