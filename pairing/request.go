package pairing

import (
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Bounds of a start request's fields, in characters (the OpenAPI
// document's maxLength).
const (
	MaxHomeURL       = 2048
	MaxSiteName      = 200
	MaxPluginVersion = 50
	// maxKeyName is the bound of a key's name, in bytes (store.CreateKey).
	maxKeyName = 200
)

// StartRequest is what a WordPress plugin sends to start pairing.
type StartRequest struct {
	// HomeURL is the WordPress site's home URL: an absolute http(s) URL of
	// at most MaxHomeURL characters, without user info, query or fragment.
	// Required.
	HomeURL string
	// SiteName is the WordPress site's title, at most MaxSiteName
	// characters. Optional.
	SiteName string
	// PluginVersion is the plugin's version, at most MaxPluginVersion
	// characters. Optional.
	PluginVersion string
	// ClientIP is the address the request came from, for the per-IP limit
	// on starts and the record. "" is not limited.
	ClientIP string
}

// ValidationError lists what is wrong with a request, by field (home_url,
// site_name, plugin_version), each with a message for the client.
type ValidationError struct {
	Problems map[string]string
}

func (e *ValidationError) Error() string {
	var b strings.Builder
	b.WriteString("pairing: invalid request")
	for _, f := range []string{"home_url", "site_name", "plugin_version"} {
		if m, ok := e.Problems[f]; ok {
			b.WriteString("; " + f + " " + m)
		}
	}
	return b.String()
}

// Validate checks r and returns it normalised: HomeURL canonical
// (CanonicalHomeURL), the other fields trimmed. Start calls it; an HTTP
// adapter may call it first to report every problem of a request at once.
func (r StartRequest) Validate() (StartRequest, *ValidationError) {
	problems := map[string]string{}
	home, msg := CanonicalHomeURL(r.HomeURL)
	if msg != "" {
		problems["home_url"] = msg
	}
	r.HomeURL = home
	var ok bool
	if r.SiteName, ok = boundedText(r.SiteName, MaxSiteName); !ok {
		problems["site_name"] = "must be at most 200 characters of text"
	}
	if r.PluginVersion, ok = boundedText(r.PluginVersion, MaxPluginVersion); !ok {
		problems["plugin_version"] = "must be at most 50 characters of text"
	}
	if len(problems) > 0 {
		return r, &ValidationError{Problems: problems}
	}
	return r, nil
}

// boundedText trims s and reports whether it is valid UTF-8 of at most max
// characters without control characters.
func boundedText(s string, max int) (string, bool) {
	if !utf8.ValidString(s) || utf8.RuneCountInString(s) > max {
		return "", false
	}
	s = strings.TrimSpace(s)
	for _, c := range s {
		if unicode.IsControl(c) {
			return "", false
		}
	}
	return s, true
}

// CanonicalHomeURL checks a WordPress home URL and returns its canonical
// form, the one pairings are stored and compared by: scheme and host in
// lower case, the scheme's default port dropped, no trailing slash. The
// message says what is wrong, "" when nothing is.
func CanonicalHomeURL(raw string) (canonical, problem string) {
	raw = strings.TrimSpace(raw)
	switch {
	case raw == "":
		return "", "is required"
	case !utf8.ValidString(raw) || utf8.RuneCountInString(raw) > MaxHomeURL:
		return "", "must be at most 2048 characters"
	}
	for _, c := range raw {
		if unicode.IsControl(c) || unicode.IsSpace(c) {
			return "", "must be an absolute http or https URL without spaces"
		}
	}
	u, err := url.Parse(raw)
	if err != nil || u.Opaque != "" || u.Host == "" {
		return "", "must be an absolute http or https URL"
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return "", "must be an absolute http or https URL"
	}
	if u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.Contains(raw, "#") {
		return "", "must not have user info, a query or a fragment"
	}
	host, ok := canonicalHost(u.Hostname())
	if !ok {
		return "", "must have a host name or IP address"
	}
	port := u.Port()
	if port != "" {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 {
			return "", "must have a port between 1 and 65535"
		}
		port = strconv.Itoa(n)
	}
	if (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
		port = ""
	}
	if port != "" {
		host = net.JoinHostPort(host, port)
	} else if strings.Contains(host, ":") { // IPv6
		host = "[" + host + "]"
	}
	path := strings.TrimRight(u.EscapedPath(), "/")
	canonical = scheme + "://" + host + path
	if len(canonical) > MaxHomeURL { // bytes: the path is escaped, a host may not be ASCII
		return "", "must be at most 2048 characters"
	}
	return canonical, ""
}

// canonicalHost returns host (without brackets) in lower case, when it is
// an IP address without a zone or a name: dot-separated labels of letters,
// digits, '-' and '_' (a trailing dot dropped).
func canonicalHost(host string) (string, bool) {
	if ip, err := netip.ParseAddr(host); err == nil {
		return ip.String(), ip.Zone() == ""
	}
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if host == "" {
		return "", false
	}
	for _, label := range strings.Split(host, ".") {
		if label == "" {
			return "", false
		}
		for _, c := range label {
			if !unicode.IsLetter(c) && !unicode.IsDigit(c) && c != '-' && c != '_' {
				return "", false
			}
		}
	}
	return host, true
}

// KeyName is the name of the key a pairing of homeURL (canonical) gets:
// "WordPress: <host>", the host with its port when it is not the default,
// cut to 200 bytes.
func KeyName(homeURL string) string {
	host := homeURL
	if u, err := url.Parse(homeURL); err == nil && u.Host != "" {
		host = u.Host
	}
	name := "WordPress: " + host
	if len(name) > maxKeyName {
		cut := maxKeyName
		for cut > 0 && !utf8.RuneStart(name[cut]) {
			cut--
		}
		name = name[:cut]
	}
	return name
}
