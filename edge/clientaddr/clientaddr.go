// Package clientaddr says which client addresses the edge's per-address
// limits count together: an IPv4 address alone, an IPv6 address with the
// rest of its /64 (the prefix one subscriber, host or virtual machine is
// usually given whole, so that stepping through it gains nothing), and an
// IPv4-mapped IPv6 address as the IPv4 address it maps. The per-client
// limit of listing views and the per-address share of connections both
// use it.
package clientaddr

import "net/netip"

// AppendGroup appends the bytes that name a's group to dst and returns the
// extended slice: the 4 bytes of an IPv4 address (mapped or not), the
// first 8 bytes (the /64) of an IPv6 one. The two lengths keep the kinds
// apart. The zero Addr is the group of 16 zero bytes of an IPv6 address
// cut to 8. It does not allocate when dst has room for 8 bytes.
func AppendGroup(dst []byte, a netip.Addr) []byte {
	b := a.As16()
	if a.Is4() || a.Is4In6() {
		return append(dst, b[12:]...)
	}
	return append(dst, b[:8]...)
}
