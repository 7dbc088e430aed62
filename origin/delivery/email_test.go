package delivery_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	netmail "net/mail"
	"strings"
	"testing"
	"time"

	"github.com/listgate/listgate/origin/delivery"
	"github.com/listgate/listgate/pkg/mail"
	"github.com/listgate/listgate/pkg/mail/mailtest"
)

// A new lead is e-mailed to its agent through a real SMTP server
// (STARTTLS, AUTH): plain text and HTML, Reply-To the enquirer, the
// listing, the message and the link to the lead. A duplicate is not.
func TestLeadEmail(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	srv := mailtest.Start(t, mailtest.Options{Mode: mailtest.StartTLS, Username: "leads", Password: "s3cret"})
	sender, err := mail.NewSender(srv.URL("smtp"), mail.WithTLSConfig(&tls.Config{RootCAs: srv.CertPool(), ServerName: "127.0.0.1"}))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.db.SetEmailDelivery(ctx, true); err != nil {
		t.Fatal(err)
	}
	// An agent the lead names by agent_email, so that it is assigned.
	if _, err := f.db.Pool.Exec(ctx, `INSERT INTO agents (site_id, name, email) VALUES ($1, 'Alex Agent', 'alex@agency.example')`, f.site); err != nil {
		t.Fatal(err)
	}
	// The listing it is about, with its page on the agency's website.
	var ref int64
	if err := f.db.Pool.QueryRow(ctx, `INSERT INTO listings (site_id, agency_id, unique_id, type, status, headline, search_address, suburb)
		VALUES ($1, 'HARBOUR', 'HR-4471', 'residential', 'current', 'Sunny family home', '12 Smith Street, Richmond', 'Richmond')
		RETURNING ref`, f.site).Scan(&ref); err != nil {
		t.Fatal(err)
	}
	if _, err := f.db.Pool.Exec(ctx, `INSERT INTO media (site_id, listing_ref, kind, slot, url, position)
		VALUES ($1, $2, 'link', 'externalLink-1', 'https://www.harbour.example/listings/hr-4471', 1)`, f.site, ref); err != nil {
		t.Fatal(err)
	}
	f.worker(t, func(c *delivery.Config) { c.Mailer = sender })
	body := `{"name":"Zoë Enquirer","email":"zoe@example.com","phone":"0412 345 678","type":"inquiry","agent_email":"alex@agency.example","listing_id":"HR-4471","message":"Can I inspect on Saturday?\nThanks, Zoë"}`
	id := f.lead(t, body)
	f.lead(t, strings.Replace(body, "Saturday", "Sunday", 1)) // a duplicate: no second e-mail
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	msgs, err := srv.Wait(wctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	m := msgs[0]
	if len(m.To) != 1 || m.To[0] != "alex@agency.example" || !m.TLS || m.Username != "leads" {
		t.Errorf("envelope to %v, TLS %v, user %q", m.To, m.TLS, m.Username)
	}
	msg, err := netmail.ReadMessage(bytes.NewReader(m.Data))
	if err != nil {
		t.Fatal(err)
	}
	replyTo, err := netmail.ParseAddress(msg.Header.Get("Reply-To"))
	if err != nil || replyTo.Address != "zoe@example.com" || replyTo.Name != "Zoë Enquirer" {
		t.Errorf("Reply-To %q: %v %v", msg.Header.Get("Reply-To"), replyTo, err)
	}
	subject, _ := new(mime.WordDecoder).DecodeHeader(msg.Header.Get("Subject"))
	if !strings.Contains(subject, "Zoë Enquirer") || !strings.Contains(subject, "12 Smith Street") || msg.Header.Get("X-Listgate-Lead-Id") != jsonNumber(id) {
		t.Errorf("subject %q, lead id %q", subject, msg.Header.Get("X-Listgate-Lead-Id"))
	}
	parts := mimeParts(t, msg)
	link := "https://api.example.com/dashboard/sites/" + f.site + "/leads/" + jsonNumber(id)
	for _, ct := range []string{"text/plain", "text/html"} {
		p := parts[ct]
		for _, want := range []string{"Zoë Enquirer", "zoe@example.com", "0412 345 678", "Can I inspect on Saturday?", link, "Alex Agent",
			"Sunny family home", "12 Smith Street, Richmond", "HR-4471", "https://www.harbour.example/listings/hr-4471"} {
			if !strings.Contains(p, want) {
				t.Errorf("%s part lacks %q:\n%s", ct, want, p)
			}
		}
	}
	if strings.Contains(parts["text/html"], "<script") || !strings.Contains(parts["text/html"], "<a href=\""+link+"\"") {
		t.Errorf("html part:\n%s", parts["text/html"])
	}
	waitState(t, f, id, "delivered")
	if got := srv.Messages(); len(got) != 1 {
		t.Errorf("%d messages, want 1 (a duplicate is not e-mailed)", len(got))
	}
}

// The enquirer's text is escaped in the HTML part.
func TestLeadEmailEscapesHTML(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	srv := mailtest.Start(t, mailtest.Options{})
	sender, err := mail.NewSender(srv.URL("smtp"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.db.SetEmailDelivery(ctx, true); err != nil {
		t.Fatal(err)
	}
	if _, err := f.db.Pool.Exec(ctx, `UPDATE sites SET default_lead_recipient = 'office@agency.example' WHERE id = $1`, f.site); err != nil {
		t.Fatal(err)
	}
	f.worker(t, func(c *delivery.Config) { c.Mailer = sender })
	f.lead(t, `{"name":"<script>alert(1)</script>","email":"x@example.com","type":"general","message":"<img src=x onerror=alert(1)>"}`)
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	msgs, err := srv.Wait(wctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if msgs[0].To[0] != "office@agency.example" {
		t.Errorf("sent to %v, want the default recipient", msgs[0].To)
	}
	msg, err := netmail.ReadMessage(bytes.NewReader(msgs[0].Data))
	if err != nil {
		t.Fatal(err)
	}
	html := mimeParts(t, msg)["text/html"]
	if !strings.Contains(html, "&lt;script&gt;") || strings.Contains(html, "<script") || strings.Contains(html, "<img") {
		t.Errorf("html part:\n%s", html)
	}
}

// mimeParts decodes a multipart/alternative message's parts by type.
func mimeParts(tb testing.TB, msg *netmail.Message) map[string]string {
	tb.Helper()
	mt, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/alternative" {
		tb.Fatalf("content type %q %v", msg.Header.Get("Content-Type"), err)
	}
	parts := map[string]string{}
	mr := multipart.NewReader(msg.Body, params["boundary"])
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			return parts
		}
		if err != nil {
			tb.Fatal(err)
		}
		ct, _, _ := mime.ParseMediaType(p.Header.Get("Content-Type"))
		var r io.Reader = p // NextPart decodes quoted-printable and drops the header
		if p.Header.Get("Content-Transfer-Encoding") != "" {
			r = quotedprintable.NewReader(p)
		}
		b, _ := io.ReadAll(r)
		parts[ct] = string(b)
	}
}
