package webhook

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// MaxURLLen bounds an endpoint's URL, in bytes, before and after CheckURL
// normalizes it.
const MaxURLLen = 2048

// URLError is CheckURL's error. Reason is a phrase for the dashboard's form
// ("the URL must start with https:// or http://"); it never repeats the URL,
// so no password typed into one is echoed. Err is an *AddressError when the
// host is an IP address that is refused, otherwise nil.
type URLError struct {
	Reason string
	Err    error
}

// Error returns "webhook: bad URL: " and the reason.
func (e *URLError) Error() string { return "webhook: bad URL: " + e.Reason }

// Unwrap returns Err.
func (e *URLError) Unwrap() error { return e.Err }

// CheckURL checks an endpoint URL when it is entered and returns it
// normalized. It must be absolute, http or https, with a host, without a
// user name or password and without a #fragment, at most MaxURLLen bytes.
// An IP address host must be one that o allows (the rules of NewClient).
// A name must be a full domain name in ASCII (the xn-- form of an
// international one): letters, digits, '-' and '_' in labels of at most 63
// bytes, at least two labels, not ending in a number (which browsers would
// read as an IPv4 address); localhost is allowed only with AllowLoopback,
// names under .internal, .local and .home.arpa only with AllowPrivate.
// CheckURL does not resolve names: the client checks the addresses they
// resolve to each time it connects.
//
// Normalized means: surrounding white space removed, scheme and host in
// lower case, a trailing dot of the host and a default port (80 for http,
// 443 for https) removed, an IPv6 address in its canonical form, an empty
// path made "/", and the path and query escaped as net/url writes them.
// CheckURL of a normalized URL returns it unchanged. Errors are *URLError.
func CheckURL(raw string, o ClientOptions) (string, error) {
	u, err := parseURL(strings.TrimSpace(raw))
	if err != nil {
		return "", err
	}
	host, err := checkHost(u.Hostname(), o)
	if err != nil {
		return "", err
	}
	port := u.Port()
	if port != "" {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 {
			return "", &URLError{Reason: "the port must be a number from 1 to 65535"}
		}
		port = strconv.Itoa(n)
		if (u.Scheme == "http" && n == 80) || (u.Scheme == "https" && n == 443) {
			port = ""
		}
	}
	if port != "" {
		host += ":" + port
	}
	norm := &url.URL{Scheme: u.Scheme, Host: host, Path: u.Path, RawPath: u.RawPath, RawQuery: u.RawQuery, ForceQuery: u.ForceQuery}
	if norm.Path == "" {
		norm.Path, norm.RawPath = "/", ""
	}
	s := norm.String()
	if len(s) > MaxURLLen {
		return "", &URLError{Reason: fmt.Sprintf("the URL must be at most %d characters", MaxURLLen)}
	}
	return s, nil
}

// parseURL checks what can be checked of a URL before its host.
func parseURL(raw string) (*url.URL, error) {
	switch {
	case raw == "":
		return nil, &URLError{Reason: "enter the URL of the receiver, starting with https://"}
	case len(raw) > MaxURLLen:
		return nil, &URLError{Reason: fmt.Sprintf("the URL must be at most %d characters", MaxURLLen)}
	case strings.Contains(raw, "#"):
		return nil, &URLError{Reason: "the URL must not have a #fragment"}
	}
	u, err := url.Parse(raw)
	if err != nil {
		// url.Error quotes the URL, which may hold a password: not repeated.
		return nil, &URLError{Reason: "the URL is malformed (check for spaces and stray characters)"}
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https", u.Opaque != "":
		return nil, &URLError{Reason: "the URL must start with https:// or http://"}
	case u.User != nil:
		return nil, &URLError{Reason: "the URL must not contain a user name or password (our signature authenticates each request)"}
	case u.Host == "" || u.Hostname() == "":
		return nil, &URLError{Reason: "the URL must have a host name, e.g. https://crm.example.com/webhooks"}
	}
	return u, nil
}

// checkHost checks a URL's host (without brackets and port) and returns it
// normalized, with brackets for IPv6.
func checkHost(host string, o ClientOptions) (string, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		if a.Zone() != "" {
			return "", &URLError{Reason: "the IPv6 address must not have a zone (%)"}
		}
		if err := o.checkAddr(a); err != nil {
			var ae *AddressError
			errors.As(err, &ae)
			return "", &URLError{Reason: fmt.Sprintf("%s is %s address; webhooks go only to public internet addresses", a, withArticle(ae.Kind)), Err: err}
		}
		if a.Is6() {
			return "[" + a.String() + "]", nil
		}
		return a.String(), nil
	}
	name := strings.TrimSuffix(strings.ToLower(host), ".")
	if err := checkName(name); err != nil {
		return "", err
	}
	switch {
	case name == "localhost" || strings.HasSuffix(name, ".localhost"):
		if !o.AllowLoopback {
			return "", &URLError{Reason: "localhost is the server itself; use an address on the internet"}
		}
	case strings.HasSuffix(name, ".internal"), strings.HasSuffix(name, ".local"), strings.HasSuffix(name, ".home.arpa"):
		if !o.AllowPrivate {
			return "", &URLError{Reason: "the host name is a private one that cannot be reached from the internet"}
		}
	case !strings.Contains(name, "."):
		return "", &URLError{Reason: "the host name must be a full domain name, e.g. crm.example.com"}
	}
	return name, nil
}

// checkName checks the syntax of a lower-case host name.
func checkName(name string) error {
	if len(name) > 253 {
		return &URLError{Reason: "the host name must be at most 253 characters"}
	}
	labels := strings.Split(name, ".")
	for _, label := range labels {
		if label == "" || len(label) > 63 {
			return &URLError{Reason: "each part of the host name between dots must be 1 to 63 characters"}
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if c >= 0x80 {
				return &URLError{Reason: "write an international host name in its xn-- (punycode) form"}
			}
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return &URLError{Reason: "the host name may contain only letters, digits, '-', '_' and dots"}
			}
		}
		if label[0] == '-' || label[len(label)-1] == '-' {
			return &URLError{Reason: "no part of the host name may start or end with '-'"}
		}
	}
	if last := labels[len(labels)-1]; strings.Trim(last, "0123456789") == "" || strings.HasPrefix(last, "0x") {
		return &URLError{Reason: "the host is neither a valid IP address nor a domain name"}
	}
	return nil
}
