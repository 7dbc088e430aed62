package mail_test

import (
	"context"
	"fmt"
	"mime"
	netmail "net/mail"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/listgate/listgate/pkg/mail"
	"github.com/listgate/listgate/pkg/mail/mailtest"
)

// attacks are what an enquirer might type as a name or a lead's text
// hoping to add a header (Bcc to themselves, a second body, …).
var attacks = []string{
	"Sam\r\nBcc: victim@evil.example",
	"Sam\nBcc: victim@evil.example",
	"Sam\rBcc: victim@evil.example",
	"Sam\r\n\r\nInjected body",
	"Sam\r\n Bcc: victim@evil.example", // looks like folding
	"Sam\x00Bcc: victim@evil.example",
	"Sam\u0085Bcc: victim@evil.example", // NEL
	"Sam\u2028Bcc: victim@evil.example", // line separator
	"Sam\tBcc:\tvictim@evil.example",
	"Sam%0d%0aBcc: victim@evil.example",
	"=?utf-8?q?Sam=0D=0ABcc:_victim@evil.example?=",
	`Sam" <victim@evil.example>, "x`,
	"Sam <victim@evil.example>, victim2@evil.example",
	"\r\n",
	"\xff\xfe invalid UTF-8 \r\nBcc: victim@evil.example",
	strings.Repeat("Sam\r\nBcc: victim@evil.example ", 100),
}

// leadHeaderNames are the header names a lead must have, and only these.
var leadHeaderNames = []string{"Content-Type", "Date", "From", "Message-Id", "Mime-Version", "Reply-To", "Subject", "To", "X-Listgate-Lead-Id"}

// cleaned is what a name or subject should read as once received: valid
// UTF-8, line breaks and other control characters as single spaces,
// trimmed.
func cleaned(s string) string {
	return strings.Join(strings.FieldsFunc(strings.ToValidUTF8(s, "\uFFFD"), func(r rune) bool {
		return r == ' ' || unicode.IsControl(r) || r == '\u2028' || r == '\u2029'
	}), " ")
}

// cleanedName is cleaned, cut to the 200 characters a display name keeps.
func cleanedName(s string) string {
	s = cleaned(s)
	if utf8.RuneCountInString(s) > 200 {
		s = strings.TrimRight(string([]rune(s)[:200]), " ")
	}
	return s
}

var injectedHeader = regexp.MustCompile(`(?im)^(bcc|cc|injected)`)

// checkNotInjected checks that r has exactly the lead's headers, the
// expected addresses, and no line that starts an injected field.
func checkNotInjected(tb testing.TB, r received, m mail.Message) {
	tb.Helper()
	if got := r.headerNames(); !slices.Equal(got, leadHeaderNames) {
		tb.Errorf("header names = %q, want %q", got, leadHeaderNames)
	}
	header, _, _ := strings.Cut(string(r.raw), "\r\n\r\n")
	if loc := injectedHeader.FindStringIndex(header); loc != nil {
		tb.Errorf("a header line starts with %q:\n%s", header[loc[0]:loc[1]], header)
	}
	for _, tc := range []addressField{{"From", m.From}, {"To", m.To}, {"Reply-To", m.ReplyTo}} {
		got := r.mustAddress(tb, tc.key)
		if got.Address != tc.want.Address || got.Name != cleanedName(tc.want.Name) {
			tb.Errorf("%s = %q <%s>, want %q <%s>", tc.key, got.Name, got.Address, cleanedName(tc.want.Name), tc.want.Address)
		}
	}
	if got, want := r.mustSubject(tb), cleaned(m.Subject); got != want {
		tb.Errorf("Subject = %q, want %q", got, want)
	}
	lead, err := new(mime.WordDecoder).DecodeHeader(r.header.Get("X-Listgate-Lead-Id"))
	if err != nil || lead != cleaned(m.Headers["X-Listgate-Lead-Id"]) {
		tb.Errorf("X-Listgate-Lead-Id = %q (%v), want %q", lead, err, cleaned(m.Headers["X-Listgate-Lead-Id"]))
	}
}

func TestBytesHeaderInjection(t *testing.T) {
	fields := []struct {
		name string
		set  func(*mail.Message, string)
	}{
		{"From name", func(m *mail.Message, s string) { m.From.Name = s }},
		{"To name", func(m *mail.Message, s string) { m.To.Name = s }},
		{"Reply-To name", func(m *mail.Message, s string) { m.ReplyTo.Name = s }},
		{"Subject", func(m *mail.Message, s string) { m.Subject = s }},
		{"extra header value", func(m *mail.Message, s string) { m.Headers["X-Listgate-Lead-Id"] = s }},
	}
	for _, field := range fields {
		for i, attack := range attacks {
			t.Run(fmt.Sprintf("%s/%d", field.name, i), func(t *testing.T) {
				m := leadMessage()
				m.From = &netmail.Address{Name: "Listgate", Address: "leads@listgate.test"}
				field.set(&m, attack)
				r := mustParse(t, mustBytes(t, m, time.Now()))
				checkNotInjected(t, r, m)
			})
		}
	}
}

func TestSendHeaderInjection(t *testing.T) {
	srv := mailtest.Start(t, mailtest.Options{Mode: mailtest.StartTLS, Username: testUser, Password: testPassword})
	s := mustSender(t, srv, "smtp", nil)
	m := leadMessage()
	m.To.Name = "Agent\r\nBcc: victim@evil.example"
	m.ReplyTo.Name = "Sam\nCc: victim@evil.example\n\nInjected body"
	m.Subject = "Enquiry\r\nBcc: victim@evil.example"
	if err := s.Send(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	got := mustWait(t, srv, 1)[0]
	if !slices.Equal(got.To, []string{"agent@agency.example"}) {
		t.Errorf("envelope recipients %q, want only the agent", got.To)
	}
	m.From, _ = netmail.ParseAddress(mailtest.From)
	checkNotInjected(t, mustParse(t, got.Data), m)
}
