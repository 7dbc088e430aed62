package rules

import (
	"fmt"
	"net/mail"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/nyaruka/phonenumbers"
)

// DefaultRegion is the region of a phone number written without a country
// code: listings are Australian.
const DefaultRegion = "AU"

// normalizeEmail checks that s (trimmed) is a bare address — local@domain,
// no display name or angle brackets — that net/mail accepts, with a local
// part of at most 64 bytes and a domain that could exist (see validDomain),
// and returns it lower-cased. msg is "" when it is good.
func normalizeEmail(s string) (norm, msg string) {
	if len(s) > MaxEmailBytes {
		return "", fmt.Sprintf("must be at most %d characters", MaxEmailBytes)
	}
	a, err := mail.ParseAddress(s)
	if err != nil || a.Name != "" || a.Address != s {
		return "", "is not an e-mail address"
	}
	at := strings.LastIndexByte(s, '@')
	if at < 1 || at > 64 || !validDomain(s[at+1:]) {
		return "", "is not an e-mail address"
	}
	return strings.ToLower(s), ""
}

// validDomain reports whether d is a plausible internet domain: at most 253
// bytes, two or more dot-separated labels of 1 to 63 bytes made of letters
// (internationalised ones included), digits and inner hyphens, and a
// top-level label of at least two characters that is not all digits. It
// rejects address literals ([192.0.2.1]), single-label hosts (localhost)
// and typos like "example..com" or "example.c".
func validDomain(d string) bool {
	if len(d) == 0 || len(d) > 253 {
		return false
	}
	labels := strings.Split(d, ".")
	if len(labels) < 2 {
		return false
	}
	for _, l := range labels {
		if len(l) == 0 || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
		for _, r := range l {
			if r != '-' && !unicode.IsLetter(r) && !unicode.IsDigit(r) {
				return false
			}
		}
	}
	tld := labels[len(labels)-1]
	if utf8.RuneCountInString(tld) < 2 {
		return false
	}
	return strings.IndexFunc(tld, func(r rune) bool { return !unicode.IsDigit(r) }) >= 0
}

// normalizePhone parses s as a phone number, AU when it has no country
// code, and returns it in E.164 (+61412345678). It must be a valid number
// for its region (right length and prefix), not just digits. msg is "" when
// it is good.
func normalizePhone(s string) (e164, msg string) {
	if utf8.RuneCountInString(s) > MaxPhoneChars {
		return "", fmt.Sprintf("must be at most %d characters", MaxPhoneChars)
	}
	n, err := phonenumbers.Parse(s, DefaultRegion)
	if err != nil || !phonenumbers.IsValidNumber(n) {
		return "", "is not a phone number"
	}
	return phonenumbers.Format(n, phonenumbers.E164), ""
}
