package mail_test

import (
	"strings"
	"testing"

	"github.com/listgate/listgate/pkg/mail"
)

func TestNewSenderAccepts(t *testing.T) {
	for _, tc := range []struct {
		name, url         string
		wantName, wantAdd string
		wantString        string
	}{
		{
			"plain relay, from escaped",
			"smtp://relay.internal:25?from=leads%40example.com",
			"", "leads@example.com",
			"smtp://relay.internal:25?from=leads%40example.com",
		},
		{
			"from with a name, not escaped",
			"smtp://relay.internal:25?from=Listgate%20Leads%20<leads@example.com>",
			"Listgate Leads", "leads@example.com",
			"smtp://relay.internal:25?from=Listgate%20Leads%20<leads@example.com>",
		},
		{
			"submission with credentials and starttls=required",
			"smtp://apikey:s3cret%2Fpass@smtp.example.com:587?from=leads%40example.com&starttls=required",
			"", "leads@example.com",
			"smtp://apikey:xxxxx@smtp.example.com:587?from=leads%40example.com&starttls=required",
		},
		{
			"implicit TLS, default port",
			"smtps://apikey:s3cret@smtp.example.com?from=leads%40example.com",
			"", "leads@example.com",
			"smtps://apikey:xxxxx@smtp.example.com?from=leads%40example.com",
		},
		{
			"IPv6 host, trailing slash, starttls=off",
			"smtp://[::1]:2525/?starttls=off&from=leads%40example.com",
			"", "leads@example.com",
			"smtp://[::1]:2525/?starttls=off&from=leads%40example.com",
		},
		{
			"upper-case scheme",
			"SMTP://relay.internal?from=leads%40example.com&starttls=auto",
			"", "leads@example.com",
			"smtp://relay.internal?from=leads%40example.com&starttls=auto",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := mail.NewSender(tc.url)
			if err != nil {
				t.Fatalf("NewSender: %v", err)
			}
			if from := s.From(); from.Name != tc.wantName || from.Address != tc.wantAdd {
				t.Errorf("From() = %q <%s>, want %q <%s>", from.Name, from.Address, tc.wantName, tc.wantAdd)
			}
			if got := s.String(); got != tc.wantString {
				t.Errorf("String() = %q, want %q", got, tc.wantString)
			}
		})
	}
}

func TestNewSenderRejects(t *testing.T) {
	for _, tc := range []struct {
		name, url, want string
		opts            []mail.Option
	}{
		{"unknown scheme", "http://host:25?from=a%40example.com", `unknown scheme "http"`, nil},
		{"no scheme", "host:25?from=a%40example.com", "unknown scheme", nil},
		{"empty", "", "unknown scheme", nil},
		{"missing host", "smtp://:25?from=a%40example.com", "missing host", nil},
		{"missing host with user", "smtp://user:pA55Zq9@/?from=a%40example.com", "missing host", nil},
		{"opaque", "smtp:host:25?from=a%40example.com", "missing host", nil},
		{"missing from", "smtp://host:25", "from= is required", nil},
		{"empty from", "smtp://host:25?from=", "from= is required", nil},
		{"from twice", "smtp://host:25?from=a%40example.com&from=b%40example.com", "more than once", nil},
		{"bad from", "smtp://host:25?from=not-an-address", "from=", nil},
		{"from with CRLF", "smtp://host:25?from=a%40example.com%0D%0ABcc:%20b%40example.com", "from=", nil},
		{"from with a domain literal", "smtp://host:25?from=a%40%5B192.0.2.1%5D", "from=", nil},
		{"from with two addresses", "smtp://host:25?from=a%40example.com,b%40example.com", "from=", nil},
		{"unknown parameter", "smtp://host:25?from=a%40example.com&form=x", "unknown parameter", nil},
		{"bad starttls", "smtp://host:25?from=a%40example.com&starttls=maybe", "starttls= must be auto, required or off", nil},
		{"starttls with smtps", "smtps://host?from=a%40example.com&starttls=required", "applies only to smtp://", nil},
		{"user without password", "smtp://user@host:25?from=a%40example.com", "without password", nil},
		{"empty password", "smtp://user:@host:25?from=a%40example.com", "without password", nil},
		{"password without user", "smtp://:pA55Zq9@host:25?from=a%40example.com", "empty user name", nil},
		{"port out of range", "smtp://host:70000?from=a%40example.com", "invalid port", nil},
		{"port zero", "smtp://host:0?from=a%40example.com", "invalid port", nil},
		{"path", "smtp://host:25/inbox?from=a%40example.com", "unexpected path", nil},
		{"fragment", "smtp://host:25?from=a%40example.com#x", "unexpected path or fragment", nil},
		// A password with an unescaped special character must not be
		// echoed, whatever part of the URL it spills into.
		{"unescaped / in password", "smtp://user:pA55/Zq9@host:25?from=a%40example.com", "", nil},
		{"unescaped # in password", "smtp://user:pA55#Zq9@host:25?from=a%40example.com", "", nil},
		{"unescaped ? in password", "smtp://user:12?pA55=x@host:25&from=a%40example.com", "", nil},
		{"unescaped space in password", "smtp://user:pA55 Zq9@host:25?from=a%40example.com", "cannot parse", nil},
		{"bad timeout", "smtp://host:25?from=a%40example.com", "timeout must be positive", []mail.Option{mail.WithTimeout(0)}},
		{"bad HELO", "smtp://host:25?from=a%40example.com", "HELO", []mail.Option{mail.WithHELO("bad\r\nname")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := mail.NewSender(tc.url, tc.opts...)
			if err == nil {
				t.Fatalf("NewSender succeeded: %v", s)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not say %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "pA55") || strings.Contains(err.Error(), "Zq9") {
				t.Errorf("error %q shows the password", err)
			}
		})
	}
}

func TestRedacted(t *testing.T) {
	for _, tc := range []struct{ url, want string }{
		{"smtp://user:pA55Zq9@host:587?from=a%40example.com", "smtp://user:xxxxx@host:587?from=a%40example.com"},
		{"smtps://host?from=a%40example.com", "smtps://host?from=a%40example.com"},
		{"smtp://host:25", "smtp://host:25"},
		// Not a valid sender URL: everything before the last @ goes.
		{"smtp://user:pA55/Zq9@host:25?from=a%40example.com", "smtp://xxxxx@host:25?from=a%40example.com"},
		{"smtp://user:pA55/Zq9@host:25?from=a@example.com", "smtp://xxxxx@example.com"},
		{"smtp://user:12?pA55=x@host:25", "smtp://xxxxx@host:25"},
		{"smtp://user:pA55 Zq9@host:25", "smtp://xxxxx@host:25"},
		{"user:pA55Zq9@host:25", "xxxxx@host:25"},
		{"smtp://user:pA55Zq9@host:25?form=x", "smtp://xxxxx@host:25?form=x"},
		{"not a URL", "not a URL"},
	} {
		if got := mail.Redacted(tc.url); got != tc.want {
			t.Errorf("Redacted(%q) = %q, want %q", tc.url, got, tc.want)
		}
	}
}
