package mail

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	netmail "net/mail"
	"net/smtp"
	"os"
	"slices"
	"strings"
	"time"
)

// DefaultTimeout bounds a whole Send (dial, TLS, every command, QUIT)
// unless WithTimeout says otherwise.
const DefaultTimeout = 10 * time.Second

// Sender sends messages through one SMTP server, named by a URL (see the
// package doc). It is safe for concurrent use: each Send opens its own
// connection. Its String method, and so %v, shows the URL with the password
// redacted.
type Sender struct {
	ep       endpoint
	tls      *tls.Config
	timeout  time.Duration
	helo     string
	redacted string
}

// Option configures a Sender in NewSender.
type Option func(*Sender)

// WithTLSConfig sets the TLS client configuration for smtps:// and for
// STARTTLS (tests set RootCAs to their server's certificate). It is cloned;
// an empty ServerName becomes the URL's host. Default: the system roots,
// ServerName the URL's host.
func WithTLSConfig(c *tls.Config) Option {
	return func(s *Sender) { s.tls = c.Clone() }
}

// WithTimeout bounds each Send, dial included (default DefaultTimeout). A
// Send also ends when its context does, whichever comes first. NewSender
// refuses d <= 0.
func WithTimeout(d time.Duration) Option {
	return func(s *Sender) { s.timeout = d }
}

// WithHELO sets the name sent in EHLO/HELO (default: the machine's host
// name when it is a valid domain name, otherwise "localhost"). NewSender
// refuses a name that is not a domain name.
func WithHELO(name string) Option {
	return func(s *Sender) { s.helo = name }
}

// NewSender returns a Sender for rawURL after checking it: the scheme
// (smtp or smtps), the host, the port, the user information (both user and
// password, or neither), the parameters (from= required, starttls= with
// smtp:// only) and the options. Its errors never include the password.
func NewSender(rawURL string, opts ...Option) (*Sender, error) {
	ep, err := parseURL(rawURL)
	if err != nil {
		return nil, err
	}
	s := &Sender{ep: ep, timeout: DefaultTimeout, helo: defaultHELO()}
	for _, opt := range opts {
		opt(s)
	}
	if s.timeout <= 0 {
		return nil, errors.New("mail: timeout must be positive")
	}
	if err := checkDomain(s.helo); err != nil {
		return nil, fmt.Errorf("mail: HELO name: %w", err)
	}
	if s.tls == nil {
		s.tls = &tls.Config{}
	}
	if s.tls.ServerName == "" {
		s.tls.ServerName = ep.host
	}
	s.redacted = Redacted(rawURL)
	return s, nil
}

func defaultHELO() string {
	if name, err := os.Hostname(); err == nil && checkDomain(name) == nil {
		return name
	}
	return "localhost"
}

// From returns a copy of the URL's from= address: the envelope sender of
// every message, and the header From of those that have none.
func (s *Sender) From() *netmail.Address {
	from := *s.ep.from
	return &from
}

// String returns the sender's URL with the password redacted (Redacted).
func (s *Sender) String() string { return s.redacted }

// Send delivers m to m.To: it composes it (Message.Bytes, now, Message-ID
// in the from= domain; a nil From becomes the URL's), dials, reads the
// greeting, says EHLO, upgrades with STARTTLS as the URL says,
// authenticates with AUTH PLAIN when the URL has a user, sends MAIL FROM
// (the URL's from=), RCPT TO and DATA, and QUITs.
//
// Every error is an *Error; IsPermanent tells the caller to stop retrying.
// Once the server has accepted the data, Send returns nil even if QUIT
// fails. AUTH is never attempted over an unencrypted connection except to
// localhost, 127.0.0.1 or ::1. Send returns when ctx is done or the
// Sender's timeout has passed, whichever is first.
func (s *Sender) Send(ctx context.Context, m Message) error {
	if m.From == nil || m.From.Address == "" {
		m.From = s.From()
	}
	data, err := m.Bytes(time.Now(), s.ep.domain)
	if err != nil {
		return &Error{Op: "compose", Permanent: true, Err: err}
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	cv := &conversation{s: s, ctx: ctx}
	err = cv.run(m.To.Address, data)
	if cv.conn != nil {
		cv.conn.Close()
	}
	return err
}

// conversation is one Send's connection.
type conversation struct {
	s    *Sender
	ctx  context.Context
	conn net.Conn
	c    *smtp.Client
}

// fail wraps err as the *Error of step op.
func (cv *conversation) fail(op string, err error) error {
	code, permanent := classify(err)
	if ctxErr := cv.ctx.Err(); ctxErr != nil && code == 0 {
		if !errors.Is(err, ctxErr) {
			err = fmt.Errorf("%w: %w", ctxErr, err)
		}
		permanent = false
	}
	return &Error{Server: cv.s.ep.addr, Op: op, Code: code, Permanent: permanent, Err: err}
}

func (cv *conversation) run(rcpt string, data []byte) error {
	if err := cv.dial(); err != nil {
		return err
	}
	// When ctx ends (its deadline includes the Sender's timeout), every
	// read and write fails at once; ctx.Err() is set by then, so fail
	// reports it.
	stop := context.AfterFunc(cv.ctx, func() { cv.conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	err := cv.converse(rcpt, data)
	var e *Error
	if errors.As(err, &e) && e.Code != 0 && cv.c != nil {
		cv.c.Quit() // the server is answering: end politely, best effort
	}
	return err
}

func (cv *conversation) dial() error {
	d := &net.Dialer{}
	var err error
	if cv.s.ep.implicitTLS {
		td := &tls.Dialer{NetDialer: d, Config: cv.s.tls}
		cv.conn, err = td.DialContext(cv.ctx, "tcp", cv.s.ep.addr)
	} else {
		cv.conn, err = d.DialContext(cv.ctx, "tcp", cv.s.ep.addr)
	}
	if err != nil {
		return cv.fail("dial", err)
	}
	return nil
}

func (cv *conversation) converse(rcpt string, data []byte) error {
	c, err := smtp.NewClient(cv.conn, cv.s.ep.host)
	if err != nil {
		return cv.fail("greeting", err)
	}
	cv.c = c
	if err := c.Hello(cv.s.helo); err != nil {
		return cv.fail("hello", err)
	}
	if err := c.Noop(); err != nil { // sends EHLO first: surfaces its errors
		return cv.fail("hello", err)
	}
	if err := cv.startTLS(); err != nil {
		return err
	}
	if err := cv.auth(); err != nil {
		return err
	}
	if err := c.Mail(cv.s.ep.from.Address); err != nil {
		return cv.fail("mail from", err)
	}
	if err := c.Rcpt(rcpt); err != nil {
		return cv.fail("rcpt to", err)
	}
	w, err := c.Data()
	if err != nil {
		return cv.fail("data", err)
	}
	if _, err := w.Write(data); err != nil {
		return cv.fail("data", err)
	}
	if err := w.Close(); err != nil {
		return cv.fail("data", err)
	}
	c.Quit() // the message is accepted: a failed QUIT changes nothing
	return nil
}

func (cv *conversation) startTLS() error {
	ep := cv.s.ep
	if ep.implicitTLS || ep.starttls == startTLSOff {
		return nil
	}
	if ok, _ := cv.c.Extension("STARTTLS"); !ok {
		if ep.starttls == startTLSRequired {
			return cv.fail("starttls", policyError("the server does not offer STARTTLS and the URL says starttls=required"))
		}
		return nil
	}
	if err := cv.c.StartTLS(cv.s.tls); err != nil {
		return cv.fail("starttls", err)
	}
	return nil
}

func (cv *conversation) auth() error {
	ep := cv.s.ep
	if ep.auth == nil {
		return nil
	}
	if _, encrypted := cv.c.TLSConnectionState(); !encrypted && !isLocalhost(ep.host) {
		return cv.fail("auth", policyError("the connection is not encrypted (no STARTTLS offered, or starttls=off): AUTH refused"))
	}
	switch ok, mechs := cv.c.Extension("AUTH"); {
	case !ok:
		return cv.fail("auth", policyError("the URL has credentials but the server does not offer AUTH"))
	case !slices.Contains(strings.Fields(strings.ToUpper(mechs)), "PLAIN"):
		return cv.fail("auth", policyError(fmt.Sprintf("the server does not offer AUTH PLAIN, only %q", mechs)))
	}
	if err := cv.c.Auth(ep.auth); err != nil {
		return cv.fail("auth", err)
	}
	return nil
}

// isLocalhost is net/smtp's rule for where PLAIN may go unencrypted.
func isLocalhost(host string) bool {
	return host == "localhost" || host == "127.0.0.1" || host == "::1"
}
