package mail_test

import (
	"mime"
	netmail "net/mail"
	"slices"
	"testing"
	"time"

	"github.com/listgate/listgate/pkg/mail"
)

// FuzzMessageBytes checks that whatever the names, Reply-To address,
// subject, bodies and extra header value, Bytes either refuses an invalid
// Reply-To address or writes a message that net/mail reads back with
// exactly the header fields set, each once, holding what was given.
func FuzzMessageBytes(f *testing.F) {
	f.Add("Listgate", "Agent", "Zoë", "zoe@buyer.example", leadSubject, leadText, leadHTML, "ld_1")
	f.Add("", "", "", "", "", "", "", "")
	for _, attack := range attacks {
		f.Add(attack, attack, attack, "sam@buyer.example", attack, attack, attack, attack)
	}
	f.Add("a", "b", "c", "sam@buyer.example\r\nBcc: victim@evil.example", "s", "t", "", "x")
	f.Add("a", "b", "c", `"sam"@buyer.example`, "s", "t", "h", "x")
	f.Add("a", "b", "c", "sam@[192.0.2.1]", "s", "t", "h", "x")
	f.Fuzz(func(t *testing.T, fromName, toName, replyName, replyAddr, subject, text, html, leadID string) {
		m := mail.Message{
			From:    &netmail.Address{Name: fromName, Address: "leads@listgate.test"},
			To:      &netmail.Address{Name: toName, Address: "agent@agency.example"},
			ReplyTo: &netmail.Address{Name: replyName, Address: replyAddr},
			Subject: subject,
			Text:    text,
			HTML:    html,
			Headers: map[string]string{"X-Listgate-Lead-Id": leadID},
		}
		now := time.Unix(1_700_000_000, 0).UTC()
		raw, err := m.Bytes(now, "listgate.test")
		if err != nil {
			// Only the Reply-To address may be refused, never a name or text.
			bare := mail.Message{From: m.From, To: m.To, ReplyTo: &netmail.Address{Address: replyAddr}}
			if _, err2 := bare.Bytes(now, "listgate.test"); err2 == nil {
				t.Fatalf("Bytes refused a message whose only fault can be its text: %v", err)
			}
			return
		}
		r := mustParse(t, raw)
		want := []string{"Content-Type", "Date", "From", "Message-Id", "Mime-Version", "Subject", "To", "X-Listgate-Lead-Id"}
		if replyAddr != "" {
			want = append(want, "Reply-To")
			slices.Sort(want)
		}
		if html == "" {
			want = append(want, "Content-Transfer-Encoding")
			slices.Sort(want)
		}
		if got := r.headerNames(); !slices.Equal(got, want) {
			t.Fatalf("header names = %q, want %q\n%s", got, want, raw)
		}
		checkFuzzed(t, r, m)
	})
}

// checkFuzzed checks that every field of r holds what m set.
func checkFuzzed(t *testing.T, r received, m mail.Message) {
	t.Helper()
	addrs := []addressField{{"From", m.From}, {"To", m.To}}
	if m.ReplyTo.Address != "" {
		addrs = append(addrs, addressField{"Reply-To", m.ReplyTo})
	}
	for _, a := range addrs {
		got := r.mustAddress(t, a.key)
		if got.Address != a.want.Address || got.Name != cleanedName(a.want.Name) {
			t.Errorf("%s = %q <%s>, want %q <%s>", a.key, got.Name, got.Address, cleanedName(a.want.Name), a.want.Address)
		}
	}
	if got, want := r.mustSubject(t), cleaned(m.Subject); got != want {
		t.Errorf("Subject = %q, want %q", got, want)
	}
	if got, err := new(mime.WordDecoder).DecodeHeader(r.header.Get("X-Listgate-Lead-Id")); err != nil || got != cleaned(m.Headers["X-Listgate-Lead-Id"]) {
		t.Errorf("X-Listgate-Lead-Id = %q (%v), want %q", got, err, cleaned(m.Headers["X-Listgate-Lead-Id"]))
	}
	if date, err := r.header.Date(); err != nil || !date.Equal(time.Unix(1_700_000_000, 0)) {
		t.Errorf("Date %q: %v", r.header.Get("Date"), err)
	}
	if id := r.header.Get("Message-Id"); !messageID.MatchString(id) {
		t.Errorf("Message-ID = %q", id)
	}
	wantParts := []part{{"text/plain; charset=utf-8", crlf(m.Text)}, {"text/html; charset=utf-8", crlf(m.HTML)}}
	if m.HTML == "" {
		text := m.Text
		if text == "" || (text[len(text)-1] != '\n' && text[len(text)-1] != '\r') {
			text += "\n"
		}
		wantParts = []part{{"text/plain; charset=utf-8", crlf(text)}}
	}
	if !slices.Equal(r.parts, wantParts) {
		t.Errorf("parts = %q, want %q", r.parts, wantParts)
	}
}
