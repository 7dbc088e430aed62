package target

import (
	"errors"
	"net/url"
	"reflect"
	"sort"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCanonicalQuery(t *testing.T) {
	for name, tc := range map[string]struct{ in, want string }{
		"empty":          {"", ""},
		"one":            {"status=sold", "status=sold"},
		"sorted":         {"type=rental&min_price=5&status=current", "min_price=5&status=current&type=rental"},
		"defaults gone":  {"page=1&per_page=20&sort=price", "sort=price"},
		"page 2 stays":   {"page=2&per_page=20", "page=2"},
		"empty params":   {"&&a=1&", "a=1"},
		"same name":      {"b=2&a=2&a=1", "a=1&a=2&b=2"},
		"spaces":         {"q=main+rd&suburb=St%20Kilda", "q=main+rd&suburb=St+Kilda"},
		"escapes folded": {"%73uburb=%52ichmond", "suburb=Richmond"},
		"escaped amp":    {"q=a%26b%3Dc", "q=a%26b%3Dc"},
		"no value":       {"status", "status="},
		"encoded page 1": {"pa%67e=1", ""},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := AppendCanonicalQuery(nil, []byte(tc.in))
			if err != nil || string(got) != tc.want {
				t.Errorf("%q → %q %v, want %q", tc.in, got, err, tc.want)
			}
		})
	}
	for name, tc := range map[string]struct {
		in   string
		want error
	}{
		"semicolon":      {"status=current;x=1", ErrMalformedQuery},
		"semicolon name": {strings.Repeat(";0=1&", 16) + "status=withdrawn&per_page=12", ErrMalformedQuery},
		"bad escape":     {"suburb=%zz", ErrMalformedQuery},
		"cut escape":     {"suburb=ab%2", ErrMalformedQuery},
		"not UTF-8":      {"suburb=%c3", ErrMalformedQuery},
		"too many":       {strings.Repeat("a=1&", MaxParams+1), ErrTooManyParams},
		// The origin refuses a repeated parameter: dropping the default
		// would have made it one.
		"page 1 and 2":      {"page=1&page=2", ErrRepeatedPage},
		"page 1 twice":      {"page=1&sort=price&page=1", ErrRepeatedPage},
		"per_page 20 and 5": {"per_page=5&per_page=20", ErrRepeatedPerPage},
	} {
		t.Run(name, func(t *testing.T) {
			if got, err := AppendCanonicalQuery(nil, []byte(tc.in)); err != tc.want {
				t.Errorf("%q → %q %v, want %v", tc.in, got, err, tc.want)
			}
		})
	}
	// Every parameter counts: the 17th and later are keyed like the first.
	long := strings.Repeat("a=1&", 20) + "status=withdrawn"
	if got, _ := AppendCanonicalQuery(nil, []byte(long)); !strings.Contains(string(got), "status=withdrawn") {
		t.Errorf("a long query lost its last parameter: %q", got)
	}
	buf := make([]byte, 0, 256)
	if n := testing.AllocsPerRun(100, func() {
		buf, _ = AppendCanonicalQuery(buf[:0], []byte("type=rental&min_price=5&status=current&q=st+kilda%21"))
	}); n != 0 {
		t.Errorf("%v allocations", n)
	}
}

// The edge keys and forwards what it reads of a query; the origin reads
// the forwarded query with net/url.ParseQuery. They must agree: a query the
// origin cannot parse the edge refuses, and the canonical form the edge
// forwards parses, at the origin, to the raw query's parameters less the
// defaults.
func FuzzCanonicalQuery(f *testing.F) {
	for _, s := range []string{"", "a=1", "type=rental&min_price=5&page=1", "&&", "q=main+rd&sort=price&per_page=20",
		";0=1&status=withdrawn", "%zz=1", "q=%e2%82%ac+x", "=x&x", "page=%31", "suburb=a%00", "%00=1", "page=1&page=2", "per_page=20&per_page=20"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		once, err := AppendCanonicalQuery(nil, []byte(raw))
		origin, oerr := url.ParseQuery(raw)
		for k, vs := range origin { // the origin refuses what is not UTF-8 or holds a NUL (origin/api.ParseQuery)
			if all := k + strings.Join(vs, ""); !utf8.ValidString(k) || !utf8.ValidString(strings.Join(vs, "")) || strings.IndexByte(all, 0) >= 0 {
				oerr = errors.New("not UTF-8, or a NUL")
			}
		}
		if oerr != nil {
			if err == nil {
				t.Fatalf("%q: the origin refuses it (%v), the edge keyed it as %q", raw, oerr, once)
			}
			return
		}
		if err != nil {
			repeated := err == ErrRepeatedPage && len(origin["page"]) > 1 || err == ErrRepeatedPerPage && len(origin["per_page"]) > 1
			if err != ErrTooManyParams && !repeated {
				t.Fatalf("%q: the origin reads it, the edge refused it: %v", raw, err)
			}
			return
		}
		for _, d := range [][2]string{{"page", "1"}, {"per_page", "20"}} {
			vs := origin[d[0]][:0:0]
			for _, v := range origin[d[0]] {
				if v != d[1] {
					vs = append(vs, v)
				}
			}
			if len(vs) == 0 {
				delete(origin, d[0])
			} else {
				origin[d[0]] = vs
			}
		}
		forwarded, ferr := url.ParseQuery(string(once))
		if ferr != nil {
			t.Fatalf("%q → %q, which the origin refuses: %v", raw, once, ferr)
		}
		for k := range origin {
			sort.Strings(origin[k])
		}
		if !reflect.DeepEqual(forwarded, origin) && !(len(forwarded) == 0 && len(origin) == 0) {
			t.Fatalf("%q: the origin reads %v, but the edge forwards %q, read as %v", raw, origin, once, forwarded)
		}
		twice, err := AppendCanonicalQuery(nil, once)
		if err != nil || string(once) != string(twice) {
			t.Fatalf("not idempotent: %q → %q → %q (%v)", raw, once, twice, err)
		}
	})
}

// A query plainQuery passes is copied as it is: it must be exactly what
// the full canonicalisation gives it.
func FuzzPlainQuery(f *testing.F) {
	for _, s := range []string{"", "a=1", "page=2", "page=3&per_page=12", "a=1&a=1", "a=2&a=1", "b=1&a=1", "a=", "=a",
		"a", "a=1&", "&a=1", "a=1&&b=2", "page=1", "per_page=20&q=x", "a=b=c", "a=%41", "a=+", "a=1;b=2", "A=1&a=1", "a~=.-_"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		if !plainQuery([]byte(raw)) {
			return
		}
		want, err := appendCanonicalQuery(nil, []byte(raw))
		if err != nil || string(want) != raw {
			t.Fatalf("plainQuery(%q), but its canonical form is %q (%v)", raw, want, err)
		}
	})
}

// Plain queries take the fast path: the common shapes are plain, and a
// query that is not its own canonical form is not.
func TestPlainQuery(t *testing.T) {
	for raw, want := range map[string]bool{
		"page=2": true, "page=3&per_page=12": true, "per_page=12&q=garden": true, "a=&b=": true, "=x": true,
		"": true, "per_page=12&page=3": false, "page=1": false, "per_page=20": false, "q=st+kilda": false,
		"q=%41": false, "a": false, "a=1&": false, "&a=1": false, "a=1&&b=1": false, "a=b=c": false, "a=1;b=1": false,
		"a=2&a=1": false, "a=1&a=1": true, strings.Repeat("a=1&", MaxParams) + "a=1": false,
	} {
		if got := plainQuery([]byte(raw)); got != want {
			t.Errorf("plainQuery(%q) = %v, want %v", raw, got, want)
		}
	}
}
