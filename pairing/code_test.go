package pairing

import (
	"bytes"
	"crypto/rand"
	"errors"
	"regexp"
	"strings"
	"testing"
	"testing/iotest"
)

var userCodePattern = regexp.MustCompile(`^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$`)

func TestNewUserCode(t *testing.T) {
	seen := map[string]bool{}
	letters := map[rune]int{}
	for range 2000 {
		c, err := newUserCode(rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		if !userCodePattern.MatchString(c) {
			t.Fatalf("user code %q is not XXXX-XXXX of the alphabet", c)
		}
		if n, err := NormalizeUserCode(c); err != nil || n != c {
			t.Fatalf("NormalizeUserCode(%q) = %q, %v", c, n, err)
		}
		seen[c] = true
		for _, r := range strings.ReplaceAll(c, "-", "") {
			letters[r]++
		}
	}
	if len(seen) < 1999 {
		t.Errorf("%d distinct codes of 2000", len(seen))
	}
	// 16,000 letters over 20: each about 800; a biased draw would be far off.
	for _, r := range UserCodeAlphabet {
		if n := letters[r]; n < 600 || n > 1000 {
			t.Errorf("letter %c drawn %d times of 16000", r, n)
		}
	}
}

func TestNewUserCodeRejectsHighBytes(t *testing.T) {
	// Bytes 240..255 would bias the draw: they are skipped.
	src := append(bytes.Repeat([]byte{255}, 40), bytes.Repeat([]byte{0, 19, 20, 239}, 16)...)
	c, err := newUserCode(bytes.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	if c != "BZBZ-BZBZ" {
		t.Errorf("code %q, want BZBZ-BZBZ", c)
	}
}

func TestCodesFailWithTheirSource(t *testing.T) {
	boom := errors.New("no entropy")
	if _, err := newUserCode(iotest.ErrReader(boom)); !errors.Is(err, boom) {
		t.Errorf("user code: %v", err)
	}
	if _, err := newDeviceCode(iotest.ErrReader(boom)); !errors.Is(err, boom) {
		t.Errorf("device code: %v", err)
	}
}

func TestNewDeviceCode(t *testing.T) {
	a, err := newDeviceCode(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := newDeviceCode(rand.Reader)
	if len(a) != DeviceCodeLen || !wellFormedDeviceCode(a) || a == b {
		t.Errorf("device codes %q, %q", a, b)
	}
}

func TestWellFormedDeviceCode(t *testing.T) {
	good := strings.Repeat("aZ0-_", 8) + "abc"
	for name, tc := range map[string]struct {
		code string
		want bool
	}{
		"base64url":  {good, true},
		"short":      {good[:42], false},
		"long":       {good + "a", false},
		"padding":    {good[:42] + "=", false},
		"std base64": {good[:42] + "+", false},
		"empty":      {"", false},
	} {
		t.Run(name, func(t *testing.T) {
			if got := wellFormedDeviceCode(tc.code); got != tc.want {
				t.Errorf("wellFormedDeviceCode(%q) = %v", tc.code, got)
			}
		})
	}
}

func TestNormalizeUserCode(t *testing.T) {
	for name, tc := range map[string]struct {
		in, want string
	}{
		"canonical":         {"BCDF-GHJK", "BCDF-GHJK"},
		"lower case":        {"bcdf-ghjk", "BCDF-GHJK"},
		"mixed case":        {"bCdF-gHjK", "BCDF-GHJK"},
		"no dash":           {"bcdfghjk", "BCDF-GHJK"},
		"space for dash":    {"BCDF GHJK", "BCDF-GHJK"},
		"spaces around":     {"  bcdf-ghjk\n", "BCDF-GHJK"},
		"empty":             {"", ""},
		"seven letters":     {"BCDF-GHJ", ""},
		"nine letters":      {"BCDF-GHJKL", ""},
		"vowel":             {"BCDA-GHJK", ""},
		"Y is not in it":    {"BCDY-GHJK", ""},
		"digit":             {"BCD1-GHJK", ""},
		"dash misplaced":    {"BCD-FGHJK", ""},
		"two dashes":        {"BCDF--GHJK", ""},
		"dash and space":    {"BCDF- GHJK", ""},
		"trailing dash":     {"BCDFGHJK-", ""},
		"non-ASCII":         {"BCDF-GHJΚ", ""}, // Greek capital kappa
		"fullwidth letters": {"ＢＣＤＦ-ＧＨＪＫ", ""},
		"NUL":               {"BCDF-GHJ\x00", ""},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := NormalizeUserCode(tc.in)
			if tc.want == "" {
				if !errors.Is(err, ErrMalformedUserCode) {
					t.Errorf("NormalizeUserCode(%q) = %q, %v; want ErrMalformedUserCode", tc.in, got, err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("NormalizeUserCode(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
			}
		})
	}
}

func TestNormalizeUserCodeAllocs(t *testing.T) {
	if n := testing.AllocsPerRun(100, func() { NormalizeUserCode("bcdf-ghjA") }); n != 0 {
		t.Errorf("a bad code allocates %.0f times", n)
	}
}

// FuzzNormalizeUserCode: anything typed is either refused or becomes a
// canonical code that normalises to itself and keeps the typed letters.
func FuzzNormalizeUserCode(f *testing.F) {
	for _, s := range []string{"BCDF-GHJK", "bcdfghjk", " bcdf ghjk ", "BCDF--GHJK", "BCDA-GHJK", "ＢＣＤＦ-ＧＨＪＫ", "", "-", "BCDF-GHJK\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got, err := NormalizeUserCode(in)
		if err != nil {
			if !errors.Is(err, ErrMalformedUserCode) || got != "" {
				t.Fatalf("NormalizeUserCode(%q) = %q, %v", in, got, err)
			}
			return
		}
		if !userCodePattern.MatchString(got) {
			t.Fatalf("NormalizeUserCode(%q) = %q: not canonical", in, got)
		}
		if again, err := NormalizeUserCode(got); err != nil || again != got {
			t.Fatalf("not idempotent: %q -> %q -> %q, %v", in, got, again, err)
		}
		typed := strings.NewReplacer("-", "", " ", "").Replace(strings.ToUpper(strings.TrimSpace(in)))
		if typed != strings.ReplaceAll(got, "-", "") {
			t.Fatalf("NormalizeUserCode(%q) = %q: letters changed", in, got)
		}
		if HashCode(got) != HashCode(strings.ToUpper(got)) {
			t.Fatal("hash depends on case")
		}
	})
}

func TestUserGroupHash(t *testing.T) {
	a, b, c := userCodeGroupHash("BCDF-GHJK"), userCodeGroupHash("BCDF-XZXZ"), userCodeGroupHash("BCDG-GHJK")
	if a != b || a == c || a == HashCode("BCDF-GHJK") {
		t.Error("the group hash is not the hash of the first group alone")
	}
}
