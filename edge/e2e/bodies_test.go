package e2e

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// sendBody writes a request head and then size bytes of body as fast as
// the connection takes them, and returns the answer and how much of the
// body the edge let through before it closed the connection.
func sendBody(tb testing.TB, addr, head string, size int64) (status int, body []byte, sent int64) {
	tb.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		tb.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	var written atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		if _, err := io.WriteString(c, head); err != nil {
			return
		}
		chunk := bytes.Repeat([]byte("x"), 64<<10)
		for written.Load() < size {
			n, err := c.Write(chunk[:min(int64(len(chunk)), size-written.Load())])
			written.Add(int64(n))
			if err != nil {
				return
			}
		}
	}()
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		tb.Fatalf("no answer (%d of %d bytes sent): %v", written.Load(), size, err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	c.Close()
	<-done
	return resp.StatusCode, body, written.Load()
}

// The edge decides on a body before it reads it: the route's limit, the
// key or token, the per-address limit. What it does not want it does not
// buffer, and the client still reads the answer.
func TestBodiesDecidedBeforeRead(t *testing.T) {
	s := newSystem(t)
	edge := s.startEdge(edgeOpts{})
	site := s.site("enterprise")
	leadKey := s.key(site, "leads:write")
	const big = 40 << 20

	t.Run("expect 100-continue refused", func(t *testing.T) {
		for name, tc := range map[string]struct {
			head   string
			status int
			code   string
		}{
			"large lead": {"POST /v1/leads HTTP/1.1\r\nHost: edge\r\nAuthorization: Bearer " + leadKey.Key +
				"\r\nContent-Type: application/json\r\nContent-Length: 41943040\r\nExpect: 100-continue\r\n\r\n", 413, "PAYLOAD_TOO_LARGE"},
			"feed without token": {"POST /v1/feeds HTTP/1.1\r\nHost: edge\r\nContent-Type: application/xml\r\n" +
				"Content-Length: 10485760\r\nExpect: 100-continue\r\n\r\n", 401, "UNAUTHORIZED"},
			"feed over the limit": {"POST /v1/feeds HTTP/1.1\r\nHost: edge\r\nAuthorization: Bearer abc\r\nContent-Type: application/xml\r\n" +
				"Content-Length: 62914560\r\nExpect: 100-continue\r\n\r\n", 413, "PAYLOAD_TOO_LARGE"},
		} {
			st, body := raw(t, edge.addr, tc.head)
			if st != tc.status || !bytes.Contains(body, []byte(tc.code)) {
				t.Errorf("%s: %d %s, want %d %s", name, st, body, tc.status, tc.code)
			}
		}
	})
	t.Run("bodies sent without asking", func(t *testing.T) {
		for name, tc := range map[string]struct {
			head   string
			status int
		}{
			"40 MB lead": {"POST /v1/leads HTTP/1.1\r\nHost: edge\r\nContent-Type: application/json\r\n" +
				fmt.Sprintf("Content-Length: %d\r\n\r\n", big), 413},
			"chunked 40 MB lead with a key": {"POST /v1/leads HTTP/1.1\r\nHost: edge\r\nAuthorization: Bearer " + leadKey.Key +
				"\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n" + fmt.Sprintf("%x\r\n", big), 413},
			"40 MB feed without token": {"POST /v1/feeds HTTP/1.1\r\nHost: edge\r\nContent-Type: application/xml\r\n" +
				fmt.Sprintf("Content-Length: %d\r\n\r\n", big), 401},
			"40 MB on GET /healthz": {"GET /healthz HTTP/1.1\r\nHost: edge\r\n" + fmt.Sprintf("Content-Length: %d\r\n\r\n", big), 200},
			"40 MB on a read": {"GET /v1/sites/" + site + "/listings HTTP/1.1\r\nHost: edge\r\n" +
				fmt.Sprintf("Content-Length: %d\r\n\r\n", big), 413},
		} {
			st, body, sent := sendBody(t, edge.addr, tc.head, big)
			if st != tc.status {
				t.Errorf("%s: %d %s, want %d", name, st, body, tc.status)
			}
			// Socket buffers hold a few MB; the edge reads at most 8 KiB
			// before it decides and 256 KiB while it closes.
			if sent > 16<<20 {
				t.Errorf("%s: the client got %d MB into the edge", name, sent>>20)
			}
			t.Logf("%s: %d, %.1f MB of 40 sent before the edge closed", name, st, float64(sent)/(1<<20))
		}
	})
	t.Run("the connection goes on after a body read whole", func(t *testing.T) {
		lead := `{"name":"Sam","email":"sam@example.com"}`
		req := "POST /v1/leads HTTP/1.1\r\nHost: edge\r\nAuthorization: Bearer " + leadKey.Key +
			"\r\nContent-Type: application/json\r\nContent-Length: " + fmt.Sprint(len(lead)) + "\r\n\r\n" + lead
		c, br := dialWrite(t, edge.addr, req+strings.Replace(req, "sam@", "kim@", 1), 10*time.Second)
		defer c.Close()
		for i := 0; i < 2; i++ {
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatalf("answer %d: %v", i, err)
			}
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != 201 {
				t.Errorf("lead %d: %d %s", i, resp.StatusCode, b)
			}
		}
	})
}

// A feed upload with a token streams through the edge to the origin.
func TestFeedUploadStreamsThroughEdge(t *testing.T) {
	s := newSystem(t)
	edge := s.startEdge(edgeOpts{})
	site := s.site("enterprise")
	var client struct {
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
	}
	s.cli(&client, "oauth-clients", "create", "--site", site, "--name", "CRM", "--json")
	form := url.Values{"grant_type": {"client_credentials"}}
	req, _ := http.NewRequest("POST", edge.url()+"/v1/oauth/token", strings.NewReader(form.Encode()))
	req.SetBasicAuth(client.ClientID, client.ClientSecret)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	json.NewDecoder(resp.Body).Decode(&tok)
	resp.Body.Close()
	if tok.AccessToken == "" {
		t.Fatalf("token: %d", resp.StatusCode)
	}
	// 2,000 listings, gzip-encoded as a CRM would send them, chunked.
	var feedXML bytes.Buffer
	feedXML.WriteString(feedHead)
	for i := 0; i < 2000; i++ {
		feedXML.WriteString(listing(fmt.Sprintf("L%d", i), "current"))
	}
	feedXML.WriteString(`</propertyList>`)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(feedXML.Bytes())
	zw.Close()
	req, _ = http.NewRequest("POST", edge.url()+"/v1/feeds", io.MultiReader(bytes.NewReader(gz.Bytes()))) // unknown length: chunked
	req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
	req.Header.Set("Content-Type", "application/xml")
	req.Header.Set("Content-Encoding", "gzip")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var queued struct {
		FeedID string `json:"feed_id"`
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 202 || json.Unmarshal(b, &queued) != nil {
		t.Fatalf("upload: %d %s", resp.StatusCode, b)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		req, _ := http.NewRequest("GET", edge.url()+"/v1/feeds/"+queued.FeedID, nil)
		req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var st struct {
			Status string
			Counts struct{ Created int }
		}
		json.NewDecoder(resp.Body).Decode(&st)
		resp.Body.Close()
		if st.Status == "done" {
			if st.Counts.Created != 2000 {
				t.Errorf("created %d of 2000", st.Counts.Created)
			}
			return
		}
		if st.Status == "failed" || time.Now().After(deadline) {
			t.Fatalf("feed %s", st.Status)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// A refused request with a small body leaves its connection usable: the
// next request on it is answered (clients reuse it, as the 4xx said
// nothing of closing).
func TestRefusedSmallBodyKeepsConnection(t *testing.T) {
	s := newSystem(t)
	edge := s.startEdge(edgeOpts{})
	site := s.site("enterprise")
	readOnly := s.key(site, "listings:read")
	leadKey := s.key(site, "leads:write")
	lead := `{"name":"Sam","email":"sam@example.com"}`
	req := func(key string) string {
		return "POST /v1/leads HTTP/1.1\r\nHost: edge\r\nAuthorization: Bearer " + key +
			"\r\nContent-Type: application/json\r\nContent-Length: " + fmt.Sprint(len(lead)) + "\r\n\r\n" + lead
	}
	answers, _, _ := exchange(t, edge.addr, req(readOnly.Key)+req("lgk_nope")+req(leadKey.Key), 3, "POST")
	for i, want := range []int{403, 401, 201} {
		if answers[i].StatusCode != want {
			t.Errorf("answer %d: %d, want %d", i, answers[i].StatusCode, want)
		}
	}
	// A large one ends the connection, and says so.
	st, _, _ := sendBody(t, edge.addr, "POST /v1/leads HTTP/1.1\r\nHost: edge\r\nAuthorization: Bearer "+readOnly.Key+
		"\r\nContent-Type: application/json\r\nContent-Length: 60000\r\n\r\n", 60000)
	if st != 403 {
		t.Errorf("large refused body: %d", st)
	}
	answers, _, _ = exchange(t, edge.addr, "POST /v1/leads HTTP/1.1\r\nHost: edge\r\nContent-Length: 200000\r\n\r\n"+strings.Repeat("x", 9000), 1, "POST")
	if !answers[0].Close { // net/http reads "Connection: Close" into Close
		t.Errorf("unread large body: the answer does not say the connection closes: %v", answers[0].Header)
	}
}

// An upload that stops arriving gives its slot back after the read
// timeout, and one client address cannot take every slot: a bogus bearer
// token buys an attacker seconds, not the upload timeout.
func TestStalledUploadsHoldNoSlot(t *testing.T) {
	s := newSystem(t)
	edge := s.startEdge(edgeOpts{yaml: "read_timeout: 1s\nmax_uploads: 2\n"})
	head := "POST /v1/feeds HTTP/1.1\r\nHost: edge\r\nAuthorization: Bearer bogus\r\nContent-Type: application/xml\r\nContent-Length: 65536\r\n\r\n"
	stall := func(local string) (net.Conn, *bufio.Reader) {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}}
		c, err := d.Dial("tcp", edge.addr)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(c, head+strings.Repeat("x", 8192)) // then nothing
		return c, bufio.NewReader(c)
	}
	a, ar := stall("127.0.0.1")
	defer a.Close()
	time.Sleep(300 * time.Millisecond) // a holds its slot, past the 8 KiB read ahead
	b, br := stall("127.0.0.1")
	defer b.Close()
	// The same address's second upload is refused at once.
	b.SetReadDeadline(time.Now().Add(5 * time.Second))
	if resp, err := http.ReadResponse(br, nil); err != nil || resp.StatusCode != 503 {
		t.Fatalf("second upload from one address: %v %v", resp, err)
	}
	// The first is given up after the read timeout, as the client's fault.
	start := time.Now()
	a.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(ar, nil)
	if err != nil || resp.StatusCode != 408 {
		t.Fatalf("stalled upload: %v %v", resp, err)
	}
	if waited := time.Since(start); waited > 3*time.Second {
		t.Errorf("the stalled upload held its slot %v more", waited)
	}
	if strings.Contains(edge.Logs(), "origin unreachable") {
		t.Error("a client's stalled upload was logged as the origin's failure")
	}
}
