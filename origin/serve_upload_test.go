package main

import (
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	json "github.com/goccy/go-json"

	"github.com/listgate/listgate/pkg/syncbuf"
)

// serve mounts the upload API and runs its workers: a client made with the
// CLI gets a token, uploads a feed and sees it imported; then serve stops
// with its workers.
func TestServeRunsTheUploadAPI(t *testing.T) {
	feed, err := os.ReadFile("../../shared/testdata/reaxml/reasample_residential.xml")
	if err != nil {
		t.Fatal(err)
	}
	cfg := testServeConfig(t)
	cli := newCLI(t, cfg.DatabaseURL)
	var site struct{ ID string }
	cli.mustJSON(&site, "sites", "create", "--name", "Serve Realty", "--plan", "starter", "--json")
	var client struct {
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
	}
	cli.mustJSON(&client, "oauth-clients", "create", "--site", site.ID, "--name", "CRM", "--json")

	var logs syncbuf.Buffer
	addr, stop := serveInProcess(t, cfg, &logs)
	base := "http://" + addr
	call := func(req *http.Request, dst any) int {
		t.Helper()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if err := json.NewDecoder(resp.Body).Decode(dst); err != nil {
			t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
		}
		return resp.StatusCode
	}

	req, _ := http.NewRequest("POST", base+"/v1/oauth/token", strings.NewReader(url.Values{"grant_type": {"client_credentials"}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(client.ClientID, client.ClientSecret)
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if code := call(req, &tok); code != 200 {
		t.Fatalf("token: %d", code)
	}
	req, _ = http.NewRequest("POST", base+"/v1/feeds", strings.NewReader(string(feed)))
	req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
	req.Header.Set("Content-Type", "text/xml; charset=utf-8")
	var queued struct {
		FeedID string `json:"feed_id"`
	}
	if code := call(req, &queued); code != 202 {
		t.Fatalf("upload: %d", code)
	}
	var st struct {
		Status string
		Counts struct{ Created int }
	}
	for deadline := time.Now().Add(30 * time.Second); st.Status != "done" && st.Status != "failed"; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("feed still %q after 30 s", st.Status)
		}
		req, _ = http.NewRequest("GET", base+"/v1/feeds/"+queued.FeedID, nil)
		req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
		if code := call(req, &st); code != 200 {
			t.Fatalf("status: %d", code)
		}
	}
	if st.Status != "done" || st.Counts.Created == 0 {
		t.Errorf("feed %+v", st)
	}

	if err := stop(); err != nil {
		t.Fatalf("serve returned %v", err)
	}
	if strings.Contains(logs.String(), client.ClientSecret) || strings.Contains(logs.String(), tok.AccessToken) ||
		strings.Contains(logs.String(), "xmlpassword") {
		t.Error("the log shows a credential")
	}
}
