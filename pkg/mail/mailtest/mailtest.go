// Package mailtest runs a real SMTP server on 127.0.0.1 for tests of code
// that sends mail with package mail: [Start] it in one of three TLS modes,
// with or without required AUTH PLAIN, point a mail.Sender at
// [Server.URL] (trusting [Server.CertPool]), then read what arrived with
// [Server.Wait] or [Server.Messages]. [Server.Fail] makes it refuse the
// next MAIL, RCPT or DATA commands with a chosen 4xx or 5xx reply.
//
// The server is github.com/emersion/go-smtp; the certificate is a fresh
// self-signed ECDSA P-256 one for 127.0.0.1, ::1 and localhost. It imports
// testing, so only tests may import it.
package mailtest

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/url"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-smtp"
)

// From is the from= address of the URLs Server.URL returns.
const From = "Listgate Leads <leads@listgate.test>"

// Mode is how a Server offers TLS.
type Mode int

const (
	// Plain is a clear connection with no STARTTLS; AUTH, when required,
	// is offered in the clear (the server is on loopback).
	Plain Mode = iota
	// StartTLS is a clear connection that offers STARTTLS; AUTH, when
	// required, is offered only after it.
	StartTLS
	// ImplicitTLS is TLS from the first byte, as on port 465 (smtps://).
	ImplicitTLS
)

// Options configure a Server. The zero value is a Plain server without
// AUTH.
type Options struct {
	// Mode is how the server offers TLS (default Plain).
	Mode Mode
	// Username and Password, when Username is not empty, are the only
	// AUTH PLAIN credentials accepted, and MAIL is refused (530) until a
	// session has authenticated. A wrong pair is answered 535.
	Username, Password string
}

// Message is one message the server accepted.
type Message struct {
	// From is the envelope sender (MAIL FROM).
	From string
	// To are the envelope recipients (RCPT TO).
	To []string
	// Data is the message as received (CRLF line endings, dot-stuffing
	// undone).
	Data []byte
	// TLS reports that the message came over TLS (implicit or STARTTLS).
	TLS bool
	// Username is who the session authenticated as; empty without AUTH.
	Username string
}

// Command names an SMTP command whose reply Fail can choose.
type Command string

// The commands Fail accepts.
const (
	Mail Command = "MAIL"
	Rcpt Command = "RCPT"
	Data Command = "DATA"
)

// Server is a running SMTP server. Its methods are safe for concurrent use.
type Server struct {
	tb     testing.TB
	opts   Options
	pool   *x509.CertPool
	smtp   *smtp.Server
	ln     *trackingListener
	served chan struct{} // closed when Serve has returned
	log    *tbLogger

	mu       sync.Mutex
	messages []Message
	arrived  chan struct{} // closed, and replaced, when a message arrives
	failures map[Command]failure
}

type failure struct{ code, n int }

// Start runs a server on 127.0.0.1 on a free port until tb ends (then it
// closes the listener and every connection and waits for the server's
// goroutines). The server's own log goes to tb.Logf. A failure to start
// fails tb.
func Start(tb testing.TB, opts Options) *Server {
	tb.Helper()
	cert, pool, err := newCertificate()
	if err != nil {
		tb.Fatalf("mailtest: certificate: %v", err)
	}
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("mailtest: listen: %v", err)
	}
	s := &Server{
		tb:       tb,
		opts:     opts,
		pool:     pool,
		ln:       &trackingListener{Listener: raw},
		served:   make(chan struct{}),
		log:      &tbLogger{tb: tb},
		arrived:  make(chan struct{}),
		failures: map[Command]failure{},
	}
	s.smtp = smtp.NewServer(smtp.BackendFunc(s.newSession))
	s.smtp.Domain = "localhost"
	s.smtp.ReadTimeout = time.Minute
	s.smtp.WriteTimeout = time.Minute
	s.smtp.MaxMessageBytes = 10 << 20
	s.smtp.MaxRecipients = 10
	s.smtp.ErrorLog = s.log
	tlsConfig := &tls.Config{Certificates: []tls.Certificate{cert}}
	var l net.Listener = s.ln
	switch opts.Mode {
	case Plain:
		s.smtp.AllowInsecureAuth = true
	case StartTLS:
		s.smtp.TLSConfig = tlsConfig
	case ImplicitTLS:
		s.smtp.TLSConfig = tlsConfig
		l = tls.NewListener(s.ln, tlsConfig)
	default:
		raw.Close()
		tb.Fatalf("mailtest: unknown mode %d", opts.Mode)
	}
	go func() {
		defer close(s.served)
		s.smtp.Serve(l) // returns when the listener is closed
	}()
	tb.Cleanup(s.close)
	return s
}

func (s *Server) close() {
	s.ln.Close()
	<-s.served
	s.ln.closeConns()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.smtp.Shutdown(ctx); err != nil {
		s.tb.Errorf("mailtest: shutdown: %v", err)
	}
	s.log.stop()
}

// Addr is the server's address, 127.0.0.1:port.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// URL returns scheme://[user:password@]127.0.0.1:port?from=… for
// mail.NewSender: the Options' credentials, if any, and From. The scheme
// is the caller's, so that a test may also use the wrong one.
func (s *Server) URL(scheme string) string {
	u := url.URL{Scheme: scheme, Host: s.Addr(), RawQuery: url.Values{"from": {From}}.Encode()}
	if s.opts.Username != "" {
		u.User = url.UserPassword(s.opts.Username, s.opts.Password)
	}
	return u.String()
}

// CertPool returns a new pool holding the server's certificate, for a
// client's tls.Config.RootCAs.
func (s *Server) CertPool() *x509.CertPool { return s.pool.Clone() }

// Messages returns copies of the messages accepted so far, in order.
func (s *Server) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.copyLocked()
}

func (s *Server) copyLocked() []Message {
	out := make([]Message, len(s.messages))
	for i, m := range s.messages {
		m.To = slices.Clone(m.To)
		m.Data = slices.Clone(m.Data)
		out[i] = m
	}
	return out
}

// Wait returns the messages accepted so far once there are at least n, or
// ctx's error (with how many arrived) when ctx is done first.
func (s *Server) Wait(ctx context.Context, n int) ([]Message, error) {
	for {
		s.mu.Lock()
		if len(s.messages) >= n {
			msgs := s.copyLocked()
			s.mu.Unlock()
			return msgs, nil
		}
		arrived, got := s.arrived, len(s.messages)
		s.mu.Unlock()
		select {
		case <-arrived:
		case <-ctx.Done():
			return nil, fmt.Errorf("mailtest: %d of %d messages arrived: %w", got, n, ctx.Err())
		}
	}
}

// Fail makes the server answer the next n cmd commands (counted across all
// connections) with code, 400 to 599, and enhanced code code/100.0.0,
// instead of accepting them; it replaces any failures still pending for
// cmd, and n = 0 cancels them. A refused DATA is read in full first and is
// not in Messages. Call it from the test's goroutine: misuse fails the test.
func (s *Server) Fail(cmd Command, code, n int) {
	s.tb.Helper()
	if cmd != Mail && cmd != Rcpt && cmd != Data {
		s.tb.Fatalf("mailtest: Fail: unknown command %q", cmd)
	}
	if code < 400 || code > 599 || n < 0 {
		s.tb.Fatalf("mailtest: Fail(%s, %d, %d): want a 4xx or 5xx code and n >= 0", cmd, code, n)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failures[cmd] = failure{code: code, n: n}
}

// injected returns the failure cmd must answer now, if any, counting it.
func (s *Server) injected(cmd Command) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := s.failures[cmd]
	if f.n == 0 {
		return nil
	}
	f.n--
	s.failures[cmd] = f
	return &smtp.SMTPError{
		Code:         f.code,
		EnhancedCode: smtp.EnhancedCode{f.code / 100, 0, 0},
		Message:      fmt.Sprintf("mailtest: injected %s failure", cmd),
	}
}

// deliver records m and wakes Wait.
func (s *Server) deliver(m Message) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.messages = append(s.messages, m)
	close(s.arrived)
	s.arrived = make(chan struct{})
}
