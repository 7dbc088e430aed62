package cors

import (
	"strings"
	"testing"
)

func TestNormalize(t *testing.T) {
	for in, want := range map[string]string{
		"https://Bayside.Example":       "https://bayside.example",
		"https://bayside.example/":      "https://bayside.example",
		"HTTPS://bayside.example:443":   "https://bayside.example",
		"http://bayside.example:80":     "http://bayside.example",
		"http://localhost:3000":         "http://localhost:3000",
		"https://bayside.example:8443":  "https://bayside.example:8443",
		"http://127.0.0.1:5173":         "http://127.0.0.1:5173",
		"http://[::1]:8080":             "http://[::1]:8080",
		"https://xn--bcher-kva.example": "https://xn--bcher-kva.example",
	} {
		if got, err := Normalize(in); err != nil || got != want {
			t.Errorf("Normalize(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{
		"", "*", "null", "bayside.example", "ftp://bayside.example", "https://", "https://bayside.example/path",
		"https://bayside.example?x=1", "https://bayside.example#f", "https://u:p@bayside.example", "https://*.bayside.example",
		"https://bayside.example:0", "https://bayside.example:65536", "https://bayside.example:", "https://büro.example",
		"https://bayside.example ", "https://bay side.example", "https://bayside.example:08080", "https://bayside.example?",
		"https:bayside.example", "http://0%80000", "http://a%2eb", "http://[fe80::1%25eth0]", strings.Repeat("a", 300),
	} {
		if got, err := Normalize(in); err == nil {
			t.Errorf("Normalize(%q) = %q, accepted", in, got)
		}
	}
}

func TestNormalizeList(t *testing.T) {
	got, err := NormalizeList([]string{"https://a.example", " https://A.example/ ", "http://a.example"})
	if err != nil || len(got) != 2 || got[0] != "https://a.example" || got[1] != "http://a.example" {
		t.Errorf("%q %v", got, err)
	}
	many := make([]string, MaxOrigins+1)
	for i := range many {
		many[i] = "https://a.example:" + string(rune('1'+i%9)) + strings.Repeat("0", i/9+1)
	}
	if _, err := NormalizeList(many); err == nil {
		t.Error("more than MaxOrigins accepted")
	}
	if !Allowed(got, []byte("https://a.example")) || Allowed(got, []byte("https://A.example")) || Allowed(got, nil) {
		t.Error("Allowed")
	}
}

// Whatever Normalize accepts is a fixed point, in the form browsers send.
func FuzzNormalize(f *testing.F) {
	for _, s := range []string{"https://a.example", "http://[::1]:80", "https://a.example:8443/", "http://A:1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		o, err := Normalize(s)
		if err != nil {
			return
		}
		again, err := Normalize(o)
		if err != nil || again != o {
			t.Fatalf("Normalize(%q) = %q, then %q %v", s, o, again, err)
		}
		if strings.Count(o, "/") != 2 || strings.ContainsAny(o, "?#@* ") {
			t.Fatalf("Normalize(%q) = %q: not an origin", s, o)
		}
	})
}
