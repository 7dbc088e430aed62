package mail_test

import (
	"testing"

	"github.com/listgate/listgate/pkg/mail"
)

func TestCheckAddress(t *testing.T) {
	for _, tc := range []struct {
		name, addr string
		ok         bool
	}{
		{"plain", "zoe@example.com", true},
		{"atext", "o'neil+leads@example.com", true},
		{"internationalised domain", "anna@bücher.example", false},
		{"internationalised local part", "jösé@example.com", false},
		{"quoted local part", `"zoe smith"@example.com`, false},
		{"domain literal", "zoe@[192.0.2.1]", false},
		{"display name", "Zoe <zoe@example.com>", false},
		{"line break", "zoe@example.com\r\nBcc: x@example.com", false},
		{"empty", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := mail.CheckAddress(tc.addr); (err == nil) != tc.ok {
				t.Errorf("CheckAddress(%q) = %v, want ok %v", tc.addr, err, tc.ok)
			}
		})
	}
}
