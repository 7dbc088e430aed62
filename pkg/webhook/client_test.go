package webhook

import (
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestCheckAddr(t *testing.T) {
	const (
		none     = iota // allowed by no option
		loopback        // allowed by AllowLoopback
		private         // allowed by AllowPrivate
		public          // always allowed
	)
	for _, tc := range []struct {
		addr string
		need int
		kind string // a part of AddressError.Kind
	}{
		{"93.184.215.14", public, ""},
		{"1.1.1.1", public, ""},
		{"100.63.255.255", public, ""},
		{"100.128.0.0", public, ""},
		{"172.15.255.255", public, ""},
		{"172.32.0.0", public, ""},
		{"169.253.255.255", public, ""},
		{"223.255.255.255", public, ""},
		{"2606:4700:4700::1111", public, ""},
		{"2a00:1450:4001:80b::200e", public, ""},
		{"::ffff:93.184.215.14", public, ""},
		{"64:ff9b::5db8:d70e", public, ""}, // NAT64 of 93.184.215.14

		{"127.0.0.1", loopback, "loopback"},
		{"127.255.255.254", loopback, "loopback"},
		{"::1", loopback, "loopback"},
		{"::ffff:127.0.0.1", loopback, "IPv4-mapped loopback"},

		{"10.0.0.1", private, "RFC 1918"},
		{"172.16.0.1", private, "RFC 1918"},
		{"172.31.255.255", private, "RFC 1918"},
		{"192.168.1.1", private, "RFC 1918"},
		{"100.64.0.1", private, "carrier-grade NAT"},
		{"100.127.255.255", private, "carrier-grade NAT"},
		{"fc00::1", private, "unique local"},
		{"fd12:3456:789a::1", private, "unique local"},
		{"fec0::1", private, "site-local"},
		{"::ffff:10.1.2.3", private, "IPv4-mapped private"},
		{"::ffff:192.168.0.1", private, "IPv4-mapped private"},
		{"64:ff9b::a00:1", private, "NAT64 private"},

		{"169.254.169.254", none, "cloud metadata"},
		{"169.254.0.1", none, "link-local"},
		{"::ffff:169.254.169.254", none, "IPv4-mapped link-local"},
		{"64:ff9b::a9fe:a9fe", none, "NAT64 link-local"},
		{"fe80::1", none, "link-local"},
		{"fe80::1%eth0", none, "link-local"},
		{"fd00:ec2::254", private, "unique local"}, // AWS's IPv6 metadata is in fc00::/7
		{"0.0.0.0", none, "unspecified"},
		{"0.1.2.3", none, "unspecified"},
		{"::", none, "unspecified"},
		{"::ffff:0.0.0.0", none, "IPv4-mapped unspecified"},
		{"224.0.0.1", none, "multicast"},
		{"239.255.255.250", none, "multicast"},
		{"ff02::1", none, "multicast"},
		{"255.255.255.255", none, "broadcast"},
		{"240.0.0.1", none, "reserved"},
		{"192.0.0.170", none, "IETF"},
		{"192.0.2.1", none, "documentation"},
		{"198.51.100.7", none, "documentation"},
		{"203.0.113.9", none, "documentation"},
		{"198.18.0.1", none, "benchmarking"},
		{"192.88.99.1", none, "6to4"},
		{"2001:db8::1", none, "documentation"},
		{"3fff::1", none, "documentation"},
		{"2001::1", none, "Teredo"},
		{"2002:7f00:1::", none, "6to4"},
		{"64:ff9b:1::1", none, "local-use NAT64"},
		{"100::1", none, "discard"},
		{"::127.0.0.1", none, "reserved IPv6"}, // IPv4-compatible, deprecated
		{"::ffff:0:7f00:1", none, "reserved IPv6"},
		{"4000::1", none, "reserved IPv6"},
	} {
		t.Run(tc.addr, func(t *testing.T) {
			a := netip.MustParseAddr(tc.addr)
			for _, o := range []struct {
				name    string
				opts    ClientOptions
				allowed bool
			}{
				{"default", ClientOptions{}, tc.need == public},
				{"AllowLoopback", ClientOptions{AllowLoopback: true}, tc.need == public || tc.need == loopback},
				{"AllowPrivate", ClientOptions{AllowPrivate: true}, tc.need == public || tc.need == private},
				{"both", ClientOptions{AllowLoopback: true, AllowPrivate: true}, tc.need != none},
			} {
				err := o.opts.checkAddr(a)
				if (err == nil) != o.allowed {
					t.Errorf("%s: checkAddr = %v, want allowed %v", o.name, err, o.allowed)
					continue
				}
				var ae *AddressError
				if err != nil && (!errors.As(err, &ae) || !strings.Contains(ae.Kind, tc.kind)) {
					t.Errorf("%s: checkAddr = %v, want an AddressError of kind %q", o.name, err, tc.kind)
				}
			}
		})
	}
}

func TestAddressError(t *testing.T) {
	err := ClientOptions{AllowPrivate: true}.checkAddr(netip.MustParseAddr("::ffff:127.0.0.1"))
	if want := "webhook: ::ffff:127.0.0.1 is an IPv4-mapped loopback address, not a public internet address"; err == nil || err.Error() != want {
		t.Errorf("checkAddr = %v, want %q", err, want)
	}
	if err := (ClientOptions{AllowLoopback: true, AllowPrivate: true}).checkAddr(netip.Addr{}); err == nil {
		t.Error("checkAddr allowed the zero Addr")
	}
}

// TestClientRefusesAtDial runs the client against servers on loopback: the
// dialler, not a check of the URL, refuses them.
func TestClientRefusesAtDial(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	at := func(host string) string { return "http://" + net.JoinHostPort(host, strconv.Itoa(port)) + "/" }

	for _, tc := range []struct {
		name string
		url  string
		opts ClientOptions
		kind string // empty: the request succeeds
	}{
		{"loopback allowed", srv.URL, ClientOptions{AllowLoopback: true}, ""},
		{"loopback", srv.URL, ClientOptions{}, "loopback"},
		{"loopback, private allowed", srv.URL, ClientOptions{AllowPrivate: true}, "loopback"},
		{"a name resolving to loopback", at("localhost"), ClientOptions{}, "loopback"},
		{"IPv4-mapped loopback", at("::ffff:127.0.0.1"), ClientOptions{}, "loopback"},
		{"cloud metadata", "http://169.254.169.254/latest/meta-data/", ClientOptions{AllowLoopback: true, AllowPrivate: true}, "link-local"},
		{"unspecified", at("0.0.0.0"), ClientOptions{AllowLoopback: true, AllowPrivate: true}, "unspecified"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := NewClient(tc.opts).Get(tc.url)
			if tc.kind == "" {
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				return
			}
			if err == nil {
				resp.Body.Close()
				t.Fatalf("GET %s succeeded", tc.url)
			}
			var ae *AddressError
			if !errors.As(err, &ae) || !strings.Contains(ae.Kind, tc.kind) {
				t.Fatalf("GET %s: %v, want an AddressError of kind %q", tc.url, err, tc.kind)
			}
		})
	}
}

func TestClientDoesNotFollowRedirects(t *testing.T) {
	var followed bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/elsewhere" {
			followed = true
		}
		http.Redirect(w, r, "/elsewhere", http.StatusTemporaryRedirect)
	}))
	defer srv.Close()
	resp, err := NewClient(ClientOptions{AllowLoopback: true}).Post(srv.URL+"/hook", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTemporaryRedirect || followed {
		t.Fatalf("status %d, followed %v: want the 307 itself", resp.StatusCode, followed)
	}
}

func TestClientSettings(t *testing.T) {
	c := NewClient(ClientOptions{})
	tr := c.Transport.(*http.Transport)
	if tr.Proxy != nil {
		t.Error("the transport uses a proxy")
	}
	if c.Timeout != DefaultTimeout {
		t.Errorf("Timeout = %s, want %s", c.Timeout, DefaultTimeout)
	}
	if c := NewClient(ClientOptions{Timeout: 3 * time.Second}); c.Timeout != 3*time.Second {
		t.Errorf("Timeout = %s, want 3s", c.Timeout)
	}
	if err := (ClientOptions{AllowLoopback: true}).control("udp4", "127.0.0.1:53", nil); err == nil {
		t.Error("control allowed udp")
	}
	if err := (ClientOptions{}).control("tcp4", "example.com:80", nil); err == nil {
		t.Error("control allowed a name")
	}
}

func TestClientTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-release
	}))
	defer srv.Close()
	defer close(release)
	start := time.Now()
	_, err := NewClient(ClientOptions{AllowLoopback: true, Timeout: 200 * time.Millisecond}).Get(srv.URL)
	if err == nil || time.Since(start) > 5*time.Second {
		t.Fatalf("a silent receiver: %v after %s, want a timeout after 200ms", err, time.Since(start))
	}
}
