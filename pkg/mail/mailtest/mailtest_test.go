package mailtest

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/smtp"
	"net/textproto"
	"net/url"
	"runtime"
	"strings"
	"testing"
	"time"
)

const body = "Subject: hi\r\n\r\nhello\r\n"

// mustClient dials srv (over TLS for ImplicitTLS) and reads its greeting.
func mustClient(tb testing.TB, srv *Server) *smtp.Client {
	tb.Helper()
	var conn net.Conn
	var err error
	if srv.opts.Mode == ImplicitTLS {
		conn, err = tls.Dial("tcp", srv.Addr(), &tls.Config{RootCAs: srv.CertPool(), ServerName: "localhost"})
	} else {
		conn, err = net.Dial("tcp", srv.Addr())
	}
	if err != nil {
		tb.Fatal(err)
	}
	c, err := smtp.NewClient(conn, "127.0.0.1")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close() })
	return c
}

// send runs one transaction on c, returning the first error.
func send(c *smtp.Client, from, to string) error {
	if err := c.Mail(from); err != nil {
		return err
	}
	if err := c.Rcpt(to); err != nil {
		return err
	}
	w, err := c.Data()
	if err != nil {
		return err
	}
	if _, err := w.Write([]byte(body)); err != nil {
		return err
	}
	return w.Close()
}

func replyCode(err error) int {
	var tp *textproto.Error
	if errors.As(err, &tp) {
		return tp.Code
	}
	return 0
}

func waitCtx(tb testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	tb.Cleanup(cancel)
	return ctx
}

func TestModes(t *testing.T) {
	for _, tc := range []struct {
		name     string
		opts     Options
		starttls bool
		wantTLS  bool
		wantUser string
	}{
		{"plain", Options{}, false, false, ""},
		{"plain with auth", Options{Username: "u", Password: "p"}, false, false, "u"},
		{"STARTTLS", Options{Mode: StartTLS}, true, true, ""},
		{"STARTTLS with auth", Options{Mode: StartTLS, Username: "u", Password: "p"}, true, true, "u"},
		{"implicit TLS with auth", Options{Mode: ImplicitTLS, Username: "u", Password: "p"}, false, true, "u"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := Start(t, tc.opts)
			c := mustClient(t, srv)
			if ok, _ := c.Extension("STARTTLS"); ok != tc.starttls {
				t.Fatalf("STARTTLS offered = %v, want %v", ok, tc.starttls)
			}
			if tc.starttls {
				if err := c.StartTLS(&tls.Config{RootCAs: srv.CertPool(), ServerName: "127.0.0.1"}); err != nil {
					t.Fatal(err)
				}
			}
			if tc.opts.Username != "" {
				if err := c.Auth(smtp.PlainAuth("", "u", "p", "127.0.0.1")); err != nil {
					t.Fatal(err)
				}
			}
			if err := send(c, "a@example.com", "b@example.com"); err != nil {
				t.Fatal(err)
			}
			msgs, err := srv.Wait(waitCtx(t), 1)
			if err != nil {
				t.Fatal(err)
			}
			m := msgs[0]
			if m.From != "a@example.com" || len(m.To) != 1 || m.To[0] != "b@example.com" || string(m.Data) != body {
				t.Errorf("got %+v", m)
			}
			if m.TLS != tc.wantTLS || m.Username != tc.wantUser {
				t.Errorf("TLS %v as %q, want TLS %v as %q", m.TLS, m.Username, tc.wantTLS, tc.wantUser)
			}
		})
	}
}

func TestAuth(t *testing.T) {
	srv := Start(t, Options{Mode: StartTLS, Username: "u", Password: "p"})
	c := mustClient(t, srv)
	if ok, _ := c.Extension("AUTH"); ok {
		t.Error("AUTH offered before STARTTLS")
	}
	if err := c.StartTLS(&tls.Config{RootCAs: srv.CertPool(), ServerName: "localhost"}); err != nil {
		t.Fatal(err)
	}
	if err := send(c, "a@example.com", "b@example.com"); replyCode(err) != 530 {
		t.Errorf("MAIL before AUTH: %v, want 530", err)
	}
	if err := c.Auth(smtp.PlainAuth("", "u", "wrong", "127.0.0.1")); replyCode(err) != 535 {
		t.Errorf("wrong password: %v, want 535", err)
	}
}

func TestFailCountsDown(t *testing.T) {
	srv := Start(t, Options{})
	srv.Fail(Rcpt, 451, 2)
	srv.Fail(Data, 550, 1)
	c := mustClient(t, srv)
	for i, want := range []int{451, 451, 550, 0} {
		if err := send(c, "a@example.com", "b@example.com"); replyCode(err) != want || (want == 0 && err != nil) {
			t.Errorf("send %d: %v, want code %d", i+1, err, want)
		}
		if err := c.Reset(); err != nil {
			t.Fatal(err)
		}
	}
	if msgs := srv.Messages(); len(msgs) != 1 {
		t.Errorf("%d messages, want 1 (the refused ones are not kept)", len(msgs))
	}
}

func TestWait(t *testing.T) {
	srv := Start(t, Options{})
	got := make(chan error, 1)
	go func() {
		_, err := srv.Wait(waitCtx(t), 2)
		got <- err
	}()
	c := mustClient(t, srv)
	for range 2 {
		if err := send(c, "a@example.com", "b@example.com"); err != nil {
			t.Fatal(err)
		}
	}
	if err := <-got; err != nil {
		t.Fatalf("Wait: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := srv.Wait(ctx, 3); !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "2 of 3") {
		t.Errorf("Wait for a third = %v, want context.Canceled and 2 of 3", err)
	}
}

func TestURL(t *testing.T) {
	srv := Start(t, Options{Username: "us er", Password: "p@ss:w/d"})
	u, err := url.Parse(srv.URL("smtps"))
	if err != nil {
		t.Fatal(err)
	}
	password, _ := u.User.Password()
	if u.Scheme != "smtps" || u.Host != srv.Addr() || u.User.Username() != "us er" || password != "p@ss:w/d" || u.Query().Get("from") != From {
		t.Errorf("URL = %s", u)
	}
	if got := Start(t, Options{}).URL("smtp"); strings.Contains(got, "@127") {
		t.Errorf("URL without credentials = %s", got)
	}
}

func TestCleanupClosesEverything(t *testing.T) {
	before := runtime.NumGoroutine()
	var conn net.Conn
	t.Cleanup(func() {
		if conn != nil {
			conn.Close()
		}
	})
	t.Run("server", func(t *testing.T) {
		srv := Start(t, Options{Mode: StartTLS})
		var err error
		if conn, err = net.Dial("tcp", srv.Addr()); err != nil { // left open
			t.Fatal(err)
		}
		if _, err := textproto.NewReader(bufio.NewReader(conn)).ReadLine(); err != nil {
			t.Fatal(err)
		}
	})
	// The server's goroutines have returned; give them the moment they need
	// to exit.
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("%d goroutines, %d before:\n%s", runtime.NumGoroutine(), before, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}
