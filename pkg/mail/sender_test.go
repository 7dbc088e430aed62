package mail_test

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	netmail "net/mail"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/listgate/listgate/pkg/mail"
	"github.com/listgate/listgate/pkg/mail/mailtest"
)

const (
	testUser     = "leads-mailer"
	testPassword = "pA55:w0rd/with@specials%-Zq9"
)

// mustSender builds a Sender for srv's URL with the given scheme, trusting
// srv's certificate, with the URL edited by edit (if not nil).
func mustSender(tb testing.TB, srv *mailtest.Server, scheme string, edit func(*url.URL), opts ...mail.Option) *mail.Sender {
	tb.Helper()
	u, err := url.Parse(srv.URL(scheme))
	if err != nil {
		tb.Fatal(err)
	}
	if edit != nil {
		edit(u)
	}
	opts = append([]mail.Option{mail.WithTLSConfig(&tls.Config{RootCAs: srv.CertPool()})}, opts...)
	s, err := mail.NewSender(u.String(), opts...)
	if err != nil {
		tb.Fatalf("NewSender(%s): %v", mail.Redacted(u.String()), err)
	}
	return s
}

func withQuery(key, value string) func(*url.URL) {
	return func(u *url.URL) {
		q := u.Query()
		q.Set(key, value)
		u.RawQuery = q.Encode()
	}
}

func mustWait(tb testing.TB, srv *mailtest.Server, n int) []mailtest.Message {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	msgs, err := srv.Wait(ctx, n)
	if err != nil {
		tb.Fatal(err)
	}
	return msgs
}

// mustSendError sends m through s and returns its *mail.Error, failing tb
// if Send succeeded or returned another type, or if the error's text holds
// the test password.
func mustSendError(tb testing.TB, s *mail.Sender, m mail.Message) *mail.Error {
	tb.Helper()
	err := s.Send(context.Background(), m)
	if err == nil {
		tb.Fatal("Send succeeded")
	}
	if strings.Contains(err.Error(), testPassword) || strings.Contains(err.Error(), "pA55") {
		tb.Errorf("error shows the password: %v", err)
	}
	var e *mail.Error
	if !errors.As(err, &e) {
		tb.Fatalf("Send error %T is not a *mail.Error: %v", err, err)
	}
	if got := mail.IsPermanent(err); got != e.Permanent {
		tb.Errorf("IsPermanent = %v, Error.Permanent = %v", got, e.Permanent)
	}
	return e
}

func TestSendDeliversInEveryMode(t *testing.T) {
	for _, tc := range []struct {
		name     string
		opts     mailtest.Options
		scheme   string
		wantTLS  bool
		wantUser string
	}{
		{"STARTTLS with AUTH", mailtest.Options{Mode: mailtest.StartTLS, Username: testUser, Password: testPassword}, "smtp", true, testUser},
		{"implicit TLS with AUTH", mailtest.Options{Mode: mailtest.ImplicitTLS, Username: testUser, Password: testPassword}, "smtps", true, testUser},
		{"plain to loopback without AUTH", mailtest.Options{Mode: mailtest.Plain}, "smtp", false, ""},
		{"plain to loopback with AUTH", mailtest.Options{Mode: mailtest.Plain, Username: testUser, Password: testPassword}, "smtp", false, testUser},
		{"STARTTLS without AUTH", mailtest.Options{Mode: mailtest.StartTLS}, "smtp", true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := mailtest.Start(t, tc.opts)
			s := mustSender(t, srv, tc.scheme, nil)
			m := leadMessage()
			sent := time.Now()
			if err := s.Send(context.Background(), m); err != nil {
				t.Fatalf("Send: %v", err)
			}
			msgs := mustWait(t, srv, 1)
			got := msgs[0]
			if got.From != "leads@listgate.test" || !slices.Equal(got.To, []string{"agent@agency.example"}) {
				t.Errorf("envelope from %q to %q, want leads@listgate.test to [agent@agency.example]", got.From, got.To)
			}
			if got.TLS != tc.wantTLS || got.Username != tc.wantUser {
				t.Errorf("arrived with TLS %v as %q, want TLS %v as %q", got.TLS, got.Username, tc.wantTLS, tc.wantUser)
			}
			from, _ := netmail.ParseAddress(mailtest.From)
			checkLead(t, mustParse(t, got.Data), m, from, sent)
		})
	}
}

func TestSendKeepsTheMessagesFrom(t *testing.T) {
	srv := mailtest.Start(t, mailtest.Options{})
	s := mustSender(t, srv, "smtp", nil)
	m := leadMessage()
	m.From = &netmail.Address{Name: "Ånsgar via Listgate", Address: "agent-ansgar@listgate.test"}
	if err := s.Send(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	got := mustWait(t, srv, 1)[0]
	if got.From != "leads@listgate.test" {
		t.Errorf("envelope from %q, want the URL's from=", got.From)
	}
	if from := mustParse(t, got.Data).mustAddress(t, "From"); *from != *m.From {
		t.Errorf("From = %v, want %v", from, m.From)
	}
}

func TestSendFailures(t *testing.T) {
	for _, tc := range []struct {
		name          string
		cmd           mailtest.Command
		code          int
		wantOp        string
		wantPermanent bool
	}{
		{"451 to RCPT is temporary", mailtest.Rcpt, 451, "rcpt to", false},
		{"550 to RCPT is permanent", mailtest.Rcpt, 550, "rcpt to", true},
		{"452 to DATA is temporary", mailtest.Data, 452, "data", false},
		{"550 to DATA is permanent", mailtest.Data, 550, "data", true},
		{"421 to MAIL is temporary", mailtest.Mail, 421, "mail from", false},
		{"553 to MAIL is permanent", mailtest.Mail, 553, "mail from", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := mailtest.Start(t, mailtest.Options{Mode: mailtest.StartTLS, Username: testUser, Password: testPassword})
			s := mustSender(t, srv, "smtp", nil)
			srv.Fail(tc.cmd, tc.code, 1)
			e := mustSendError(t, s, leadMessage())
			if e.Op != tc.wantOp || e.Code != tc.code || e.Permanent != tc.wantPermanent {
				t.Errorf("got Op %q Code %d Permanent %v, want %q %d %v: %v", e.Op, e.Code, e.Permanent, tc.wantOp, tc.code, tc.wantPermanent, e)
			}
			if !strings.Contains(e.Error(), srv.Addr()) || !strings.Contains(e.Error(), fmt.Sprint(tc.code)) {
				t.Errorf("error %q does not name the server and the code", e)
			}
			if msgs := srv.Messages(); len(msgs) != 0 {
				t.Errorf("%d messages arrived", len(msgs))
			}
			// The failure was for one command: the next Send goes through.
			if err := s.Send(context.Background(), leadMessage()); err != nil {
				t.Fatalf("second Send: %v", err)
			}
			mustWait(t, srv, 1)
		})
	}
}

func TestSendRefusals(t *testing.T) {
	wrongPassword := func(u *url.URL) { u.User = url.UserPassword(testUser, "pA55-wrong") }
	// [::ffff:127.0.0.1] reaches the loopback server under a name that
	// net/smtp and this package do not treat as localhost.
	mapped := func(u *url.URL) { u.Host = "[::ffff:127.0.0.1]:" + u.Port() }
	withAuth := mailtest.Options{Mode: mailtest.StartTLS, Username: testUser, Password: testPassword}
	for _, tc := range []struct {
		name          string
		opts          mailtest.Options
		scheme        string
		edit          func(*url.URL)
		untrusted     bool // use the system roots, which do not hold the test certificate
		wantOp        string
		wantCode      int
		wantPermanent bool
		wantText      string
	}{
		{"wrong password", withAuth, "smtp", wrongPassword, false, "auth", 535, true, "535"},
		{"STARTTLS with an untrusted certificate", withAuth, "smtp", nil, true, "starttls", 0, true, "certificate"},
		{"implicit TLS with an untrusted certificate", mailtest.Options{Mode: mailtest.ImplicitTLS}, "smtps", nil, true, "dial", 0, true, "certificate"},
		{"STARTTLS required but not offered", mailtest.Options{}, "smtp", withQuery("starttls", "required"), false, "starttls", 0, true, "does not offer STARTTLS"},
		{"AUTH refused in the clear to a non-local name", mailtest.Options{Username: testUser, Password: testPassword}, "smtp", mapped, false, "auth", 0, true, "not encrypted"},
		{"AUTH refused with starttls=off to a non-local name", withAuth, "smtp", func(u *url.URL) { mapped(u); withQuery("starttls", "off")(u) }, false, "auth", 0, true, "not encrypted"},
		{"credentials but no AUTH offered", mailtest.Options{Mode: mailtest.StartTLS}, "smtp", func(u *url.URL) { u.User = url.UserPassword(testUser, testPassword) }, false, "auth", 0, true, "does not offer AUTH"},
		{"AUTH required but no credentials", withAuth, "smtp", func(u *url.URL) { u.User = nil }, false, "mail from", 530, true, "530"},
		{"smtps to a STARTTLS server", withAuth, "smtps", nil, false, "dial", 0, false, "tls"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := mailtest.Start(t, tc.opts)
			opts := []mail.Option{mail.WithTimeout(5 * time.Second)}
			if tc.untrusted {
				opts = append(opts, mail.WithTLSConfig(&tls.Config{}))
			}
			s := mustSender(t, srv, tc.scheme, tc.edit, opts...)
			e := mustSendError(t, s, leadMessage())
			if e.Op != tc.wantOp || e.Code != tc.wantCode || e.Permanent != tc.wantPermanent || !strings.Contains(e.Error(), tc.wantText) {
				t.Errorf("got Op %q Code %d Permanent %v, want %q %d %v with %q: %v", e.Op, e.Code, e.Permanent, tc.wantOp, tc.wantCode, tc.wantPermanent, tc.wantText, e)
			}
			if msgs := srv.Messages(); len(msgs) != 0 {
				t.Errorf("%d messages arrived", len(msgs))
			}
		})
	}
}

func TestSendStartTLSOffSendsInTheClear(t *testing.T) {
	srv := mailtest.Start(t, mailtest.Options{Mode: mailtest.StartTLS})
	s := mustSender(t, srv, "smtp", withQuery("starttls", "off"))
	if err := s.Send(context.Background(), leadMessage()); err != nil {
		t.Fatal(err)
	}
	if got := mustWait(t, srv, 1)[0]; got.TLS {
		t.Error("starttls=off used TLS")
	}
}

func TestSendUntrustedCertificateIsACertificateError(t *testing.T) {
	srv := mailtest.Start(t, mailtest.Options{Mode: mailtest.StartTLS})
	s := mustSender(t, srv, "smtp", nil, mail.WithTLSConfig(&tls.Config{}))
	var verify *tls.CertificateVerificationError
	if err := s.Send(context.Background(), leadMessage()); !errors.As(err, &verify) {
		t.Errorf("Send = %v, want a *tls.CertificateVerificationError inside", err)
	}
}

func TestSendToAClosedPortIsTemporary(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	s, err := mail.NewSender("smtp://" + addr + "?from=leads@listgate.test")
	if err != nil {
		t.Fatal(err)
	}
	e := mustSendError(t, s, leadMessage())
	if e.Op != "dial" || e.Code != 0 || e.Permanent || !strings.Contains(e.Error(), addr) {
		t.Errorf("got Op %q Code %d Permanent %v, want a temporary dial error naming %s: %v", e.Op, e.Code, e.Permanent, addr, e)
	}
}

// silentServer accepts connections and never says a word, until the test
// ends.
func silentServer(tb testing.TB) string {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		var conns []net.Conn
		defer func() {
			for _, c := range conns {
				c.Close()
			}
		}()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
		}
	}()
	tb.Cleanup(func() { l.Close(); <-done })
	return l.Addr().String()
}

func TestSendEndsWithItsContextOrTimeout(t *testing.T) {
	addr := silentServer(t)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name    string
		ctx     context.Context
		timeout time.Duration
		want    error
	}{
		{"timeout", context.Background(), 100 * time.Millisecond, context.DeadlineExceeded},
		{"context deadline", func() context.Context {
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			t.Cleanup(cancel)
			return ctx
		}(), time.Minute, context.DeadlineExceeded},
		{"cancelled context", cancelled, time.Minute, context.Canceled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := mail.NewSender("smtp://"+addr+"?from=leads@listgate.test", mail.WithTimeout(tc.timeout))
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			err = s.Send(tc.ctx, leadMessage())
			if !errors.Is(err, tc.want) || mail.IsPermanent(err) {
				t.Errorf("Send = %v (permanent %v), want temporary %v", err, mail.IsPermanent(err), tc.want)
			}
			if elapsed := time.Since(start); elapsed > 5*time.Second {
				t.Errorf("Send took %v", elapsed)
			}
		})
	}
}

func TestSendInvalidMessageIsPermanent(t *testing.T) {
	srv := mailtest.Start(t, mailtest.Options{})
	s := mustSender(t, srv, "smtp", nil)
	m := leadMessage()
	m.ReplyTo.Address = "zoe@buyer.example\r\nBcc: victim@evil.example"
	e := mustSendError(t, s, m)
	if e.Op != "compose" || !e.Permanent || e.Server != "" {
		t.Errorf("got Op %q Permanent %v Server %q, want a permanent compose error: %v", e.Op, e.Permanent, e.Server, e)
	}
}

func TestSenderDoesNotShowThePassword(t *testing.T) {
	srv := mailtest.Start(t, mailtest.Options{Mode: mailtest.StartTLS, Username: testUser, Password: testPassword})
	s := mustSender(t, srv, "smtp", nil)
	for _, shown := range []string{fmt.Sprint(s), fmt.Sprintf("%+v", s), fmt.Sprintf("%#v", s), fmt.Sprintf("%+v", *s), s.String()} {
		if strings.Contains(shown, "pA55") || strings.Contains(shown, url.QueryEscape(testPassword)) {
			t.Errorf("shows the password: %s", shown)
		}
	}
	if got := s.String(); !strings.Contains(got, testUser+":xxxxx@") {
		t.Errorf("String() = %q, want the redacted URL", got)
	}
}
