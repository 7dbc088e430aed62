package mailtest

import (
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// errAuthRequired is RFC 4954's answer to MAIL before AUTH.
var errAuthRequired = &smtp.SMTPError{
	Code:         530,
	EnhancedCode: smtp.EnhancedCode{5, 7, 0},
	Message:      "Authentication required",
}

// session is one SMTP session (go-smtp starts a new one after STARTTLS).
type session struct {
	srv      *Server
	conn     *smtp.Conn
	username string
	from     string
	to       []string
}

var _ smtp.AuthSession = (*session)(nil)

func (s *Server) newSession(c *smtp.Conn) (smtp.Session, error) {
	return &session{srv: s, conn: c}, nil
}

func (ss *session) AuthMechanisms() []string {
	if ss.srv.opts.Username == "" {
		return nil
	}
	return []string{sasl.Plain}
}

func (ss *session) Auth(mech string) (sasl.Server, error) {
	if ss.srv.opts.Username == "" {
		return nil, smtp.ErrAuthUnsupported
	}
	if mech != sasl.Plain {
		return nil, smtp.ErrAuthUnknownMechanism
	}
	return sasl.NewPlainServer(func(identity, username, password string) error {
		opts := ss.srv.opts
		if (identity != "" && identity != username) || username != opts.Username || password != opts.Password {
			return smtp.ErrAuthFailed
		}
		ss.username = username
		return nil
	}), nil
}

func (ss *session) Mail(from string, _ *smtp.MailOptions) error {
	if ss.srv.opts.Username != "" && ss.username == "" {
		return errAuthRequired
	}
	if err := ss.srv.injected(Mail); err != nil {
		return err
	}
	ss.from, ss.to = from, nil
	return nil
}

func (ss *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	if err := ss.srv.injected(Rcpt); err != nil {
		return err
	}
	ss.to = append(ss.to, to)
	return nil
}

func (ss *session) Data(r io.Reader) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	if err := ss.srv.injected(Data); err != nil {
		return err
	}
	_, isTLS := ss.conn.TLSConnectionState()
	ss.srv.deliver(Message{From: ss.from, To: ss.to, Data: data, TLS: isTLS, Username: ss.username})
	return nil
}

func (ss *session) Reset() { ss.from, ss.to = "", nil }

func (ss *session) Logout() error { return nil }

// trackingListener remembers the connections it accepts, so that the
// server's shutdown can close them: go-smtp's Shutdown waits for sessions
// to end, and its Close does not wait.
type trackingListener struct {
	net.Listener
	mu     sync.Mutex
	closed bool
	conns  []net.Conn
}

func (l *trackingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		c.Close()
		return nil, net.ErrClosed
	}
	l.conns = append(l.conns, c)
	return c, nil
}

// Close closes the listener once; later calls do nothing.
func (l *trackingListener) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	return l.Listener.Close()
}

func (l *trackingListener) closeConns() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, c := range l.conns {
		c.Close()
	}
	l.conns = nil
}

// tbLogger is go-smtp's error log: tb.Logf until the server has stopped.
type tbLogger struct {
	tb      testing.TB
	mu      sync.Mutex
	stopped bool
}

func (l *tbLogger) Printf(format string, v ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.stopped {
		l.tb.Logf("mailtest: "+format, v...)
	}
}

func (l *tbLogger) Println(v ...any) {
	l.Printf("%s", strings.TrimSuffix(fmt.Sprintln(v...), "\n"))
}

func (l *tbLogger) stop() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stopped = true
}
