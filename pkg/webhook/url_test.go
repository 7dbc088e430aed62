package webhook

import (
	"errors"
	"net/netip"
	"net/url"
	"strings"
	"testing"
)

func TestCheckURL(t *testing.T) {
	loop := ClientOptions{AllowLoopback: true}
	priv := ClientOptions{AllowPrivate: true}
	long := "https://crm.example.com/" + strings.Repeat("a", MaxURLLen-len("https://crm.example.com/"))
	for _, tc := range []struct {
		name string
		in   string
		opts ClientOptions
		want string // the normalized URL, or with wantErr a part of the reason
		err  bool
	}{
		{"https", "https://crm.example.com/hooks/listgate?token=abc", ClientOptions{}, "https://crm.example.com/hooks/listgate?token=abc", false},
		{"http", "http://crm.example.com/hook", ClientOptions{}, "http://crm.example.com/hook", false},
		{"upper case", "HTTPS://CRM.Example.COM/Hook", ClientOptions{}, "https://crm.example.com/Hook", false},
		{"white space", "  https://crm.example.com/hook\n", ClientOptions{}, "https://crm.example.com/hook", false},
		{"empty path", "https://crm.example.com", ClientOptions{}, "https://crm.example.com/", false},
		{"default port", "https://crm.example.com:443/x", ClientOptions{}, "https://crm.example.com/x", false},
		{"http default port", "http://crm.example.com:80/x", ClientOptions{}, "http://crm.example.com/x", false},
		{"other port", "https://crm.example.com:8443/x", ClientOptions{}, "https://crm.example.com:8443/x", false},
		{"port with zeros", "https://crm.example.com:08443/x", ClientOptions{}, "https://crm.example.com:8443/x", false},
		{"empty port", "https://crm.example.com:/x", ClientOptions{}, "https://crm.example.com/x", false},
		{"trailing dot", "https://crm.example.com./x", ClientOptions{}, "https://crm.example.com/x", false},
		{"underscore", "https://my_crm.example.com/x", ClientOptions{}, "https://my_crm.example.com/x", false},
		{"punycode", "https://xn--bcher-kva.example/x", ClientOptions{}, "https://xn--bcher-kva.example/x", false},
		{"escaped path", "https://crm.example.com/a%20b/c%2Fd?q=1%202", ClientOptions{}, "https://crm.example.com/a%20b/c%2Fd?q=1%202", false},
		{"space in path", "https://crm.example.com/a b", ClientOptions{}, "https://crm.example.com/a%20b", false},
		{"empty query", "https://crm.example.com/x?", ClientOptions{}, "https://crm.example.com/x?", false},
		{"public IPv4", "http://93.184.215.14:8080/h", ClientOptions{}, "http://93.184.215.14:8080/h", false},
		{"public IPv6", "https://[2606:4700:4700:0::1111]/h", ClientOptions{}, "https://[2606:4700:4700::1111]/h", false},
		{"longest", long, ClientOptions{}, long, false},
		{"loopback allowed", "http://127.0.0.1:8080/h", loop, "http://127.0.0.1:8080/h", false},
		{"localhost allowed", "http://LOCALHOST:8080/h", loop, "http://localhost:8080/h", false},
		{"private allowed", "http://10.1.2.3/h", priv, "http://10.1.2.3/h", false},
		{"internal name allowed", "http://crm.corp.internal/h", priv, "http://crm.corp.internal/h", false},

		{"empty", "", ClientOptions{}, "enter the URL", true},
		{"too long", long + "a", ClientOptions{}, "at most 2048", true},
		{"too long once escaped", "https://crm.example.com/" + strings.Repeat(" ", 700) + "x", ClientOptions{}, "at most 2048", true},
		{"no scheme", "crm.example.com/hook", ClientOptions{}, "must start with https://", true},
		{"ftp", "ftp://crm.example.com/", ClientOptions{}, "must start with https://", true},
		{"javascript", "javascript:alert(1)", ClientOptions{}, "must start with https://", true},
		{"opaque", "http:crm.example.com", ClientOptions{}, "must start with https://", true},
		{"no host", "https:///hook", ClientOptions{}, "must have a host", true},
		{"only a port", "https://:443/hook", ClientOptions{}, "must have a host", true},
		{"user and password", "https://admin:hunter2@crm.example.com/", ClientOptions{}, "user name or password", true},
		{"user only", "https://admin@crm.example.com/", ClientOptions{}, "user name or password", true},
		{"fragment", "https://crm.example.com/#x", ClientOptions{}, "#fragment", true},
		{"empty fragment", "https://crm.example.com/#", ClientOptions{}, "#fragment", true},
		{"control character", "https://crm.example.com/\x7f", ClientOptions{}, "malformed", true},
		{"bad escape", "https://crm.example.com/%zz", ClientOptions{}, "malformed", true},
		{"port 0", "https://crm.example.com:0/", ClientOptions{}, "port", true},
		{"port too big", "https://crm.example.com:65536/", ClientOptions{}, "port", true},
		{"loopback", "http://127.0.0.1/h", ClientOptions{}, "127.0.0.1 is a loopback address", true},
		{"IPv6 loopback", "http://[::1]/h", priv, "::1 is a loopback address", true},
		{"mapped loopback", "http://[::ffff:127.0.0.1]/h", ClientOptions{}, "IPv4-mapped loopback", true},
		{"private", "http://192.168.0.10/h", loop, "private (RFC 1918)", true},
		{"metadata", "http://169.254.169.254/latest/meta-data/", ClientOptions{AllowLoopback: true, AllowPrivate: true}, "link-local", true},
		{"zone", "http://[fe80::1%25eth0]/h", ClientOptions{}, "zone", true},
		{"localhost", "http://localhost:8080/h", ClientOptions{}, "localhost", true},
		{"sub.localhost", "http://crm.localhost/h", priv, "localhost", true},
		{"internal name", "http://metadata.google.internal/x", ClientOptions{}, "private one", true},
		{"mdns name", "http://printer.local/x", loop, "private one", true},
		{"single label", "http://intranet/h", ClientOptions{}, "full domain name", true},
		{"decimal IPv4", "http://2130706433/h", ClientOptions{}, "neither a valid IP address", true},
		{"short IPv4", "http://127.1/h", ClientOptions{}, "neither a valid IP address", true},
		{"hex IPv4", "http://0x7f.0x0.0x0.0x1/h", ClientOptions{}, "neither a valid IP address", true},
		{"octal IPv4", "http://0177.0.0.01/h", ClientOptions{}, "neither a valid IP address", true},
		{"unicode name", "https://bücher.example/h", ClientOptions{}, "xn--", true},
		{"bad character", "https://crm!.example.com/h", ClientOptions{}, "only letters", true},
		{"empty label", "https://crm..example.com/h", ClientOptions{}, "1 to 63", true},
		{"long label", "https://" + strings.Repeat("a", 64) + ".example.com/h", ClientOptions{}, "1 to 63", true},
		{"long name", "https://" + strings.Repeat("a.", 127) + "com/h", ClientOptions{}, "at most 253", true},
		{"leading hyphen", "https://-crm.example.com/h", ClientOptions{}, "'-'", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := CheckURL(tc.in, tc.opts)
			if tc.err {
				var ue *URLError
				if !errors.As(err, &ue) || !strings.Contains(ue.Reason, tc.want) {
					t.Fatalf("CheckURL(%q) = %q, %v; want a URLError with %q", tc.in, got, err, tc.want)
				}
				if strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), "admin") {
					t.Fatalf("the error %q repeats the credentials", err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("CheckURL(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
			}
			if again, err := CheckURL(got, tc.opts); again != got || err != nil {
				t.Fatalf("CheckURL(%q) = %q, %v; normalizing is not idempotent", got, again, err)
			}
		})
	}
}

func TestCheckURLAddressError(t *testing.T) {
	_, err := CheckURL("http://10.0.0.1/", ClientOptions{})
	var ae *AddressError
	if !errors.As(err, &ae) || ae.Addr != netip.MustParseAddr("10.0.0.1") {
		t.Fatalf("CheckURL = %v, want it to wrap an AddressError for 10.0.0.1", err)
	}
}

// FuzzCheckURL checks that CheckURL never panics, that what it accepts is
// a URL the client could be given and that it is normalized (checking it
// again returns it unchanged), and that its errors are URLErrors that do
// not repeat the input (TestCheckURL checks that no password is repeated).
func FuzzCheckURL(f *testing.F) {
	for _, s := range []string{
		"https://crm.example.com/hooks?x=1", "http://93.184.215.14:8080/", "https://[2606:4700::1111]/",
		"http://127.0.0.1/", "http://[::ffff:169.254.169.254]/", "http://[fe80::1%25en0]/",
		"https://user:pass@crm.example.com/", "https://crm.example.com/#f", "http://0x7f.1/", "HTTP://A.B:80",
		"https://crm.example.com/a b?c d", "http://localhost/", "http://a.internal/", "https://xn--bcher-kva.example/",
		"https://crm.example.com:/", "http://[::1]:0/", "https://%61.example.com/", "https://a.b/%2F?%zz",
		"https://crm.example.com./", "https://[1.2.3.4]/",
	} {
		f.Add(s, false, false)
	}
	f.Fuzz(func(t *testing.T, raw string, loopback, private bool) {
		o := ClientOptions{AllowLoopback: loopback, AllowPrivate: private}
		got, err := CheckURL(raw, o)
		if err != nil {
			var ue *URLError
			if !errors.As(err, &ue) || ue.Reason == "" {
				t.Fatalf("CheckURL(%q): %v is not a URLError", raw, err)
			}
			if len(raw) >= 12 && strings.Contains(err.Error(), raw) {
				t.Fatalf("CheckURL(%q): the error %q repeats the input", raw, err)
			}
			return
		}
		if len(got) > MaxURLLen || strings.Contains(got, "#") {
			t.Fatalf("CheckURL(%q) = %q: too long or has a fragment", raw, got)
		}
		u, perr := url.Parse(got)
		if perr != nil || (u.Scheme != "http" && u.Scheme != "https") || u.User != nil || u.Hostname() == "" || u.Opaque != "" {
			t.Fatalf("CheckURL(%q) = %q: not an absolute http(s) URL without credentials (%v)", raw, got, perr)
		}
		if a, aerr := netip.ParseAddr(u.Hostname()); aerr == nil {
			if err := o.checkAddr(a); err != nil {
				t.Fatalf("CheckURL(%q) = %q, but the client would refuse it: %v", raw, got, err)
			}
		}
		if again, err := CheckURL(got, o); again != got || err != nil {
			t.Fatalf("CheckURL(%q) = %q, but CheckURL of that = %q, %v", raw, got, again, err)
		}
	})
}
