package apikey

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"hash/crc32"
	"io"
	"math"
	"regexp"
	"strings"
	"testing"
)

// Keys whose checksums were computed independently (Python zlib.crc32 and a
// hand-written base62 encoder), so these tests do not only check the package
// against itself.
const (
	keyZeros   = "lgk_0000000000000000000000000000002C8GjS"
	keyAlpha   = "lgk_abcdefghijABCDEFGHIJ01234567892C2O59"
	keyZs      = "lgk_zzzzzzzzzzzzzzzzzzzzzzzzzzzzzz4IlJEz"
	keyMixed   = "lgk_Q7hN2xLk9pWv4RtY8mZc1bFs6GdJ3e2b8vYR"
	randomPart = len(Prefix) + RandomLen // index where the checksum starts
)

var goodKeys = []string{keyZeros, keyAlpha, keyZs, keyMixed}

// mustGenerate returns a new key or fails the test.
func mustGenerate(tb testing.TB) string {
	tb.Helper()
	k, err := Generate()
	if err != nil {
		tb.Fatalf("Generate: %v", err)
	}
	return k
}

func TestCheck(t *testing.T) {
	tests := []struct {
		name string
		key  string
		want error
	}{
		{"zeros", keyZeros, nil},
		{"alphabet", keyAlpha, nil},
		{"all z", keyZs, nil},
		{"mixed", keyMixed, nil},
		{"empty", "", ErrFormat},
		{"prefix only", Prefix, ErrFormat},
		{"39 chars", keyMixed[:39], ErrFormat},
		{"41 chars", keyMixed + "0", ErrFormat},
		{"leading space", " " + keyMixed, ErrFormat},
		{"trailing newline", keyMixed + "\n", ErrFormat},
		{"bearer scheme kept", "Bearer " + keyMixed, ErrFormat},
		{"upper-case prefix", "LGK_" + keyMixed[4:], ErrFormat},
		{"wrong prefix letter", "lgx_" + keyMixed[4:], ErrFormat},
		{"prefix without underscore", "lgk-" + keyMixed[4:], ErrFormat},
		{"other product prefix", "ghp_" + keyMixed[4:], ErrFormat},
		{"dash in random part", keyMixed[:10] + "-" + keyMixed[11:], ErrFormat},
		{"underscore in checksum", keyMixed[:38] + "_" + keyMixed[39:], ErrFormat},
		{"space inside", keyMixed[:20] + " " + keyMixed[21:], ErrFormat},
		{"NUL byte", keyMixed[:20] + "\x00" + keyMixed[21:], ErrFormat},
		{"byte 0xff", keyMixed[:20] + "\xff" + keyMixed[21:], ErrFormat},
		{"non-ASCII same byte length", keyMixed[:20] + "é" + keyMixed[22:], ErrFormat},
		{"non-ASCII 40 runes", keyMixed[:20] + "é" + keyMixed[21:], ErrFormat},
		{"fullwidth digit", keyMixed[:20] + "\uff10" + keyMixed[23:], ErrFormat},
		{"checksum of other key", keyMixed[:randomPart] + keyZeros[randomPart:], ErrChecksum},
		{"checksum all zeros", keyMixed[:randomPart] + "000000", ErrChecksum},
		{"checksum beyond uint32", keyMixed[:randomPart] + "zzzzzz", ErrChecksum},
		{"adjacent swap", keyMixed[:10] + keyMixed[11:12] + keyMixed[10:11] + keyMixed[12:], ErrChecksum},
		{"case flipped", keyMixed[:4] + strings.ToLower(keyMixed[4:5]) + keyMixed[5:], ErrChecksum},
		{"checksum reversed", keyMixed[:randomPart] + "RYv8b2", ErrChecksum},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Check(tt.key)
			if err != tt.want { // sentinels are returned unwrapped
				t.Errorf("Check(%q) = %v, want %v", tt.key, err, tt.want)
			}
			if got, want := ValidBytes([]byte(tt.key)), tt.want == nil; got != want {
				t.Errorf("ValidBytes(%q) = %v, want %v", tt.key, got, want)
			}
		})
	}
}

// TestSingleSubstitution replaces every character after the prefix by every
// other base62 digit: all such keys must fail the checksum. (CRC32 detects
// every single-byte change, and the checksum encoding is one-to-one.)
func TestSingleSubstitution(t *testing.T) {
	keys := append([]string{}, goodKeys...)
	for range 4 {
		keys = append(keys, mustGenerate(t))
	}
	for _, key := range keys {
		b := []byte(key)
		for i := len(Prefix); i < Len; i++ {
			orig := b[i]
			for j := 0; j < len(alphabet); j++ {
				if alphabet[j] == orig {
					continue
				}
				b[i] = alphabet[j]
				if err := Check(string(b)); err != ErrChecksum {
					t.Fatalf("key %q with position %d set to %q: Check = %v, want ErrChecksum", key, i, alphabet[j], err)
				}
				if ValidBytes(b) {
					t.Fatalf("key %q with position %d set to %q: ValidBytes = true", key, i, alphabet[j])
				}
			}
			b[i] = orig
		}
	}
}

func TestChecksumMatchesStdlib(t *testing.T) {
	inputs := []string{"", "a", "123456789", keyMixed[4:34], strings.Repeat("\xff", 100)}
	for _, in := range inputs {
		if got, want := checksum(in), crc32.ChecksumIEEE([]byte(in)); got != want {
			t.Errorf("checksum(%q) = %#x, want %#x", in, got, want)
		}
		if got, want := checksum([]byte(in)), crc32.ChecksumIEEE([]byte(in)); got != want {
			t.Errorf("checksum([]byte(%q)) = %#x, want %#x", in, got, want)
		}
	}
}

func TestEncodeChecksum(t *testing.T) {
	tests := []struct {
		name string
		sum  uint32
		want string
	}{
		{"zero pads with 0", 0, "000000"},
		{"one", 1, "000001"},
		{"61 is z", 61, "00000z"},
		{"62 carries", 62, "000010"},
		{"max uint32", math.MaxUint32, "4gfFC3"},
		{"crc of zeros key", 0x77e5db82, "2C8GjS"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := encodeChecksum(tt.sum); string(got[:]) != tt.want {
				t.Errorf("encodeChecksum(%#x) = %q, want %q", tt.sum, got, tt.want)
			}
		})
	}
}

func TestGenerate(t *testing.T) {
	const n = 10000
	seen := make(map[string]bool, n)
	var counts [256]int
	pattern := regexp.MustCompile(`^` + Pattern + `$`)
	for range n {
		k := mustGenerate(t)
		if seen[k] {
			t.Fatalf("duplicate key after %d keys", len(seen))
		}
		seen[k] = true
		if len(k) != Len || !strings.HasPrefix(k, Prefix) || !pattern.MatchString(k) {
			t.Fatalf("Generate() = %q: wrong shape", k)
		}
		if err := Check(k); err != nil {
			t.Fatalf("Check(Generate()) = %v", err)
		}
		for i := len(Prefix); i < randomPart; i++ {
			counts[k[i]]++
		}
	}
	// Chi-square of the random characters against the uniform distribution
	// over 62 digits (61 degrees of freedom: mean 61, sd 11). The bound of
	// 150 is beyond p = 1e-8 for a fair source yet catches gross bias such as
	// a plain b%62 over 256 (chi-square in the thousands here).
	total := float64(n * RandomLen)
	expected := total / float64(len(alphabet))
	var chi2 float64
	for i := 0; i < len(alphabet); i++ {
		d := float64(counts[alphabet[i]]) - expected
		chi2 += d * d / expected
	}
	t.Logf("chi-square over %d characters: %.1f (61 df)", int(total), chi2)
	if chi2 > 150 {
		t.Errorf("random characters not uniform: chi-square %.1f > 150", chi2)
	}
}

// TestGenerateRejectsHighBytes feeds a source whose first bytes are all in the
// rejected range 248..255 and checks they are skipped, not folded.
func TestGenerateRejectsHighBytes(t *testing.T) {
	src := bytes.Repeat([]byte{248, 249, 255}, 22) // 66 rejected bytes: more than one read
	for i := range 64 {
		src = append(src, byte(i)) // values 0..63 → digits '0'..'z','0','1'
	}
	k, err := generate(bytes.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := k[len(Prefix):randomPart], alphabet[:RandomLen]; got != want {
		t.Errorf("random part = %q, want %q", got, want)
	}
	if err := Check(k); err != nil {
		t.Errorf("Check = %v", err)
	}
}

func TestGenerateReaderError(t *testing.T) {
	k, err := generate(bytes.NewReader(make([]byte, 10)))
	if !errors.Is(err, io.ErrUnexpectedEOF) || k != "" {
		t.Errorf("generate(short reader) = %q, %v; want \"\", ErrUnexpectedEOF", k, err)
	}
}

func TestHash(t *testing.T) {
	tests := []struct {
		key, want string // want: SHA-256 hex computed independently
	}{
		{keyZeros, "3f7f37255d92cd48353fa97bffbab18141e82f29fbbf9cbb071e775b498e9d27"},
		{keyMixed, "3640f5e09eb21a772f5819defed967152ba7e2efa124ccc099d0362a86c35bc3"},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			h := Hash(tt.key)
			if got := hex.EncodeToString(h[:]); got != tt.want {
				t.Errorf("Hash = %s, want %s", got, tt.want)
			}
			if HashBytes([]byte(tt.key)) != h {
				t.Error("HashBytes differs from Hash")
			}
		})
	}
	if Hash(keyZeros) == Hash(keyMixed) {
		t.Error("different keys hash equal")
	}
	if Hash("") != sha256.Sum256(nil) {
		t.Error("Hash(\"\") is not SHA-256 of nothing")
	}
}

func TestHotPathAllocs(t *testing.T) {
	good := []byte(keyMixed)
	bad := []byte(keyMixed[:randomPart] + "000000")
	tests := []struct {
		name string
		f    func()
	}{
		{"ValidBytes good", func() { ValidBytes(good) }},
		{"ValidBytes bad checksum", func() { ValidBytes(bad) }},
		{"Check", func() { _ = Check(keyMixed) }},
		{"HashBytes", func() { _ = HashBytes(good) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if n := testing.AllocsPerRun(100, tt.f); n != 0 {
				t.Errorf("%v allocations per run, want 0", n)
			}
		})
	}
}

func BenchmarkValidBytes(b *testing.B) {
	k := []byte(keyMixed)
	b.ReportAllocs()
	for b.Loop() {
		if !ValidBytes(k) {
			b.Fatal("invalid")
		}
	}
}

func BenchmarkHashBytes(b *testing.B) {
	k := []byte(keyMixed)
	b.ReportAllocs()
	for b.Loop() {
		_ = HashBytes(k)
	}
}

func BenchmarkGenerate(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Generate(); err != nil {
			b.Fatal(err)
		}
	}
}
