package e2e

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/listgate/listgate/pkg/devbrowser"
)

// pageRecorder keeps the body of every page, XHR and fetch response a tab
// gets from WordPress, so the test can check that no key reached the
// browser. It holds each response (DevTools' Fetch domain) until its body
// is read, so none is missed when the page navigates on at once (as the
// settings page reloads after the pairing poll). Safe for concurrent use.
type pageRecorder struct {
	ctx context.Context

	mu       sync.Mutex
	done     sync.Cond
	inflight int
	bodies   map[string]string // "URL (request id)" → body
	failed   []string          // what went wrong with responses
}

// recordPages starts recording the responses of b's tab from URLs that
// start with prefix.
func recordPages(b *devbrowser.Browser, prefix string) *pageRecorder {
	b.TB.Helper()
	r := &pageRecorder{ctx: b.Ctx, bodies: map[string]string{}}
	r.done.L = &r.mu
	err := chromedp.Listen(b.Ctx, func(ev any) {
		if ev, ok := ev.(*fetch.EventRequestPaused); ok {
			r.mu.Lock()
			r.inflight++
			r.mu.Unlock()
			// The listener must not run commands: read the body on a
			// goroutine of its own.
			go r.read(ev)
		}
	})
	if err != nil {
		b.TB.Fatal(err)
	}
	var patterns []*fetch.RequestPattern
	for _, typ := range []network.ResourceType{network.ResourceTypeDocument, network.ResourceTypeXHR, network.ResourceTypeFetch} {
		patterns = append(patterns, &fetch.RequestPattern{URLPattern: prefix + "/*", ResourceType: typ, RequestStage: fetch.RequestStageResponse})
	}
	if _, err := chromedp.Call(b.Ctx, fetch.Enable, fetch.EnableParams{Patterns: patterns}); err != nil {
		b.TB.Fatal(err)
	}
	return r
}

// read gets one held response's body, then lets the response go on.
func (r *pageRecorder) read(ev *fetch.EventRequestPaused) {
	ctx, cancel := context.WithTimeout(r.ctx, 10*time.Second)
	defer cancel()
	where := fmt.Sprintf("%s (%s)", ev.Request.URL, ev.RequestID)
	var body string
	var err error
	// Redirects and failed requests have no body.
	if ev.ResponseErrorReason == "" && (ev.ResponseStatusCode < 300 || ev.ResponseStatusCode >= 400) {
		var res fetch.GetResponseBodyResult
		res, err = chromedp.Call(ctx, fetch.GetResponseBody, fetch.GetResponseBodyParams{RequestID: ev.RequestID})
		body = string(res.Body)
	}
	_, cerr := chromedp.Call(ctx, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: ev.RequestID})
	r.mu.Lock()
	defer r.mu.Unlock()
	// "Invalid InterceptionId": the page dropped the request while it was
	// held (it navigated on, as WordPress's background compression test
	// does): no body reached a page, so none can leak.
	switch {
	case err != nil && strings.Contains(err.Error(), "Invalid InterceptionId"):
	case err != nil:
		r.failed = append(r.failed, where+": reading the body: "+err.Error())
	case cerr != nil && !strings.Contains(cerr.Error(), "Invalid InterceptionId"):
		r.failed = append(r.failed, where+": continuing: "+cerr.Error())
	}
	if err == nil {
		r.bodies[where] = body
	}
	r.inflight--
	r.done.Broadcast()
}

// wait returns the recorded bodies by "URL (request id)", once every held
// response has been read, and what went wrong.
func (r *pageRecorder) wait() (bodies map[string]string, failed []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for r.inflight > 0 {
		r.done.Wait()
	}
	bodies = make(map[string]string, len(r.bodies))
	for k, v := range r.bodies {
		bodies[k] = v
	}
	return bodies, append([]string(nil), r.failed...)
}
