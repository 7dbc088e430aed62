// Package cors holds what the origin and the edge share about browser
// origins: the one form an allowed origin is stored and compared in.
package cors

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strings"
)

// MaxOrigins bounds a site's allowed origins.
const MaxOrigins = 20

// maxLen bounds one origin's length.
const maxLen = 255

// Normalize returns the ASCII serialization of an origin as a browser sends
// it in the Origin header (RFC 6454 §6.2): scheme "://" host [":" port],
// the scheme and host in lower case and a default port (80 for http, 443
// for https) left out. s must be an http or https origin: no path (but a
// lone "/"), query, fragment or user information, no wildcard.
func Normalize(s string) (string, error) {
	if s == "" || len(s) > maxLen {
		return "", fmt.Errorf("origin must be 1 to %d characters", maxLen)
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c >= 0x7f || c == '%' {
			return "", errors.New("origin must be printable ASCII without spaces (use the punycode form of a name)")
		}
	}
	u, err := url.Parse(s)
	if err != nil {
		return "", fmt.Errorf("origin %q is not a URL", s)
	}
	scheme := strings.ToLower(u.Scheme)
	switch {
	case scheme != "http" && scheme != "https":
		return "", fmt.Errorf("origin %q must start with http:// or https://", s)
	case u.Opaque != "" || u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.ForceQuery ||
		u.Fragment != "" || strings.Contains(s, "#"):
		return "", fmt.Errorf("origin %q must be scheme://host[:port], without path, query or user", s)
	case u.Hostname() == "" || strings.Contains(u.Host, "*"):
		return "", fmt.Errorf("origin %q needs a host (wildcards are not allowed)", s)
	}
	host := strings.ToLower(u.Hostname())
	if strings.Contains(host, ":") {
		if ip, err := netip.ParseAddr(host); err != nil || !ip.Is6() || ip.Zone() != "" {
			return "", fmt.Errorf("origin %q has an invalid IPv6 address", s)
		}
		host = "[" + host + "]"
	} else if strings.Trim(host, "abcdefghijklmnopqrstuvwxyz0123456789-.") != "" {
		return "", fmt.Errorf("origin %q: a host is letters, digits, '-' and '.' (use the punycode form of a name)", s)
	}
	port := u.Port()
	if port != "" {
		n := 0
		for _, c := range port {
			n = n*10 + int(c-'0')
			if n > 65535 {
				break
			}
		}
		if n == 0 || n > 65535 || port[0] == '0' {
			return "", fmt.Errorf("origin %q has an invalid port", s)
		}
		if (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
			port = ""
		}
	} else if strings.HasSuffix(u.Host, ":") {
		return "", fmt.Errorf("origin %q has an empty port", s)
	}
	out := scheme + "://" + host
	if port != "" {
		out += ":" + port
	}
	return out, nil
}

// NormalizeList normalizes each origin, drops repeats and checks the count.
func NormalizeList(in []string) ([]string, error) {
	out := make([]string, 0, len(in))
	seen := map[string]bool{}
	for _, s := range in {
		o, err := Normalize(strings.TrimSpace(s))
		if err != nil {
			return nil, err
		}
		if !seen[o] {
			seen[o] = true
			out = append(out, o)
		}
	}
	if len(out) > MaxOrigins {
		return nil, fmt.Errorf("at most %d origins, not %d", MaxOrigins, len(out))
	}
	return out, nil
}

// Allowed reports whether the Origin header a browser sent is in list
// (normalized origins). The header is compared as sent: browsers send the
// serialization Normalize produces.
func Allowed(list []string, origin []byte) bool {
	for _, o := range list {
		if o == string(origin) {
			return true
		}
	}
	return false
}
