package webhook

import (
	"fmt"
	"net/netip"
	"strings"
)

// AddressError reports an address the client refuses to connect to, or
// CheckURL refuses in a URL: anything but a public internet address, unless
// ClientOptions allow its kind. Find it with errors.As in the error of a
// request (it is wrapped in *url.Error and *net.OpError) or of CheckURL.
type AddressError struct {
	// Addr is the refused address, as dialled or written.
	Addr netip.Addr
	// Kind says what it is, e.g. "loopback" or "IPv4-mapped private
	// (RFC 1918)".
	Kind string
}

// Error says which address was refused and why, e.g. "webhook: 127.0.0.1
// is a loopback address, not a public internet address".
func (e *AddressError) Error() string {
	return fmt.Sprintf("webhook: %s is %s address, not a public internet address", e.Addr, withArticle(e.Kind))
}

// withArticle prefixes a kind with "a" or "an".
func withArticle(kind string) string {
	if kind != "" && strings.ContainsRune("aeiouAEIOU", rune(kind[0])) && !strings.HasPrefix(kind, "uni") {
		return "an " + kind
	}
	return "a " + kind
}

// addrClass is what ClientOptions must allow for an address to be used.
type addrClass int

const (
	classPublic   addrClass = iota // always allowed
	classLoopback                  // allowed by AllowLoopback
	classPrivate                   // allowed by AllowPrivate
	classNever                     // never allowed
)

// addrRule classifies the addresses of one prefix.
type addrRule struct {
	prefix netip.Prefix
	class  addrClass
	kind   string
}

// v4Rules are the IPv4 special-purpose blocks (RFC 6890 and its updates)
// that are not public unicast. The rest of IPv4 is public.
var v4Rules = []addrRule{
	{netip.MustParsePrefix("0.0.0.0/8"), classNever, "unspecified (0.0.0.0/8)"},
	{netip.MustParsePrefix("127.0.0.0/8"), classLoopback, "loopback"},
	{netip.MustParsePrefix("10.0.0.0/8"), classPrivate, "private (RFC 1918)"},
	{netip.MustParsePrefix("172.16.0.0/12"), classPrivate, "private (RFC 1918)"},
	{netip.MustParsePrefix("192.168.0.0/16"), classPrivate, "private (RFC 1918)"},
	{netip.MustParsePrefix("100.64.0.0/10"), classPrivate, "shared (carrier-grade NAT, 100.64.0.0/10)"},
	{netip.MustParsePrefix("169.254.0.0/16"), classNever, "link-local (169.254.0.0/16, where cloud metadata services answer)"},
	{netip.MustParsePrefix("192.0.0.0/24"), classNever, "IETF protocol assignment (192.0.0.0/24)"},
	{netip.MustParsePrefix("192.0.2.0/24"), classNever, "documentation (192.0.2.0/24)"},
	{netip.MustParsePrefix("198.51.100.0/24"), classNever, "documentation (198.51.100.0/24)"},
	{netip.MustParsePrefix("203.0.113.0/24"), classNever, "documentation (203.0.113.0/24)"},
	{netip.MustParsePrefix("192.88.99.0/24"), classNever, "6to4 relay anycast (192.88.99.0/24)"},
	{netip.MustParsePrefix("198.18.0.0/15"), classNever, "benchmarking (198.18.0.0/15)"},
	{netip.MustParsePrefix("224.0.0.0/4"), classNever, "multicast"},
	{netip.MustParsePrefix("240.0.0.0/4"), classNever, "reserved (240.0.0.0/4, with broadcast)"},
}

// v6Rules are the IPv6 blocks inside global unicast (2000::/3) that are not
// public, and the blocks outside it that have a meaning; the rest of the
// space outside 2000::/3 is unassigned and refused. IPv4-mapped and NAT64
// addresses are judged by the IPv4 address they carry (see classify).
var v6Rules = []addrRule{
	{netip.MustParsePrefix("::/128"), classNever, "unspecified"},
	{netip.MustParsePrefix("::1/128"), classLoopback, "loopback"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), classNever, "local-use NAT64 (64:ff9b:1::/48)"},
	{netip.MustParsePrefix("100::/64"), classNever, "discard-only (100::/64)"},
	{netip.MustParsePrefix("fc00::/7"), classPrivate, "unique local (fc00::/7)"},
	{netip.MustParsePrefix("fec0::/10"), classPrivate, "site-local (fec0::/10)"},
	{netip.MustParsePrefix("fe80::/10"), classNever, "link-local (fe80::/10)"},
	{netip.MustParsePrefix("ff00::/8"), classNever, "multicast"},
	{netip.MustParsePrefix("2001::/32"), classNever, "Teredo (2001::/32)"},
	{netip.MustParsePrefix("2001:db8::/32"), classNever, "documentation (2001:db8::/32)"},
	{netip.MustParsePrefix("3fff::/20"), classNever, "documentation (3fff::/20)"},
	{netip.MustParsePrefix("2002::/16"), classNever, "6to4 (2002::/16)"},
}

var (
	globalUnicast6 = netip.MustParsePrefix("2000::/3")
	nat64          = netip.MustParsePrefix("64:ff9b::/96")
)

// classify says what an address is; kind is empty for a public one.
func classify(a netip.Addr) (class addrClass, kind string) {
	if !a.IsValid() {
		return classNever, "invalid"
	}
	a = a.WithZone("")
	if a.Is4In6() {
		class, kind = classify(a.Unmap())
		return class, prefixKind("IPv4-mapped ", kind)
	}
	if nat64.Contains(a) {
		b := a.As16()
		class, kind = classify(netip.AddrFrom4([4]byte(b[12:])))
		return class, prefixKind("NAT64 ", kind)
	}
	rules := v4Rules
	if a.Is6() {
		rules = v6Rules
	}
	for _, r := range rules {
		if r.prefix.Contains(a) {
			return r.class, r.kind
		}
	}
	if a.Is6() && !globalUnicast6.Contains(a) {
		return classNever, "reserved IPv6"
	}
	return classPublic, ""
}

// prefixKind prefixes a non-empty kind.
func prefixKind(prefix, kind string) string {
	if kind == "" {
		return ""
	}
	return prefix + kind
}

// checkAddr returns an *AddressError unless o allows connecting to a.
func (o ClientOptions) checkAddr(a netip.Addr) error {
	class, kind := classify(a)
	switch {
	case class == classPublic,
		class == classLoopback && o.AllowLoopback,
		class == classPrivate && o.AllowPrivate:
		return nil
	}
	return &AddressError{Addr: a, Kind: kind}
}
