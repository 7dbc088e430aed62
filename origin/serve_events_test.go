package main

import (
	"context"
	"encoding/hex"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	json "github.com/goccy/go-json"

	"github.com/listgate/listgate/origin/events"
	"github.com/listgate/listgate/origin/introspect"
	"github.com/listgate/listgate/origin/store"
	"github.com/listgate/listgate/pkg/apikey"
	"github.com/listgate/listgate/pkg/eventstream"
	"github.com/listgate/listgate/pkg/internalapi"
	"github.com/listgate/listgate/pkg/model"
)

// TestServeInternalRoutes runs serve and uses what the edge uses: key
// introspection, the event stream and a site's browser origins; an open
// stream does not hold up the shutdown.
func TestServeInternalRoutes(t *testing.T) {
	cfg := testServeConfig(t)
	cfg.ShutdownTimeout = 20 * time.Second
	addr, stop := serveInProcess(t, cfg, io.Discard)
	base := "http://" + addr

	db, err := store.Open(context.Background(), cfg.DatabaseURL, store.Options{MaxConns: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	site, err := db.CreateSite(context.Background(), "Serve Realty", model.Professional, "")
	if err != nil {
		t.Fatal(err)
	}
	key, secret, err := db.CreateKey(context.Background(), store.NewKey{SiteID: site.ID, Name: "k",
		Scopes: apikey.ListingsRead, Source: store.SourceCLI})
	if err != nil {
		t.Fatal(err)
	}

	hash := apikey.Hash(secret)
	for _, tc := range []struct {
		token  string
		status int
	}{{"", 401}, {testToken, 200}} {
		req, _ := http.NewRequest("POST", base+introspect.Path,
			strings.NewReader(`{"key_hash":"`+hex.EncodeToString(hash[:])+`"}`))
		if tc.token != "" {
			req.Header.Set("X-Listgate-Internal-Token", tc.token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var got internalapi.Introspection
		json.NewDecoder(resp.Body).Decode(&got)
		resp.Body.Close()
		if resp.StatusCode != tc.status || tc.status == 200 && (!got.Active || got.KeyID != key.ID || *got.Limit != 600) {
			t.Fatalf("introspect with token %q: %d %+v", tc.token, resp.StatusCode, got)
		}
	}

	got := make(chan eventstream.Event, 10)
	connected := make(chan struct{}, 10)
	sctx, stopStream := context.WithCancel(context.Background())
	defer stopStream()
	stream, err := eventstream.Subscribe(sctx, eventstream.Options{URL: base + events.Path, InternalToken: testToken,
		OnEvent: func(e eventstream.Event) { got <- e }, OnReset: func() { connected <- struct{}{} },
		Log: newLogger(io.Discard, "error")})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-connected:
	case <-time.After(5 * time.Second):
		t.Fatal("stream not connected")
	}
	if _, err := db.RevokeKey(context.Background(), key.ID); err != nil {
		t.Fatal(err)
	}
	select {
	case e := <-got:
		if e.Type != internalapi.EventKeyRevoked {
			t.Fatalf("event %+v", e)
		}
	case <-time.After(time.Second):
		t.Fatal("key.revoked not streamed within 1 s")
	}

	if _, err := db.SetCORS(context.Background(), site.ID, []string{"https://Serve.example"}); err != nil {
		t.Fatal(err)
	}
	select {
	case e := <-got:
		var sc internalapi.SiteCORS
		if err := json.Unmarshal(e.Data, &sc); e.Type != internalapi.EventCORSChanged || err != nil || sc.SiteID != site.ID ||
			strings.Join(sc.Origins, " ") != "https://serve.example" {
			t.Fatalf("event %s %s", e.Type, e.Data)
		}
	case <-time.After(time.Second):
		t.Fatal("site.cors_changed not streamed within 1 s")
	}
	for _, tc := range []struct {
		token  string
		status int
	}{{"", 401}, {testToken, 200}} {
		req, _ := http.NewRequest("GET", base+introspect.SiteCORSPath(site.ID), nil)
		if tc.token != "" {
			req.Header.Set("X-Listgate-Internal-Token", tc.token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var sc internalapi.SiteCORS
		json.NewDecoder(resp.Body).Decode(&sc)
		resp.Body.Close()
		if resp.StatusCode != tc.status || tc.status == 200 && (sc.SiteID != site.ID || strings.Join(sc.Origins, " ") != "https://serve.example") {
			t.Fatalf("site origins with token %q: %d %+v", tc.token, resp.StatusCode, sc)
		}
	}

	start := time.Now()
	if err := stop(); err != nil {
		t.Fatalf("serve returned %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("shutdown with an open stream took %s", d)
	}
	stopStream()
	<-stream.Done()
}
