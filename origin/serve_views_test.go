package main

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/listgate/listgate/pkg/internalapi"
)

// serve mounts the edges' view reports: without them every edge's report
// is a 404 and the listing views it counted are dropped.
func TestServeTakesViewReports(t *testing.T) {
	addr, _ := serveInProcess(t, testServeConfig(t), io.Discard)
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
