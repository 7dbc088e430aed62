package api

import (
	"errors"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/listgate/listgate/pkg/apierror"
)

// FuzzParseQuery: ParseQuery accepts exactly what url.ParseQuery accepts
// and is UTF-8 with no NUL,
// with the same values (the edge parses with the same semantics), and its
// refusal is a VALIDATION_ERROR on "query".
func FuzzParseQuery(f *testing.F) {
	for _, s := range []string{"", "a=1&b=2", "status=current;x=1", "%zz=1", "suburb=%zz", "page=1&;0=1",
		"a=1&&b", "q=a+b%20c", "=", "&", "%", "a=%2", "%E2%82%AC=%F0%9F%8F%A0", "suburb=%c3", "%ff=1", "suburb=a%00b", "%00=1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		got, err := ParseQuery(raw)
		want, wantErr := url.ParseQuery(raw)
		for k, vs := range want { // refused as the text columns would
			for _, s := range append(vs, k) {
				if !utf8.ValidString(s) || strings.Contains(s, "\x00") {
					wantErr = errors.New("not UTF-8, or a NUL")
				}
			}
		}
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("%q: error %v, url.ParseQuery's %v", raw, err, wantErr)
		}
		if err != nil {
			e, ok := err.(*apierror.Error)
			if !ok || e.Code != apierror.CodeValidationError || e.Details["query"] != "malformed query string" {
				t.Fatalf("%q: error %#v", raw, err)
			}
			return
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: %v, url.ParseQuery's %v", raw, got, want)
		}
	})
}
