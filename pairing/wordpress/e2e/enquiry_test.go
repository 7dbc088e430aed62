package e2e

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/listgate/listgate/pkg/devbrowser"
)

// Enquiry form fields, inside form.listgate-enquiry.
const (
	nameInput    chromedp.CSS = `form.listgate-enquiry input[name=lg_name]`
	emailInput   chromedp.CSS = `form.listgate-enquiry input[name=lg_email]`
	phoneInput   chromedp.CSS = `form.listgate-enquiry input[name=lg_phone]`
	messageInput chromedp.CSS = `form.listgate-enquiry textarea[name=lg_message]`
	submitButton chromedp.CSS = `form.listgate-enquiry button.listgate-enquiry-submit`
)

// testEnquiry sends an enquiry from the listing page: first with a bad
// e-mail (the API's 422 shown next to the field, the input kept), then
// corrected (one lead for the listing), then the same form once more (no
// second lead).
func testEnquiry(t *testing.T, e *env) {
	b := e.visitor
	open(b, e.listingURL, submitButton)
	b.Do(chromedp.SendKeys(nameInput, "Pat Buyer"),
		chromedp.SendKeys(emailInput, "not-an-email"),
		chromedp.SendKeys(messageInput, "Is it still available? Can I inspect on Saturday?"))
	clickToLoad(b, submitButton)
	b.Do(chromedp.WaitVisible(chromedp.CSS(`span.listgate-field-error[data-field=email]`)))
	if v := devbrowser.Get(b, chromedp.Value(emailInput)); v != "not-an-email" {
		t.Errorf("after the error the e-mail input holds %q", v)
	}
	if v := devbrowser.Get(b, chromedp.Value(nameInput)); v != "Pat Buyer" {
		t.Errorf("after the error the name input holds %q", v)
	}
	b.ScreenshotOf("wordpress-enquiry-error", `#listgate-enquiry`)

	email := fmt.Sprintf("pat.buyer.%d@example.com", time.Now().UnixNano())
	b.Do(chromedp.Clear(emailInput), chromedp.SendKeys(emailInput, email), chromedp.SendKeys(phoneInput, "0412 345 678"))
	// What the browser is about to post, to post it again below.
	form := devbrowser.Get(b, chromedp.Evaluate[[]byte](`(() => {
		const f = document.querySelector('form.listgate-enquiry');
		return {action: f.action, fields: Array.from(new FormData(f).entries())};
	})()`))
	if !strings.Contains(string(form), `"lg_token"`) {
		t.Fatalf("the enquiry form has no lg_token: %s", form)
	}
	clickToLoad(b, submitButton)
	b.Do(chromedp.WaitVisible(chromedp.CSS(`div.listgate-notice-success`)))
	if loc := devbrowser.Get(b, chromedp.Location()); !strings.Contains(loc, "lg_enquiry=sent") {
		t.Errorf("after sending, the address is %s", loc)
	}
	b.ScreenshotOf("wordpress-enquiry-sent", `#listgate-enquiry`)
	e.checkOneLead(t, email)

	// The same form again, as a double click or a re-post from history
	// would send it: the same lg_token.
	devbrowser.Get(b, chromedp.WaitEvent(page.LoadEventFired, nil, chromedp.Evaluate[chromedp.Void](`(form => {
		const f = document.createElement('form');
		f.method = 'post';
		f.action = form.action;
		for (const [name, value] of form.fields) {
			const input = document.createElement('input');
			input.type = 'hidden';
			input.name = name;
			input.value = value;
			f.appendChild(input);
		}
		document.body.appendChild(f);
		f.submit();
	})(`+string(form)+`)`)))
	b.Do(chromedp.WaitVisible(chromedp.CSS(`div.listgate-notice-success`)))
	e.checkOneLead(t, email)
}

// checkOneLead checks that the demo site has exactly one lead with email,
// for the listing of e.listingRef, submitted once: a form posted again with
// the same lg_token (the plugin's Idempotency-Key) is replayed by the API
// and stores nothing.
func (e *env) checkOneLead(t *testing.T, email string) {
	t.Helper()
	ref, err := strconv.ParseInt(e.listingRef, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	var leads, forListing, subs int
	e.lg.query(t, `SELECT count(*), count(*) FILTER (WHERE listing_ref = $3),
			(SELECT count(*) FROM lead_submissions s JOIN leads l2 ON l2.site_id = s.site_id AND l2.id = s.lead_id
			 WHERE l2.site_id = $1 AND l2.email_norm = lower($2))
		FROM leads WHERE site_id = $1 AND email_norm = lower($2)`,
		[]any{e.lg.siteID, email, ref}, &leads, &forListing, &subs)
	if leads != 1 || forListing != 1 {
		t.Errorf("%d leads with %s (%d for listing %s), want exactly 1 for the listing", leads, email, forListing, e.listingRef)
	}
	if subs != 1 {
		t.Errorf("%d submissions of the lead with %s, want 1: the same form (same lg_token) was stored again", subs, email)
	}
}
