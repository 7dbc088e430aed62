package ingest

import (
	"net/url"
	"strings"
	"testing"
)

func TestCheckURL(t *testing.T) {
	for name, tc := range map[string]struct {
		url string
		ok  bool
	}{
		"https":              {"https://cdn.example/a.jpg", true},
		"http with port":     {"http://cdn.example:8080/a.jpg?v=2#x", true},
		"upper-case scheme":  {"HTTPS://CDN.example/a.jpg", true},
		"IPv6 host":          {"http://[2001:db8::1]/a.jpg", true},
		"javascript":         {"javascript:alert(1)", false},
		"mixed-case js":      {"JaVaScRiPt:alert(1)", false},
		"data":               {"data:image/png;base64,AAAA", false},
		"vbscript":           {"vbscript:msgbox(1)", false},
		"file":               {"file:///etc/passwd", false},
		"ftp":                {"ftp://cdn.example/a.jpg", false},
		"scheme-relative":    {"//cdn.example/a.jpg", false},
		"relative path":      {"../a.jpg", false},
		"bare file name":     {"a.jpg", false},
		"opaque http":        {"http:cdn.example/a.jpg", false},
		"no host":            {"https:///a.jpg", false},
		"port only":          {"https://:443/a.jpg", false},
		"user info":          {"https://user:pw@cdn.example/a.jpg", false},
		"host that is @":     {"https://cdn.example@evil.example/a.jpg", false},
		"control character":  {"java\nscript:alert(1)", false},
		"newline in https":   {"https://cdn.example/a\n.jpg", false},
		"too long":           {"https://cdn.example/" + strings.Repeat("a", maxURLLen), false},
		"empty":              {"", false},
		"space in host":      {"https://cdn example/a.jpg", false},
		"tab-led javascript": {"\tjavascript:alert(1)", false},
	} {
		t.Run(name, func(t *testing.T) {
			if err := checkURL(tc.url); (err == nil) != tc.ok {
				t.Errorf("checkURL(%q) = %v, want ok %v", tc.url, err, tc.ok)
			}
		})
	}
}

// FuzzCheckURL: whatever checkURL accepts parses as an absolute http or
// https URL with a host and no user info.
func FuzzCheckURL(f *testing.F) {
	for _, s := range []string{"https://cdn.example/a.jpg", "javascript:alert(1)", "//x/y", "http:x", "https://u@h/",
		"http://[::1]:80/", "HTTP://X", "https://%41/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if checkURL(s) != nil {
			return
		}
		u, err := url.Parse(s)
		scheme := strings.ToLower(u.Scheme)
		if err != nil || (scheme != "http" && scheme != "https") || u.Hostname() == "" || u.User != nil || u.Opaque != "" {
			t.Fatalf("accepted %q: %+v %v", s, u, err)
		}
	})
}
