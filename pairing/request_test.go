package pairing

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCanonicalHomeURL(t *testing.T) {
	long := "https://agency.example/" + strings.Repeat("a", MaxHomeURL-len("https://agency.example/"))
	tests := []struct {
		name, in, want string // want "": refused
	}{
		{"plain", "https://agency.example", "https://agency.example"},
		{"trailing slash", "https://agency.example/", "https://agency.example"},
		{"case of scheme and host", "HTTPS://Agency.Example/Blog/", "https://agency.example/Blog"},
		{"http", "http://agency.example", "http://agency.example"},
		{"default https port", "https://agency.example:443/", "https://agency.example"},
		{"default http port", "http://agency.example:80", "http://agency.example"},
		{"other port", "http://localhost:8080/wp", "http://localhost:8080/wp"},
		{"https on 80 keeps it", "https://agency.example:80", "https://agency.example:80"},
		{"ipv6", "http://[::1]:8080/", "http://[::1]:8080"},
		{"ipv6 default port", "https://[2001:db8::1]:443", "https://[2001:db8::1]"},
		{"escaped path", "https://agency.example/my%20site/", "https://agency.example/my%20site"},
		{"spaces around", "  https://agency.example\n", "https://agency.example"},
		{"at the limit", long, long},

		{"empty", "", ""},
		{"blank", "   ", ""},
		{"too long", long + "a", ""},
		{"relative", "/wp", ""},
		{"no scheme", "agency.example", ""},
		{"ftp", "ftp://agency.example", ""},
		{"javascript", "javascript:alert(1)", ""},
		{"opaque", "https:agency.example", ""},
		{"no host", "https:///path", ""},
		{"user info", "https://bank.example@evil.example", ""},
		{"query", "https://agency.example/?p=1", ""},
		{"empty query", "https://agency.example/?", ""},
		{"fragment", "https://agency.example/#top", ""},
		{"empty fragment", "https://agency.example/#", ""},
		{"space inside", "https://agency.example/my site", ""},
		{"control character", "https://agency.example/\x7f", ""},
		{"bad port", "https://agency.example:99999999999", ""},
		{"dots for a host", "https://../", ""},
		{"invalid UTF-8", "https://agency.example/\xff", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, problem := CanonicalHomeURL(tt.in)
			if tt.want == "" {
				if problem == "" {
					t.Errorf("CanonicalHomeURL(%q) = %q, want a problem", tt.in, got)
				}
				return
			}
			if got != tt.want || problem != "" {
				t.Errorf("CanonicalHomeURL(%q) = %q, %q; want %q", tt.in, got, problem, tt.want)
			}
			if again, _ := CanonicalHomeURL(got); again != got {
				t.Errorf("not idempotent: %q -> %q", got, again)
			}
		})
	}
}

// FuzzCanonicalHomeURL: an accepted URL is canonical (idempotent), short
// enough for the database, and an http(s) URL with a host.
func FuzzCanonicalHomeURL(f *testing.F) {
	for _, s := range []string{"https://agency.example", "HTTP://A.example:80/x/", "http://[::1]:8080", "https://a@b", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got, problem := CanonicalHomeURL(in)
		if problem != "" {
			return
		}
		if !strings.HasPrefix(got, "http://") && !strings.HasPrefix(got, "https://") || len(got) > MaxHomeURL ||
			strings.HasSuffix(got, "/") {
			t.Fatalf("CanonicalHomeURL(%q) = %q", in, got)
		}
		if again, p := CanonicalHomeURL(got); again != got || p != "" {
			t.Fatalf("not idempotent: %q -> %q -> %q %q", in, got, again, p)
		}
	})
}

func TestKeyName(t *testing.T) {
	for name, tc := range map[string]struct{ in, want string }{
		"host":         {"https://agency.example/blog", "WordPress: agency.example"},
		"port":         {"http://localhost:8080", "WordPress: localhost:8080"},
		"ipv6":         {"http://[::1]:8080", "WordPress: [::1]:8080"},
		"long host":    {"https://" + strings.Repeat("a", 250) + ".example", "WordPress: " + strings.Repeat("a", 189)},
		"long unicode": {"https://" + strings.Repeat("é", 150), "WordPress: " + strings.Repeat("é", 94)},
	} {
		t.Run(name, func(t *testing.T) {
			got := KeyName(tc.in)
			if got != tc.want || len(got) > 200 || !utf8.ValidString(got) {
				t.Errorf("KeyName(%q) = %q (%d bytes), want %q", tc.in, got, len(got), tc.want)
			}
		})
	}
}

func TestStartRequestValidate(t *testing.T) {
	tests := []struct {
		name     string
		req      StartRequest
		problems []string
	}{
		{"minimal", StartRequest{HomeURL: "https://agency.example"}, nil},
		{"full", StartRequest{HomeURL: "https://agency.example", SiteName: " Agency Realty ", PluginVersion: "1.0.0"}, nil},
		{"site name at the limit", StartRequest{HomeURL: "https://a.example", SiteName: strings.Repeat("é", 200)}, nil},
		{"no home url", StartRequest{SiteName: "x"}, []string{"home_url"}},
		{"site name too long", StartRequest{HomeURL: "https://a.example", SiteName: strings.Repeat("é", 201)}, []string{"site_name"}},
		{"site name control", StartRequest{HomeURL: "https://a.example", SiteName: "a\x00b"}, []string{"site_name"}},
		{"plugin version too long", StartRequest{HomeURL: "https://a.example", PluginVersion: strings.Repeat("1", 51)}, []string{"plugin_version"}},
		{"plugin version invalid UTF-8", StartRequest{HomeURL: "https://a.example", PluginVersion: "\xff"}, []string{"plugin_version"}},
		{"everything wrong", StartRequest{HomeURL: "ftp://x", SiteName: "\n\x01", PluginVersion: strings.Repeat("1", 51)},
			[]string{"home_url", "site_name", "plugin_version"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, verr := tt.req.Validate()
			if tt.problems == nil {
				if verr != nil {
					t.Fatalf("problems %v", verr.Problems)
				}
				if got.SiteName != strings.TrimSpace(tt.req.SiteName) {
					t.Errorf("site name %q not trimmed", got.SiteName)
				}
				return
			}
			if verr == nil || len(verr.Problems) != len(tt.problems) {
				t.Fatalf("problems %v, want %v", verr, tt.problems)
			}
			for _, f := range tt.problems {
				if verr.Problems[f] == "" || !strings.Contains(verr.Error(), f) {
					t.Errorf("no problem with %s in %v", f, verr)
				}
			}
		})
	}
}
