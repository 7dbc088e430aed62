package webhook

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"
)

// DefaultTimeout bounds a whole delivery attempt (connect, TLS, request,
// response headers and whatever of the body the caller reads) when
// ClientOptions.Timeout is zero.
const DefaultTimeout = 10 * time.Second

// maxResponseHeaderBytes bounds the response headers a receiver may send.
const maxResponseHeaderBytes = 64 << 10

// ClientOptions configure NewClient and CheckURL. The zero value is what
// production uses: public internet addresses only, DefaultTimeout.
type ClientOptions struct {
	// Timeout bounds each request, from dialling to the end of reading
	// the body (http.Client.Timeout). Zero or negative means DefaultTimeout.
	Timeout time.Duration
	// AllowLoopback allows 127.0.0.0/8, ::1, their IPv4-mapped forms and the
	// name localhost: for tests and a developer's machine. Default false.
	AllowLoopback bool
	// AllowPrivate allows private networks: RFC 1918 (10/8, 172.16/12,
	// 192.168/16), carrier-grade NAT (100.64/10), unique local (fc00::/7),
	// site-local (fec0::/10), their IPv4-mapped and NAT64 forms, and the
	// names under .internal, .local and .home.arpa: for a deployment whose
	// receivers are on its own network. Default false.
	//
	// Link-local addresses (169.254/16, where cloud metadata services
	// answer, and fe80::/10), unspecified, multicast, broadcast, reserved,
	// documentation and benchmarking addresses are never allowed.
	AllowPrivate bool
}

// NewClient returns an HTTP client for delivering webhooks to URLs that
// agencies typed in. Its dialer checks every address it is about to
// connect to, after DNS resolution (net.Dialer.Control), and refuses the
// ones o does not allow with an *AddressError (see ClientOptions), so a
// name that resolves, or later re-resolves (DNS rebinding), to an internal
// address is refused too; a name with several addresses is tried on the
// others. It uses no proxy (HTTP_PROXY and the like are ignored, or the
// proxy would be the one connecting), does not follow redirects (a 3xx
// response is returned as it is, and the caller counts it as a failure),
// requires TLS 1.2 or newer, does not ask for compressed responses, and
// bounds response headers to 64 KiB.
//
// Reading the response body is the caller's: read at most what it keeps
// (io.LimitReader, e.g. 2 KiB for the delivery log), then Close the body,
// which drops the connection if more was left unread. The client is safe
// for concurrent use and keeps connections alive between requests.
func NewClient(o ClientOptions) *http.Client {
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	dialer := &net.Dialer{
		Timeout:   timeout,
		KeepAlive: 30 * time.Second,
		Control:   o.control,
	}
	transport := &http.Transport{
		Proxy:                  nil,
		DialContext:            dialer.DialContext,
		ForceAttemptHTTP2:      true,
		TLSClientConfig:        &tls.Config{MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout:    10 * time.Second,
		MaxIdleConns:           100,
		MaxIdleConnsPerHost:    4,
		IdleConnTimeout:        90 * time.Second,
		ExpectContinueTimeout:  time.Second,
		MaxResponseHeaderBytes: maxResponseHeaderBytes,
		DisableCompression:     true,
	}
	return &http.Client{
		Transport: transport,
		Timeout:   timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// control is the dialer's check of the address it is about to connect to:
// address is an IP and port, after name resolution.
func (o ClientOptions) control(network, address string, _ syscall.RawConn) error {
	if network != "tcp4" && network != "tcp6" {
		return fmt.Errorf("webhook: refusing to dial %s", network)
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("webhook: refusing to dial %s: not an IP address and port", address)
	}
	return o.checkAddr(ap.Addr())
}
