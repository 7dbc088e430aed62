package apikey

import (
	"hash/crc32"
	"strings"
	"testing"
)

// FuzzCheck checks that Check never panics, that Check and ValidBytes agree,
// and that anything accepted has the key's shape and a checksum matching the
// standard library's CRC32 of its random part.
func FuzzCheck(f *testing.F) {
	for _, k := range goodKeys {
		f.Add(k)
		f.Add(k[:39])
		f.Add(k + "0")
		f.Add(k[:randomPart] + "000000")
		f.Add(strings.ToUpper(k))
	}
	f.Add("")
	f.Add(Prefix)
	f.Add("lgk_" + strings.Repeat("é", 18))
	f.Fuzz(func(t *testing.T, s string) {
		err := Check(s)
		if ok := ValidBytes([]byte(s)); ok != (err == nil) {
			t.Fatalf("Check(%q) = %v but ValidBytes = %v", s, err, ok)
		}
		if err != nil {
			if err != ErrFormat && err != ErrChecksum {
				t.Fatalf("Check(%q) = %v: not a sentinel", s, err)
			}
			return
		}
		if len(s) != Len || !strings.HasPrefix(s, Prefix) {
			t.Fatalf("accepted %q: wrong length or prefix", s)
		}
		for i := len(Prefix); i < Len; i++ {
			if !strings.ContainsRune(alphabet, rune(s[i])) {
				t.Fatalf("accepted %q: byte %d not base62", s, i)
			}
		}
		sum := encodeChecksum(crc32.ChecksumIEEE([]byte(s[len(Prefix):randomPart])))
		if s[randomPart:] != string(sum[:]) {
			t.Fatalf("accepted %q: checksum %q, want %q", s, s[randomPart:], sum)
		}
	})
}

// FuzzParseScopes checks that parsing never panics, that ParseScopes and
// ParseScopesBytes agree, and that an accepted set is non-empty, holds only
// known scopes and round-trips through String.
func FuzzParseScopes(f *testing.F) {
	for _, s := range []string{
		"", ",", " ", "listings:read", "listings:read,leads:write",
		" stats:read , agents:read ", "agents:read,agents:read", "leads:write,",
		"LISTINGS:READ", All.String(), "a,,b", "\xff",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, list string) {
		got, err := ParseScopes(list)
		gotB, errB := ParseScopesBytes([]byte(list))
		if got != gotB || (err == nil) != (errB == nil) {
			t.Fatalf("ParseScopes(%q) = %v, %v but ParseScopesBytes = %v, %v", list, got, err, gotB, errB)
		}
		if err != nil {
			if got != 0 {
				t.Fatalf("ParseScopes(%q) returned %v with error %v", list, got, err)
			}
			return
		}
		if got == 0 || got&^All != 0 {
			t.Fatalf("ParseScopes(%q) = %#x: empty or unknown bits", list, uint8(got))
		}
		again, err := ParseScopes(got.String())
		if err != nil || again != got {
			t.Fatalf("round trip of %q: ParseScopes(%q) = %v, %v", list, got.String(), again, err)
		}
	})
}
