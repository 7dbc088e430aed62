package mail

import (
	"errors"
	"fmt"
	"net"
	netmail "net/mail"
	"net/smtp"
	"net/url"
	"strconv"
	"strings"
)

// startTLS is the smtp:// starttls= policy.
type startTLS int

const (
	startTLSAuto     startTLS = iota // use STARTTLS when the server offers it
	startTLSRequired                 // fail unless the server offers it
	startTLSOff                      // never use it
)

// endpoint is a parsed, validated sender URL.
type endpoint struct {
	implicitTLS bool   // smtps://
	host        string // host name or IP, without brackets or port
	addr        string // host:port
	starttls    startTLS
	// auth is AUTH PLAIN with the URL's credentials, nil without them. The
	// password lives only inside it, behind a pointer, so that even
	// fmt's %+v of a Sender value does not print it.
	auth   smtp.Auth
	from   *netmail.Address
	domain string // from's domain: Message-ID's right side
}

// parseURL validates rawURL (see the package doc for the forms). Its errors
// never quote the user information, nor anything a password with an
// unescaped special character might have spilled into (port, parameters).
func parseURL(rawURL string) (endpoint, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) && !strings.Contains(rawURL, "@") {
			return endpoint{}, fmt.Errorf("mail URL: %w", ue.Err)
		}
		return endpoint{}, errors.New("mail URL: cannot parse it (percent-encode special characters in the user name and password)")
	}
	var ep endpoint
	switch u.Scheme {
	case "smtp":
	case "smtps":
		ep.implicitTLS = true
	default:
		return endpoint{}, fmt.Errorf("mail URL: unknown scheme %q (want smtp or smtps)", u.Scheme)
	}
	if u.Opaque != "" || u.Hostname() == "" {
		return endpoint{}, errors.New("mail URL: missing host (want smtp://host:port or smtps://host:port)")
	}
	if (u.Path != "" && u.Path != "/") || u.Fragment != "" || u.RawFragment != "" {
		return endpoint{}, errors.New("mail URL: unexpected path or fragment (percent-encode special characters in the user name and password)")
	}
	ep.host = u.Hostname()
	port := u.Port()
	switch {
	case port == "" && ep.implicitTLS:
		port = "465"
	case port == "":
		port = "587"
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return endpoint{}, errors.New("mail URL: invalid port")
	}
	ep.addr = net.JoinHostPort(ep.host, port)
	if err := ep.setUser(u.User); err != nil {
		return endpoint{}, err
	}
	if err := ep.setQuery(u.RawQuery); err != nil {
		return endpoint{}, err
	}
	return ep, nil
}

func (ep *endpoint) setUser(user *url.Userinfo) error {
	if user == nil {
		return nil
	}
	password, ok := user.Password()
	switch {
	case user.Username() == "":
		return errors.New("mail URL: empty user name")
	case !ok || password == "":
		return errors.New("mail URL: user name without password (want user:password@)")
	}
	ep.auth = smtp.PlainAuth("", user.Username(), password, ep.host)
	return nil
}

func (ep *endpoint) setQuery(rawQuery string) error {
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		return errors.New("mail URL: invalid query (percent-encode special characters)")
	}
	for key, values := range q {
		if key != "from" && key != "starttls" {
			return errors.New("mail URL: unknown parameter (want only from= and starttls=)")
		}
		if len(values) > 1 {
			return fmt.Errorf("mail URL: %s= given more than once", key)
		}
	}
	if v, ok := q["starttls"]; ok {
		if ep.implicitTLS {
			return errors.New("mail URL: starttls= applies only to smtp:// (smtps:// is TLS from the start)")
		}
		switch v[0] {
		case "auto":
			ep.starttls = startTLSAuto
		case "required":
			ep.starttls = startTLSRequired
		case "off":
			ep.starttls = startTLSOff
		default:
			return errors.New("mail URL: starttls= must be auto, required or off")
		}
	}
	if q.Get("from") == "" {
		return errors.New("mail URL: from= is required")
	}
	from, err := netmail.ParseAddress(q.Get("from"))
	if err != nil {
		return fmt.Errorf("mail URL: from=: %w", err)
	}
	if _, err := formatAddress("from=", from); err != nil {
		return fmt.Errorf("mail URL: %w", err)
	}
	ep.domain = from.Address[strings.LastIndexByte(from.Address, '@')+1:]
	if err := checkDomain(ep.domain); err != nil {
		return fmt.Errorf("mail URL: from=: %w", err)
	}
	ep.from = from
	return nil
}

// Redacted returns rawURL for a log line: a URL that NewSender accepts with
// its password replaced by "xxxxx" (url.URL.Redacted); anything else with
// every character up to its last "@" (where a user name and password could
// be) replaced by "xxxxx", keeping only a leading "scheme://". A string with
// no "@" holds no user information and is returned as it is.
func Redacted(rawURL string) string {
	if _, err := parseURL(rawURL); err == nil {
		u, _ := url.Parse(rawURL) // parseURL parsed it
		return u.Redacted()
	}
	at := strings.LastIndexByte(rawURL, '@')
	if at < 0 {
		return rawURL
	}
	prefix := ""
	if i := strings.Index(rawURL, "://"); i > 0 && i < at && validScheme(rawURL[:i]) {
		prefix = rawURL[:i+3]
	}
	return prefix + "xxxxx@" + rawURL[at+1:]
}

// validScheme reports whether s is an RFC 3986 scheme.
func validScheme(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		letter := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
		if !letter && (i == 0 || !('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return false
		}
	}
	return s != ""
}
