package mail_test

import (
	"bytes"
	netmail "net/mail"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/listgate/listgate/pkg/mail"
)

var (
	longLine = strings.Repeat("Spacious family home, north-facing garden — près du café, 日当たり良好. ", 12)
	leadText = "Hello Ånsgar,\n\nZoë would like to inspect 12 Rue de l'Église on Saturday.\n" + longLine + "\r\nTrailing spaces here   \nLast line without a break"
	leadHTML = "<p>Hello Ånsgar,</p>\n<p>Zoë would like to inspect <b>12 Rue de l'Église</b>.</p>\n<p>" + longLine + "</p>"
	// leadSubject is non-ASCII and longer than a header line.
	leadSubject = "Enquiry: 12 Rue de l'Église — Zoë ☀ would like to inspect on Saturday morning, please call back"
)

// leadMessage is a lead as the origin would send it: an enquirer in
// Reply-To whose name is full of specials.
func leadMessage() mail.Message {
	return mail.Message{
		To:      &netmail.Address{Name: "Ånsgar Żółw (Agent)", Address: "agent@agency.example"},
		ReplyTo: &netmail.Address{Name: `Zoë "Sam" O'Brien, <boss@evil.example>`, Address: "zoe.obrien+home@buyer.example"},
		Subject: leadSubject,
		Text:    leadText,
		HTML:    leadHTML,
		Headers: map[string]string{"X-Listgate-Lead-Id": "ld_01J9ZQ"},
	}
}

var messageID = regexp.MustCompile(`^<[A-Z2-7]{26}@listgate\.test>$`)

// checkLead checks everything a lead message must carry once read back.
func checkLead(tb testing.TB, r received, m mail.Message, from *netmail.Address, sent time.Time) {
	tb.Helper()
	want := []string{"Content-Type", "Date", "From", "Message-Id", "Mime-Version", "Reply-To", "Subject", "To", "X-Listgate-Lead-Id"}
	if got := r.headerNames(); !slices.Equal(got, want) {
		tb.Errorf("header names = %q, want %q", got, want)
	}
	for _, tc := range []addressField{{"From", from}, {"To", m.To}, {"Reply-To", m.ReplyTo}} {
		if got := r.mustAddress(tb, tc.key); *got != *tc.want {
			tb.Errorf("%s = %q <%s>, want %q <%s>", tc.key, got.Name, got.Address, tc.want.Name, tc.want.Address)
		}
	}
	if got := r.mustSubject(tb); got != m.Subject {
		tb.Errorf("Subject = %q, want %q", got, m.Subject)
	}
	if raw := r.header.Get("Subject"); !strings.HasPrefix(raw, "=?utf-8?q?") {
		tb.Errorf("raw Subject %q is not Q-encoded", raw)
	}
	date, err := r.header.Date()
	if err != nil || date.Before(sent.Add(-time.Second)) || date.After(sent.Add(time.Minute)) {
		tb.Errorf("Date %q (%v): want about %v", r.header.Get("Date"), err, sent)
	}
	if id := r.header.Get("Message-Id"); !messageID.MatchString(id) {
		tb.Errorf("Message-ID = %q, want %v", id, messageID)
	}
	if got := r.header.Get("Mime-Version"); got != "1.0" {
		tb.Errorf("MIME-Version = %q", got)
	}
	if got := r.header.Get("Content-Type"); !strings.HasPrefix(got, "multipart/alternative; boundary=") {
		tb.Errorf("Content-Type = %q", got)
	}
	if got := r.header.Get("X-Listgate-Lead-Id"); got != m.Headers["X-Listgate-Lead-Id"] {
		tb.Errorf("X-Listgate-Lead-Id = %q", got)
	}
	wantParts := []part{
		{contentType: "text/plain; charset=utf-8", body: crlf(m.Text)},
		{contentType: "text/html; charset=utf-8", body: crlf(m.HTML)},
	}
	if !slices.Equal(r.parts, wantParts) {
		tb.Errorf("parts:\n got %q\nwant %q", r.parts, wantParts)
	}
}

func mustBytes(tb testing.TB, m mail.Message, now time.Time) []byte {
	tb.Helper()
	raw, err := m.Bytes(now, "listgate.test")
	if err != nil {
		tb.Fatalf("Bytes: %v", err)
	}
	return raw
}

func TestBytesComposesALead(t *testing.T) {
	from := &netmail.Address{Name: "Listgate Leads", Address: "leads@listgate.test"}
	m := leadMessage()
	m.From = from
	now := time.Date(2026, 3, 14, 9, 26, 53, 0, time.FixedZone("AEDT", 11*3600))
	raw := mustBytes(t, m, now)
	checkLead(t, mustParse(t, raw), m, from, now)
	if !bytes.HasPrefix(raw, []byte("Date: Sat, 14 Mar 2026 09:26:53 +1100\r\n")) {
		t.Errorf("Date is not RFC 1123 with a numeric zone:\n%s", raw)
	}
	header, _, _ := bytes.Cut(raw, []byte("\r\n\r\n"))
	for _, line := range strings.Split(string(header), "\r\n") {
		if len(line) > 78 {
			t.Errorf("header line of %d characters (want folded to 78): %q", len(line), line)
		}
	}
}

func TestBytesMessageIDsDiffer(t *testing.T) {
	m := leadMessage()
	m.From = &netmail.Address{Address: "leads@listgate.test"}
	now := time.Now()
	a := mustParse(t, mustBytes(t, m, now)).header.Get("Message-Id")
	b := mustParse(t, mustBytes(t, m, now)).header.Get("Message-Id")
	if a == b {
		t.Errorf("two messages share Message-ID %s", a)
	}
}

func TestBytesWithoutHTMLIsSingleTextPart(t *testing.T) {
	m := mail.Message{
		From:    &netmail.Address{Address: "leads@listgate.test"},
		To:      &netmail.Address{Address: "agent@agency.example"},
		ReplyTo: &netmail.Address{Name: "Nobody"}, // no Address: no Reply-To
		Subject: "Plain",
		Text:    leadText,
	}
	r := mustParse(t, mustBytes(t, m, time.Now()))
	if got := r.header.Get("Content-Type"); got != "text/plain; charset=utf-8" {
		t.Errorf("Content-Type = %q", got)
	}
	if _, ok := r.header["Reply-To"]; ok {
		t.Errorf("Reply-To written for an empty address: %q", r.header.Get("Reply-To"))
	}
	if want := crlf(leadText + "\n"); len(r.parts) != 1 || r.parts[0].body != want {
		t.Errorf("body = %q, want %q", r.parts, want)
	}
}

func TestBytesLongASCIISubjects(t *testing.T) {
	for _, tc := range []struct {
		name, subject string
		encoded       bool
	}{
		{"many short words fold", strings.Repeat("three bedroom house ", 20), false},
		{"one long word is encoded", strings.Repeat("x", 300), true},
		{"encoded-word lookalike is encoded", "=?utf-8?q?=0D=0ABcc:_victim@evil.example?=", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := mail.Message{
				From:    &netmail.Address{Address: "leads@listgate.test"},
				To:      &netmail.Address{Address: "agent@agency.example"},
				Subject: tc.subject,
			}
			raw := mustBytes(t, m, time.Now())
			r := mustParse(t, raw)
			if got, want := r.mustSubject(t), strings.TrimSpace(tc.subject); got != want {
				t.Errorf("Subject = %q, want %q", got, want)
			}
			if got := strings.HasPrefix(r.header.Get("Subject"), "=?utf-8?b?"); got != tc.encoded {
				t.Errorf("raw Subject %q: encoded = %v, want %v", r.header.Get("Subject"), got, tc.encoded)
			}
			header, _, _ := bytes.Cut(raw, []byte("\r\n\r\n"))
			for _, line := range strings.Split(string(header), "\r\n") {
				if len(line) > 78 {
					t.Errorf("header line of %d characters: %q", len(line), line)
				}
			}
		})
	}
}

func TestBytesRefuses(t *testing.T) {
	valid := func() mail.Message {
		return mail.Message{
			From: &netmail.Address{Address: "leads@listgate.test"},
			To:   &netmail.Address{Address: "agent@agency.example"},
		}
	}
	for _, tc := range []struct {
		name string
		edit func(*mail.Message)
	}{
		{"no To", func(m *mail.Message) { m.To = nil }},
		{"empty To", func(m *mail.Message) { m.To = &netmail.Address{Name: "Agent"} }},
		{"no From", func(m *mail.Message) { m.From = nil }},
		{"To without @", func(m *mail.Message) { m.To.Address = "agent" }},
		{"To with two @", func(m *mail.Message) { m.To.Address = "a@b@agency.example" }},
		{"To with CRLF", func(m *mail.Message) { m.To.Address = "agent@agency.example\r\nBcc: victim@evil.example" }},
		{"To with LF", func(m *mail.Message) { m.To.Address = "agent@agency.example\nBcc:victim@evil.example" }},
		{"To with NUL", func(m *mail.Message) { m.To.Address = "agent@agency.example\x00" }},
		{"To with angle brackets", func(m *mail.Message) { m.To.Address = "agent@agency.example>, <victim@evil.example" }},
		{"To with a comma", func(m *mail.Message) { m.To.Address = "agent@agency.example,victim@evil.example" }},
		{"To with a space", func(m *mail.Message) { m.To.Address = "agent @agency.example" }},
		{"To non-ASCII", func(m *mail.Message) { m.To.Address = "zoë@agency.example" }},
		{"To quoted local part", func(m *mail.Message) { m.To.Address = `"a b"@agency.example` }},
		{"To domain literal", func(m *mail.Message) { m.To.Address = "agent@[192.0.2.1]" }},
		{"To double dot", func(m *mail.Message) { m.To.Address = "a..b@agency.example" }},
		{"To too long", func(m *mail.Message) { m.To.Address = strings.Repeat("a", 250) + "@x.example" }},
		{"Reply-To with CRLF", func(m *mail.Message) {
			m.ReplyTo = &netmail.Address{Name: "Sam", Address: "sam@buyer.example\r\nBcc: victim@evil.example"}
		}},
		{"From with CR", func(m *mail.Message) { m.From.Address = "leads@listgate.test\rBcc: x@y.example" }},
		{"reserved header Bcc", func(m *mail.Message) { m.Headers = map[string]string{"Bcc": "victim@evil.example"} }},
		{"reserved header any case", func(m *mail.Message) { m.Headers = map[string]string{"content-TYPE": "text/html"} }},
		{"reserved header Resent-To", func(m *mail.Message) { m.Headers = map[string]string{"Resent-To": "x@y.example"} }},
		{"reserved header Subject", func(m *mail.Message) { m.Headers = map[string]string{"subject": "again"} }},
		{"header name with colon", func(m *mail.Message) { m.Headers = map[string]string{"X-A: b\r\nBcc": "x"} }},
		{"header name with space", func(m *mail.Message) { m.Headers = map[string]string{"X A": "x"} }},
		{"header name empty", func(m *mail.Message) { m.Headers = map[string]string{"": "x"} }},
		{"header twice", func(m *mail.Message) { m.Headers = map[string]string{"X-Lead": "1", "x-lead": "2"} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := valid()
			tc.edit(&m)
			if raw, err := m.Bytes(time.Now(), "listgate.test"); err == nil {
				t.Fatalf("Bytes succeeded:\n%s", raw)
			}
		})
	}
}

func TestBytesRefusesMessageIDDomain(t *testing.T) {
	m := mail.Message{
		From: &netmail.Address{Address: "leads@listgate.test"},
		To:   &netmail.Address{Address: "agent@agency.example"},
	}
	for _, domain := range []string{"", "listgate test", "listgate.test>\r\nBcc: x", "listgate..test", "[192.0.2.1]", "lïstgate.test"} {
		if raw, err := m.Bytes(time.Now(), domain); err == nil {
			t.Errorf("Bytes with Message-ID domain %q succeeded:\n%s", domain, raw)
		}
	}
}
