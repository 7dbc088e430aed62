package upload

import (
	"bytes"
	"context"
	"crypto/rand"
	"io"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/listgate/listgate/pkg/reaxml"
)

// mustRedact is what the stored copy of feed must be.
func mustRedact(tb testing.TB, feed []byte) []byte {
	tb.Helper()
	var out bytes.Buffer
	if err := reaxml.RedactCredentials(&out, bytes.NewReader(feed)); err != nil {
		tb.Fatal(err)
	}
	return out.Bytes()
}

// Every sample feed is accepted, plain and gzipped, and stored compressed
// without its credentials. No worker runs here: the feeds stay queued.
func TestUploadStoresRedactedFeed(t *testing.T) {
	h := newHarness(t, nil)
	_, token := h.mustSiteToken()
	samples := mustSamples(t)
	names := make([]string, 0, len(samples))
	for name := range samples {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		feed := samples[name]
		for _, gzipped := range []bool{false, true} {
			mode := "plain"
			if gzipped {
				mode = "gzip"
			}
			t.Run(name+"/"+mode, func(t *testing.T) {
				id := h.mustUpload(token, feed, gzipped)
				stored := mustStoredBody(t, h.db, id)
				if bytes.Contains(stored, []byte("password=")) || bytes.Contains(stored, []byte("username=")) {
					t.Fatalf("stored feed keeps its credentials:\n%.400s", stored)
				}
				if !bytes.Equal(stored, mustRedact(t, feed)) {
					t.Errorf("stored feed differs from the redacted upload")
				}
				var size int64
				if err := h.db.Pool.QueryRow(context.Background(), `SELECT body_size FROM feed_jobs WHERE id = $1`, id).Scan(&size); err != nil || size != int64(len(feed)) {
					t.Errorf("body_size %d (%v), want %d", size, err, len(feed))
				}
				r := h.getFeed(token, id)
				var st feedStatus
				r.json(t, &st)
				if r.status != 200 || st.FeedID != id || st.Status != "queued" || st.Errors == nil || len(st.Errors) != 0 ||
					st.CreatedAt.IsZero() || st.StartedAt != nil || st.FinishedAt != nil {
					t.Errorf("status of a queued feed: %d %s", r.status, r.body)
				}
				for _, field := range []string{`"created":0`, `"updated":0`, `"unchanged":0`, `"deleted":0`, `"skipped":0`, `"errors":0`, `"errors":[]`} {
					if !strings.Contains(string(r.body), field) {
						t.Errorf("status lacks %s: %s", field, r.body)
					}
				}
			})
		}
	}
	if strings.Contains(h.logs.String(), "xmlpassword") {
		t.Error("a feed password reached the log")
	}
}

func TestUploadLimitsAndMediaTypes(t *testing.T) {
	const limit = 2048
	h := newHarness(t, func(c *Config) { c.MaxFeedBytes = limit })
	_, token := h.mustSiteToken()
	small := []byte(`<?xml version="1.0"?>` + "\n" + `<propertyList date="2009-01-01-12:30:00" username="u" password="p"></propertyList>`)
	big := mustSample(t, "reasample_residential.xml") // 3.6 KB
	bomb := gzipBytes(t, []byte("<propertyList>"+strings.Repeat(" ", 1<<20)+"</propertyList>"))
	noise := make([]byte, 3*limit)
	rand.Read(noise)
	// unsized hides the length, so the body is sent chunked.
	unsized := func(b []byte) func() io.Reader {
		return func() io.Reader { return io.MultiReader(bytes.NewReader(b)) }
	}
	sized := func(b []byte) func() io.Reader { return func() io.Reader { return bytes.NewReader(b) } }
	for name, c := range map[string]struct {
		body        func() io.Reader
		contentType string
		encoding    string
		status      int
		code        string
	}{
		"plain":                 {sized(small), "application/xml", "", 202, ""},
		"text/xml with charset": {sized(small), "text/xml; charset=utf-8", "", 202, ""},
		"identity encoding":     {sized(small), "application/xml", "identity", 202, ""},
		"gzip":                  {sized(gzipBytes(t, small)), "application/xml", "gzip", 202, ""},
		"chunked":               {unsized(small), "application/xml", "", 202, ""},
		"BOM and blank lines":   {sized(append([]byte("\xEF\xBB\xBF\r\n\n  "), small...)), "application/xml", "", 202, ""},

		"over the limit":              {sized(big), "application/xml", "", 413, "PAYLOAD_TOO_LARGE"},
		"over the limit, chunked":     {unsized(big), "application/xml", "", 413, "PAYLOAD_TOO_LARGE"},
		"over the limit decompressed": {sized(bomb), "application/xml", "gzip", 413, "PAYLOAD_TOO_LARGE"},
		"over the limit as sent":      {sized(gzipBytes(t, noise)), "application/xml", "gzip", 413, "PAYLOAD_TOO_LARGE"},

		"json":                   {sized(small), "application/json", "", 415, "UNSUPPORTED_MEDIA_TYPE"},
		"no content type":        {sized(small), "", "", 415, "UNSUPPORTED_MEDIA_TYPE"},
		"text/plain":             {sized(small), "text/plain", "", 415, "UNSUPPORTED_MEDIA_TYPE"},
		"xml with odd parameter": {sized(small), "application/xml; version=2", "", 415, "UNSUPPORTED_MEDIA_TYPE"},
		"brotli":                 {sized(small), "application/xml", "br", 415, "UNSUPPORTED_MEDIA_TYPE"},
		"deflate":                {sized(small), "application/xml", "deflate", 415, "UNSUPPORTED_MEDIA_TYPE"},
		"two encodings":          {sized(small), "application/xml", "gzip, br", 415, "UNSUPPORTED_MEDIA_TYPE"},

		"not XML":              {sized([]byte("hello, world")), "application/xml", "", 422, "VALIDATION_ERROR"},
		"empty":                {sized(nil), "application/xml", "", 422, "VALIDATION_ERROR"},
		"only white space":     {sized([]byte(" \n\t ")), "application/xml", "", 422, "VALIDATION_ERROR"},
		"BOM then text":        {sized([]byte("\xEF\xBB\xBFhello")), "application/xml", "", 422, "VALIDATION_ERROR"},
		"JSON as XML":          {sized([]byte(`{"listings": []}`)), "application/xml", "", 422, "VALIDATION_ERROR"},
		"plain sent as gzip":   {sized(small), "application/xml", "gzip", 422, "VALIDATION_ERROR"},
		"truncated gzip":       {sized(gzipBytes(t, big)[:200]), "application/xml", "gzip", 422, "VALIDATION_ERROR"},
		"gzip of not XML":      {sized(gzipBytes(t, []byte("PK\x03\x04"))), "application/xml", "gzip", 422, "VALIDATION_ERROR"},
		"empty gzip":           {sized(gzipBytes(t, nil)), "application/xml", "gzip", 422, "VALIDATION_ERROR"},
		"gzip header, no body": {sized(nil), "application/xml", "gzip", 422, "VALIDATION_ERROR"},
	} {
		t.Run(name, func(t *testing.T) {
			r := h.upload(token, c.body(), c.contentType, c.encoding)
			if r.status != c.status {
				t.Fatalf("status %d, want %d: %s", r.status, c.status, r.body)
			}
			if c.code != "" {
				if code := r.errorCode(t); code != c.code {
					t.Errorf("code %s, want %s", code, c.code)
				}
				return
			}
			var q feedQueued
			r.json(t, &q)
			if q.FeedID == "" || q.Status != "queued" || r.header.Get("Location") != "/v1/feeds/"+q.FeedID {
				t.Errorf("accepted upload: %s, Location %q", r.body, r.header.Get("Location"))
			}
		})
	}
	var n int
	if err := h.db.Pool.QueryRow(context.Background(), `SELECT count(*) FROM feed_jobs`).Scan(&n); err != nil || n != 6 {
		t.Errorf("%d feed jobs stored (%v), want the 6 accepted", n, err)
	}
}

func TestFeedsNeedAValidToken(t *testing.T) {
	h := newHarness(t, nil)
	site, token := h.mustSiteToken()
	id := h.mustUpload(token, mustSample(t, "openrealestate_residential_deleted.xml"), false)
	clientID, secret := mustClient(t, h.db, site.ID)
	unknown := "lgt_" + strings.Repeat("A", 40)
	for name, auth := range map[string]string{
		"none":                 "",
		"empty bearer":         "Bearer ",
		"malformed token":      "Bearer lgt_short",
		"unknown token":        "Bearer " + unknown,
		"client secret":        "Bearer " + secret,
		"basic credentials":    basicHeader(clientID, secret),
		"token without scheme": token,
		"API key scheme":       "ApiKey " + token,
	} {
		for _, req := range []*http.Request{
			h.newRequest("POST", "/v1/feeds", strings.NewReader("<propertyList/>")),
			h.newRequest("GET", "/v1/feeds/"+id, nil),
		} {
			t.Run(name+"/"+req.Method, func(t *testing.T) {
				req.Header.Set("Content-Type", "application/xml")
				if auth != "" {
					req.Header.Set("Authorization", auth)
				}
				r := h.do(req)
				if r.status != 401 || r.errorCode(t) != "UNAUTHORIZED" {
					t.Fatalf("%d %s, want 401 UNAUTHORIZED", r.status, r.body)
				}
				if got := r.header.Get("WWW-Authenticate"); got != `Bearer error="invalid_token"` {
					t.Errorf("WWW-Authenticate %q", got)
				}
				if strings.Contains(string(r.body), secret) || strings.Contains(string(r.body), token) {
					t.Errorf("response shows a credential: %s", r.body)
				}
			})
		}
	}
}

func TestFeedOfAnotherSiteIsNotFound(t *testing.T) {
	h := newHarness(t, nil)
	_, tokenA := h.mustSiteToken()
	_, tokenB := h.mustSiteToken()
	id := h.mustUpload(tokenA, mustSample(t, "openrealestate_residential_offmarket.xml"), true)
	for name, c := range map[string]struct {
		token, id string
		status    int
	}{
		"own site":     {tokenA, id, 200},
		"other site":   {tokenB, id, 404},
		"unknown id":   {tokenA, "6f1c2a8e-0000-4000-8000-000000000000", 404},
		"malformed id": {tokenA, "not-a-uuid", 404},
		"upper case":   {tokenA, strings.ToUpper(id), 200},
	} {
		t.Run(name, func(t *testing.T) {
			r := h.getFeed(c.token, c.id)
			if r.status != c.status {
				t.Fatalf("%d %s, want %d", r.status, r.body, c.status)
			}
			if c.status == 404 && r.errorCode(t) != "NOT_FOUND" {
				t.Errorf("body %s", r.body)
			}
		})
	}
}

// A feed that takes long to send is not cut off by a short server read
// timeout: the upload route sets its own deadline.
func TestSlowUploadOutlivesServerReadTimeout(t *testing.T) {
	h := newHarness(t, nil)
	_, token := h.mustSiteToken()
	pr, pw := io.Pipe()
	go func() {
		pw.Write([]byte("<propertyList>"))
		time.Sleep(300 * time.Millisecond)
		pw.Write([]byte("</propertyList>"))
		pw.Close()
	}()
	srv := h.slowServer(100 * time.Millisecond)
	req, _ := http.NewRequest("POST", srv+"/v1/feeds", pr)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/xml")
	if r := h.do(req); r.status != 202 {
		t.Fatalf("slow upload: %d %s", r.status, r.body)
	}
}
