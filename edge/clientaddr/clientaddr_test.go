package clientaddr

import (
	"bytes"
	"net/netip"
	"testing"
)

func TestAppendGroup(t *testing.T) {
	group := func(s string) []byte { return AppendGroup(nil, netip.MustParseAddr(s)) }
	for _, tc := range []struct {
		a, b string
		same bool
	}{
		{"192.0.2.1", "192.0.2.1", true},
		{"192.0.2.1", "192.0.2.2", false},
		{"192.0.2.1", "::ffff:192.0.2.1", true},
		{"2001:db8:1:2::1", "2001:db8:1:2:ffff:ffff:ffff:ffff", true},
		{"2001:db8:1:2::1", "2001:db8:1:3::1", false},
		// An IPv6 /64 whose bytes start as an IPv4 address's do is
		// another group.
		{"::1", "0.0.0.0", false},
		{"c000:0201::", "192.0.2.1", false},
	} {
		if got := bytes.Equal(group(tc.a), group(tc.b)); got != tc.same {
			t.Errorf("%s and %s in one group: %v, want %v", tc.a, tc.b, got, tc.same)
		}
	}
	var buf [8]byte
	a := netip.MustParseAddr("2001:db8::1")
	if n := testing.AllocsPerRun(100, func() { AppendGroup(buf[:0], a) }); n != 0 {
		t.Errorf("AppendGroup allocates %v times", n)
	}
}
