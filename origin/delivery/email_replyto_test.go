package delivery_test

import (
	"bytes"
	"context"
	netmail "net/mail"
	"strings"
	"testing"
	"time"

	"github.com/listgate/listgate/origin/delivery"
	"github.com/listgate/listgate/pkg/mail"
	"github.com/listgate/listgate/pkg/mail/mailtest"
)

// An enquirer's address that the leads API accepts but an e-mail header
// cannot carry (an internationalised one) does not keep the lead from its
// agent: the e-mail goes without Reply-To, and shows the address in its
// text.
func TestLeadEmailUnwritableReplyTo(t *testing.T) {
	for _, email := range []string{"anna@bücher.example", "jösé@example.com"} {
		t.Run(email, func(t *testing.T) {
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
			id := f.lead(t, `{"name":"Anna Umlaut","email":"`+email+`","type":"inquiry","message":"Hallo"}`)
			waitState(t, f, id, "delivered")
			wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			msgs, err := srv.Wait(wctx, 1)
			if err != nil {
				t.Fatal(err)
			}
			msg, err := netmail.ReadMessage(bytes.NewReader(msgs[0].Data))
			if err != nil {
				t.Fatal(err)
			}
			if rt := msg.Header.Get("Reply-To"); rt != "" {
				t.Errorf("Reply-To %q", rt)
			}
			if text := mimeParts(t, msg)["text/plain"]; !strings.Contains(text, email) {
				t.Errorf("the text lacks the enquirer's address %q:\n%s", email, text)
			}
		})
	}
}
